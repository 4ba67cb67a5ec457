// src/core/fatal.hpp — the one way physmem reports corruption (fatal), and the stderr
// writer beside it (say). Both are printf-style, allocation-free (a 512-byte stack
// buffer, write(2) through the port, no stdio buffers), so every front-end — the block
// pool, the prefault arena, the drop-in allocator before its constructors run — uses them.
#pragma once

namespace physmem::core {

// Writes the formatted text (cut at 511 bytes) on stderr.
void say(const char* format, ...) noexcept __attribute__((format(printf, 1, 2)));

// Prints "physmem: fatal: <message>\n" on stderr and aborts.
[[noreturn]] void fatal(const char* format, ...) noexcept __attribute__((format(printf, 1, 2)));

}  // namespace physmem::core
