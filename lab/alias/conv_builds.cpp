// lab/alias/conv_builds.cpp — the table of the four conv builds (flags from alias.cmake).
#include "builds.hpp"

namespace lab::alias {

void conv_o2(const float*, float*, std::size_t);
void conv_o2_restrict(const float*, float*, std::size_t);
void conv_o3(const float*, float*, std::size_t);
void conv_o3_restrict(const float*, float*, std::size_t);

const ConvBuild* conv_builds() {
    static const ConvBuild builds[kConvBuildCount] = {
        {"o2", ALIAS_FLAGS_O2, false, conv_o2},
        {"o2-restrict", ALIAS_FLAGS_O2, true, conv_o2_restrict},
        {"o3", ALIAS_FLAGS_O3, false, conv_o3},
        {"o3-restrict", ALIAS_FLAGS_O3, true, conv_o3_restrict},
    };
    return builds;
}

}  // namespace lab::alias
