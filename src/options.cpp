// src/options.cpp — parsing of the option table in physmem/options.hpp.
#include "physmem/options.hpp"

#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace physmem {

namespace {

#define PHYSMEM_INFO_ROW(field, env, kind, def, help) OptionInfo{#field, env, OptionKind::kind, def, help},
constexpr std::array kTable = {PHYSMEM_OPTIONS(PHYSMEM_INFO_ROW)};
#undef PHYSMEM_INFO_ROW

std::string lower(std::string_view s) {
    std::string l(s);
    for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return l;
}

[[noreturn]] void bad_value(std::string_view env, std::string_view value, const char* expected) {
    throw std::invalid_argument(std::string(env) + "=\"" + std::string(value) + "\": expected " + expected);
}

void assign(std::size_t& field, std::string_view env, std::string_view v) {
    auto s = parse_size(v);
    if (!s) bad_value(env, v, "a size such as 4096, 64K, 2M, 1G");
    field = *s;
}

void assign(bool& field, std::string_view env, std::string_view v) {
    auto f = parse_flag(v);
    if (!f) bad_value(env, v, "1 or 0");
    field = *f;
}

void assign(Backing& field, std::string_view env, std::string_view v) {
    auto b = parse_backing(v);
    if (!b) bad_value(env, v, "best, 1g, 2m, thp or 4k");
    field = *b;
}

}  // namespace

std::span<const OptionInfo> option_table() noexcept { return kTable; }

Options default_options() {
    Options o;
#define PHYSMEM_DEFAULT(field, env, kind, def, help) assign(o.field, env, def);
    PHYSMEM_OPTIONS(PHYSMEM_DEFAULT)
#undef PHYSMEM_DEFAULT
    return o;
}

Options options_from_env() {
    Options o = default_options();
#define PHYSMEM_FROM_ENV(field, env, kind, def, help) \
    if (const char* v = std::getenv(env)) assign(o.field, env, v);
    PHYSMEM_OPTIONS(PHYSMEM_FROM_ENV)
#undef PHYSMEM_FROM_ENV
    return o;
}

std::optional<std::size_t> parse_size(std::string_view s) noexcept {
    std::string l = lower(s);
    while (!l.empty() && std::isspace(static_cast<unsigned char>(l.back()))) l.pop_back();
    if (l.size() >= 2 && l.ends_with("ib")) l.erase(l.size() - 2);
    else if (!l.empty() && l.back() == 'b') l.pop_back();
    if (l.empty() || !std::isdigit(static_cast<unsigned char>(l[0]))) return std::nullopt;
    unsigned shift = 0;
    switch (l.back()) {
        case 'k': shift = 10; break;
        case 'm': shift = 20; break;
        case 'g': shift = 30; break;
        case 't': shift = 40; break;
        default: break;
    }
    if (shift) l.pop_back();
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(l.c_str(), &end, 10);
    if (errno || !end || *end != '\0' || l.empty()) return std::nullopt;
    if (shift && v > (~0ull >> shift)) return std::nullopt;
    return static_cast<std::size_t>(v << shift);
}

std::optional<bool> parse_flag(std::string_view s) noexcept {
    std::string l = lower(s);
    if (l == "1" || l == "true" || l == "yes" || l == "on") return true;
    if (l == "0" || l == "false" || l == "no" || l == "off" || l.empty()) return false;
    return std::nullopt;
}

std::string format_size(std::size_t bytes) {
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    unsigned u = 0;
    while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) { bytes /= 1024; ++u; }
    return std::to_string(bytes) + " " + units[u];
}

}  // namespace physmem
