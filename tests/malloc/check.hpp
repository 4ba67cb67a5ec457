// tests/malloc/check.hpp — CHECK for the plain programs run under LD_PRELOAD (no test
// framework: they must not bring an allocator of their own): a failed check is printed
// with its place and counted in `failures`; main returns non-zero when any failed.
#pragma once

#include <cstdio>

inline int failures = 0;

#define CHECK(cond)                                                                       \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            ++failures;                                                                   \
        }                                                                                 \
    } while (0)
