// src/fatal.hpp — the one way physmem reports corruption: a message, then abort.
#pragma once

namespace physmem::detail {

// Prints "physmem: fatal: <message>" on stderr and aborts. printf-style.
[[noreturn]] void fatal(const char* format, ...) noexcept __attribute__((format(printf, 1, 2)));

}  // namespace physmem::detail
