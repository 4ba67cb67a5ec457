// src/fatal.cpp — see fatal.hpp.
#include "fatal.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace physmem::detail {

void fatal(const char* format, ...) noexcept {
    std::fputs("physmem: fatal: ", stderr);
    va_list args;
    va_start(args, format);
    std::vfprintf(stderr, format, args);
    va_end(args);
    std::fputc('\n', stderr);
    std::abort();
}

}  // namespace physmem::detail
