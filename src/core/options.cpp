// src/core/options.cpp — the parsers behind each kind of option (see options.hpp).
#include "core/options.hpp"

#include "core/parse.hpp"

namespace physmem::core {

namespace {
template <class T, class Parsed>
bool take(const Parsed& parsed, T& out) noexcept {
    if (!parsed) return false;
    out = *parsed;
    return true;
}
}  // namespace

template <> bool parse_option<OptionKind::size>(const char* text, std::size_t& out) noexcept {
    return take(parse_size(text), out);
}
template <> bool parse_option<OptionKind::flag>(const char* text, bool& out) noexcept {
    return take(parse_flag(text), out);
}
template <> bool parse_option<OptionKind::backing>(const char* text, Backing& out) noexcept {
    return take(parse_backing(text), out);
}
template <> bool parse_option<OptionKind::count>(const char* text, std::uint64_t& out) noexcept {
    return take(parse_count(text), out);
}
template <> bool parse_option<OptionKind::fraction>(const char* text, double& out) noexcept {
    return take(parse_fraction(text), out);
}

const char* expected_value(OptionKind kind) noexcept {
    switch (kind) {
        case OptionKind::size: return "a size such as 4096, 64K, 2M, 1G";
        case OptionKind::flag: return "1 or 0";
        case OptionKind::backing: return "best, 1g, 2m, thp or 4k";
        case OptionKind::count: return "a count such as 0, 16, 50";
        case OptionKind::fraction: return "a decimal from 0 to 1 such as 0, 0.25, 1";
    }
    return "?";
}

}  // namespace physmem::core
