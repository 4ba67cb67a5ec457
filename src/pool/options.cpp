// src/pool/options.cpp — the pool's front-end on the core's option machinery
// (core/options.hpp): the table in physmem/options.hpp, read with the pool's error policy.
#include "physmem/options.hpp"

#include <array>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/give_back.hpp"
#include "core/options.hpp"
#include "give_back_thread.hpp"
#include "validate.hpp"

namespace physmem {

namespace {

#define PHYSMEM_INFO_ROW(field, env, kind, def, help) OptionInfo{#field, env, OptionKind::kind, def, help},
constexpr std::array kTable = {PHYSMEM_OPTIONS(PHYSMEM_INFO_ROW)};
#undef PHYSMEM_INFO_ROW

// Each row's field has the type of its kind.
#define PHYSMEM_CHECK_TYPE(field, env, kind, def, help)                                   \
    static_assert(std::is_same_v<decltype(Options::field),                               \
                                 core::option_t<core::OptionKind::kind>>, #field);
PHYSMEM_OPTIONS(PHYSMEM_CHECK_TYPE)
#undef PHYSMEM_CHECK_TYPE

// The give-back delay is declared once, in core/give_back.hpp (shared with the malloc);
// the public PoolOptions and table, which cannot include it, must say the same.
constexpr bool table_default_is(std::string_view field, std::string_view value) {
    for (const OptionInfo& row : kTable)
        if (row.field == field) return row.default_value == value;
    return false;
}
static_assert(table_default_is("give_back_delay_ms", PHYSMEM_GIVE_BACK_DELAY_MS_DEFAULT));
static_assert(PoolOptions{}.give_back_delay_ms == core::kGiveBackDelayMs);

// The pool's error policy: a bad value throws std::invalid_argument naming the variable;
// VAR= is a value like any other (it fails for a size).
struct Throw {
    static constexpr bool kEmptyIsUnset = false;
    [[noreturn]] void bad_value(const char* env, const char* value, const char*, core::OptionKind kind) {
        throw std::invalid_argument(std::string(env) + "=\"" + value + "\": expected " +
                                    core::expected_value(kind));
    }
};

const OptionInfo* row_of(const char* field) noexcept {
    for (const OptionInfo& row : kTable)
        if (row.field == field) return &row;
    return nullptr;
}

// `PHYSMEM_CAPACITY="1K"`, or `PHYSMEM_CAPACITY (unset: default "1G")`; "" for a field
// without a variable.
std::string variable(const char* field) {
    const OptionInfo* row = row_of(field);
    if (!row) return "";
    std::string env(row->env);
    const char* v = std::getenv(env.c_str());
    return v ? env + "=\"" + v + "\"" : env + " (unset: default \"" + std::string(row->default_value) + "\")";
}

// The first option out of its range (validate.hpp), as an error naming the variables
// of the field and of the field its range depends on.
void check_ranges(const Options& o) {
    std::optional<OptionProblem> p = find_problem(o);
    if (!p) return;
    std::string vars = variable(p->field);
    if (p->other && row_of(p->other) && std::getenv(std::string(row_of(p->other)->env).c_str()))
        vars += ", " + variable(p->other);
    throw std::invalid_argument(vars + ": " + describe(*p));
}

}  // namespace

std::span<const OptionInfo> option_table() noexcept { return kTable; }

Options default_options() {
    Options o;
#define PHYSMEM_DEFAULT(field, env, kind, def, help) core::set_default<core::OptionKind::kind>(o.field, def);
    PHYSMEM_OPTIONS(PHYSMEM_DEFAULT)
#undef PHYSMEM_DEFAULT
    o.grow = true;
    return o;
}

bool background_give_back_from_env() {
    const OptionInfo* row = row_of("background_give_back");
    bool on = true;
    Throw policy;
    core::read_option<core::OptionKind::flag>(on, std::string(row->env).c_str(),
                                              std::string(row->default_value).c_str(), policy);
    return on;
}

Options options_from_env() {
    Options o = default_options();
    Throw policy;
#define PHYSMEM_FROM_ENV(field, env, kind, def, help) core::read_option<core::OptionKind::kind>(o.field, env, def, policy);
    PHYSMEM_OPTIONS(PHYSMEM_FROM_ENV)
#undef PHYSMEM_FROM_ENV
    check_ranges(o);
    return o;
}

}  // namespace physmem
