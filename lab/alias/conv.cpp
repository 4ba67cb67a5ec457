// lab/alias/conv.cpp — one build of the convolution kernel. Compiled four times by
// lab/cmake/alias.cmake with ALIAS_CONV_FN (the function's name), ALIAS_CONV_RESTRICT (0 or
// 1) and its own -O level; conv_builds.cpp lists the four.
#include <cstddef>

#include "kernels/alias_conv.hpp"

#if !defined(ALIAS_CONV_FN) || !defined(ALIAS_CONV_RESTRICT)
#error "lab/alias/conv.cpp is compiled by lab/cmake/alias.cmake with ALIAS_CONV_FN and ALIAS_CONV_RESTRICT"
#endif

namespace lab::alias {

void ALIAS_CONV_FN(const float* in, float* out, std::size_t n) {
#if ALIAS_CONV_RESTRICT
    conv5_restrict(in, out, n);
#else
    conv5(in, out, n);
#endif
}

}  // namespace lab::alias
