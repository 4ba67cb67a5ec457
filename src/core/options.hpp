// src/core/options.hpp — the option-table machinery every front-end shares: one
// declaration format, one parser per kind of value, and a per-front-end error policy.
//
// A table is a macro taking X, one row per option:
//   X(field, environment variable, kind, default as written in the environment, help)
// kind: size (parse_size: 64K, 2M, 1G), flag (parse_flag: 1/0, yes/no, on/off),
//       backing (parse_backing: best, 1g, 2m, thp, 4k), count (parse_count: digits),
//       fraction (parse_fraction: a decimal from 0 to 1, e.g. 0.25).
// The front-end expands its table with
//   PHYSMEM_OPTION_FIELD   a struct member of the kind's type, e.g. std::size_t block_size{};
//   PHYSMEM_OPTION_ROW     a core::OptionRow, for help listings and tests
// and reads each row with core::read_option and its own error policy (see below).
// Allocation-free; the drop-in allocator reads its table before constructors run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "physmem/backing.hpp"

namespace physmem::core {

enum class OptionKind { size, flag, backing, count, fraction };

template <OptionKind> struct OptionType;
template <> struct OptionType<OptionKind::size> { using type = std::size_t; };
template <> struct OptionType<OptionKind::flag> { using type = bool; };
template <> struct OptionType<OptionKind::backing> { using type = Backing; };
template <> struct OptionType<OptionKind::count> { using type = std::uint64_t; };
template <> struct OptionType<OptionKind::fraction> { using type = double; };
template <OptionKind K> using option_t = typename OptionType<K>::type;

// One row of a table, as declared.
struct OptionRow {
    const char* field;
    const char* env;
    OptionKind kind;
    const char* default_value;
    const char* help;
};

// Parses text as a value of kind K into out; false (out untouched) when it does not parse.
template <OptionKind K> bool parse_option(const char* text, option_t<K>& out) noexcept;
template <> bool parse_option<OptionKind::size>(const char* text, std::size_t& out) noexcept;
template <> bool parse_option<OptionKind::flag>(const char* text, bool& out) noexcept;
template <> bool parse_option<OptionKind::backing>(const char* text, Backing& out) noexcept;
template <> bool parse_option<OptionKind::count>(const char* text, std::uint64_t& out) noexcept;
template <> bool parse_option<OptionKind::fraction>(const char* text, double& out) noexcept;

// What the parser of `kind` accepts, for error messages ("1 or 0", ...).
const char* expected_value(OptionKind kind) noexcept;

// Sets field to the row's default. pre: every default in a table parses.
template <OptionKind K> void set_default(option_t<K>& field, const char* def) noexcept {
    parse_option<K>(def, field);
}

// The default, then the environment variable when set. A value that does not parse
// leaves the default and calls policy.bad_value(env, value, def, K), which may throw
// (the pool's policy) or report and return (the allocator's). Policy also says, as
// static constexpr bool kEmptyIsUnset, whether VAR= (empty) counts as unset.
template <OptionKind K, class Policy>
void read_option(option_t<K>& field, const char* env, const char* def, Policy& policy) {
    set_default<K>(field, def);
    const char* v = std::getenv(env);
    if (!v || (Policy::kEmptyIsUnset && *v == '\0')) return;
    if (!parse_option<K>(v, field)) policy.bad_value(env, v, def, K);
}

}  // namespace physmem::core

#define PHYSMEM_OPTION_FIELD(field, env, kind, def, help) \
    ::physmem::core::option_t<::physmem::core::OptionKind::kind> field{};
#define PHYSMEM_OPTION_ROW(field, env, kind, def, help) \
    ::physmem::core::OptionRow{#field, env, ::physmem::core::OptionKind::kind, def, help},
