// src/core/parse.cpp — see parse.hpp. Hand-written digit loops: no strtoull on a
// string_view (not NUL-terminated), no std::string.
#include "core/parse.hpp"

#include <cstdio>

namespace physmem::core {

namespace {

constexpr char lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool ends_with_nocase(std::string_view s, const char* suffix) noexcept {
    std::size_t n = std::string_view(suffix).size();
    return s.size() >= n && equals_nocase(std::string_view(s.data() + s.size() - n, n), suffix);
}

// All of s as decimal digits (non-empty); false on any other character or overflow.
bool digits(std::string_view s, std::uint64_t& out) noexcept {
    if (s.empty()) return false;
    std::uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        unsigned d = static_cast<unsigned>(c - '0');
        if (v > (~std::uint64_t{0} - d) / 10) return false;
        v = v * 10 + d;
    }
    out = v;
    return true;
}

unsigned unit_shift(char c) noexcept {
    switch (lower(c)) {
        case 'k': return 10;
        case 'm': return 20;
        case 'g': return 30;
        case 't': return 40;
        default: return 0;
    }
}

}  // namespace

bool equals_nocase(std::string_view s, const char* word) noexcept {
    std::size_t i = 0;
    for (; i < s.size(); ++i)
        if (word[i] == '\0' || lower(s[i]) != lower(word[i])) return false;
    return word[i] == '\0';
}

}  // namespace physmem::core

namespace physmem {

std::optional<std::size_t> parse_size(std::string_view s) noexcept {
    while (!s.empty() && (s.back() == ' ' || (s.back() >= '\t' && s.back() <= '\r'))) s.remove_suffix(1);
    if (core::ends_with_nocase(s, "ib")) s.remove_suffix(2);
    else if (core::ends_with_nocase(s, "b")) s.remove_suffix(1);
    if (s.empty() || s.front() < '0' || s.front() > '9') return std::nullopt;
    unsigned shift = core::unit_shift(s.back());
    if (shift) s.remove_suffix(1);
    std::uint64_t v = 0;
    if (!core::digits(s, v)) return std::nullopt;
    if (shift && v > (~std::uint64_t{0} >> shift)) return std::nullopt;
    return static_cast<std::size_t>(v << shift);
}

std::optional<bool> parse_flag(std::string_view s) noexcept {
    for (const char* yes : {"1", "true", "yes", "on"})
        if (core::equals_nocase(s, yes)) return true;
    for (const char* no : {"0", "false", "no", "off", ""})
        if (core::equals_nocase(s, no)) return false;
    return std::nullopt;
}

std::optional<std::uint64_t> parse_count(std::string_view s) noexcept {
    if (s.empty()) return std::nullopt;
    std::uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        unsigned d = static_cast<unsigned>(c - '0');
        v = v > (~std::uint64_t{0} - d) / 10 ? ~std::uint64_t{0} : v * 10 + d;
    }
    return v;
}

std::optional<double> parse_fraction(std::string_view s) noexcept {
    // No substr: it can throw, and the drop-in allocator links no libstdc++.
    std::size_t dot = s.find('.');
    if (dot == std::string_view::npos) dot = s.size();
    std::string_view whole(s.data(), dot);
    std::string_view part = dot < s.size() ? std::string_view(s.data() + dot + 1, s.size() - dot - 1)
                                           : std::string_view{};
    if (whole.empty() && part.empty()) return std::nullopt;
    if (part.size() > 9) return std::nullopt;
    std::optional<std::uint64_t> w = whole.empty() ? std::optional<std::uint64_t>{0} : parse_count(whole);
    std::optional<std::uint64_t> f = part.empty() ? std::optional<std::uint64_t>{0} : parse_count(part);
    if (!w || !f || *w > 1) return std::nullopt;
    double scale = 1;
    for (std::size_t k = 0; k < part.size(); ++k) scale *= 10;
    double v = static_cast<double>(*w) + static_cast<double>(*f) / scale;
    if (v > 1) return std::nullopt;
    return v;
}

std::size_t format_size(char* out, std::size_t cap, std::size_t bytes) noexcept {
    static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    unsigned u = 0;
    while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) { bytes /= 1024; ++u; }
    int n = std::snprintf(out, cap, "%zu %s", bytes, units[u]);
    if (n < 0) return 0;
    return static_cast<std::size_t>(n) < cap ? static_cast<std::size_t>(n) : cap - 1;
}

}  // namespace physmem
