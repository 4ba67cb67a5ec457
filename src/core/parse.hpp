// src/core/parse.hpp — the one parser of option values (sizes, flags, counts, fractions; backings:
// parse_backing in physmem/backing.hpp) and the one size formatter.
//
// Allocation-free and exception-free (std::string_view in, plain values out), except the
// std::string overload of format_size, which the drop-in allocator never calls. In
// namespace physmem, not core: the lab, the benchmark and the demo call them as before,
// through this internal header (they are not installed API).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace physmem {

// "64K", "2M", "1G", "4096", "1T" (binary units, case-insensitive, optional "iB"/"B",
// trailing blanks ignored). nullopt for anything else or for a value above 2^64 - 1.
std::optional<std::size_t> parse_size(std::string_view s) noexcept;

// "1"/"0", "true"/"false", "yes"/"no", "on"/"off" (any case); "" is false.
std::optional<bool> parse_flag(std::string_view s) noexcept;

// Decimal digits only ("50"; no sign, no unit); saturates at 2^64 - 1 as strtoull does.
std::optional<std::uint64_t> parse_count(std::string_view s) noexcept;

// A decimal from 0 to 1: "0", "1", "0.25", ".5", "1.0" (digits and one point; no sign, no
// exponent, at most 9 digits after the point). nullopt for anything else or above 1.
std::optional<double> parse_fraction(std::string_view s) noexcept;

// "64 KiB", "1 GiB", "3000 B" — exact binary units when they divide evenly. Writes at
// most cap - 1 characters and a NUL into out; returns the length written.
std::size_t format_size(char* out, std::size_t cap, std::size_t bytes) noexcept;

// The same as a std::string (allocates: not for the drop-in allocator).
inline std::string format_size(std::size_t bytes) {
    char buf[32];
    format_size(buf, sizeof buf, bytes);
    return buf;
}

}  // namespace physmem

namespace physmem::core {

// ASCII case-insensitive equality of s and the NUL-terminated word.
bool equals_nocase(std::string_view s, const char* word) noexcept;

}  // namespace physmem::core
