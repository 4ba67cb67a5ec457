// src/pool/options.cpp — the pool's front-end on the core's option machinery
// (core/options.hpp): the table in physmem/options.hpp, read with the pool's error policy.
#include "physmem/options.hpp"

#include <array>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/options.hpp"

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

// The pool's error policy: a bad value throws std::invalid_argument naming the variable;
// VAR= is a value like any other (it fails for a size).
struct Throw {
    static constexpr bool kEmptyIsUnset = false;
    [[noreturn]] void bad_value(const char* env, const char* value, const char*, core::OptionKind kind) {
        throw std::invalid_argument(std::string(env) + "=\"" + value + "\": expected " +
                                    core::expected_value(kind));
    }
};

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

Options options_from_env() {
    Options o = default_options();
    Throw policy;
#define PHYSMEM_FROM_ENV(field, env, kind, def, help) core::read_option<core::OptionKind::kind>(o.field, env, def, policy);
    PHYSMEM_OPTIONS(PHYSMEM_FROM_ENV)
#undef PHYSMEM_FROM_ENV
    return o;
}

}  // namespace physmem
