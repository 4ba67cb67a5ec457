// src/core/fatal.cpp — see fatal.hpp.
#include "core/fatal.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "port/os.hpp"

namespace physmem::core {

void say(const char* format, ...) noexcept {
    char buf[512];
    va_list ap;
    va_start(ap, format);
    int n = std::vsnprintf(buf, sizeof buf, format, ap);
    va_end(ap);
    if (n < 0) return;
    os::write_stderr(buf, static_cast<std::size_t>(n) < sizeof buf ? static_cast<std::size_t>(n) : sizeof buf - 1);
}

void fatal(const char* format, ...) noexcept {
    char buf[512];
    int k = std::snprintf(buf, sizeof buf, "physmem: fatal: ");
    va_list ap;
    va_start(ap, format);
    int n = std::vsnprintf(buf + k, sizeof buf - static_cast<std::size_t>(k) - 1, format, ap);
    va_end(ap);
    std::size_t len = static_cast<std::size_t>(k) + (n > 0 ? static_cast<std::size_t>(n) : 0);
    if (len > sizeof buf - 2) len = sizeof buf - 2;
    buf[len++] = '\n';
    os::write_stderr(buf, len);
    std::abort();
}

}  // namespace physmem::core
