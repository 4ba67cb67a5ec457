// src/malloc/options.cpp — the option table read with the allocator's error policy.
#include "malloc/options.hpp"

#include <string_view>

namespace physmem::malloc {

namespace {

// Report on stderr and keep the default (the table's default is already in the field).
struct ReportAndKeepDefault {
    static constexpr bool kEmptyIsUnset = true;
    void bad_value(const char* env, const char* value, const char* def, core::OptionKind) noexcept {
        say("physmem: %s=\"%s\" is not a valid value; using the default %s\n", env, value, def);
    }
};

void list_options() noexcept {
#define PM_HELP(field, env, kind, def, help) say("  %-32s %-5s %s\n", env, def, help);
    say("physmem malloc options (environment, default, meaning):\n");
    PM_MALLOC_OPTIONS(PM_HELP)
#undef PM_HELP
}

// The variable and default of `field`'s row, found by name in the options table.
template <class F>
void with_row(const char* field, F&& f) noexcept {
#define PM_ROW(fld, env, kind, def, help) \
    if (__builtin_strcmp(field, #fld) == 0) f(env, def);
    PM_MALLOC_OPTIONS(PM_ROW)
#undef PM_ROW
}

// The purge delay's bound is the pool's (one limit, core/give_back.hpp).
constexpr std::uint64_t purge_delay_limit() noexcept {
#define PM_BOUND(field, max, unit) \
    if (std::string_view(#field) == "purge_delay_ms") return std::uint64_t{max};
    PM_MALLOC_LIMITS(PM_BOUND)
#undef PM_BOUND
    return 0;
}
static_assert(purge_delay_limit() == core::kMaxGiveBackDelayMs);

// A value above its PM_MALLOC_LIMITS bound: reported, and the default restored.
void enforce_limits(Options& out) noexcept {
#define PM_LIMIT(field, max, unit)                                                          \
    if (out.field > std::uint64_t{max})                                                     \
        with_row(#field, [&](const char* env, const char* def) {                           \
            say("physmem: %s=%llu is out of range (at most %llu %s); using the default %s\n", \
                env, static_cast<unsigned long long>(out.field),                            \
                static_cast<unsigned long long>(max), unit, def);                           \
            core::set_default<core::OptionKind::count>(out.field, def);                     \
        });
    PM_MALLOC_LIMITS(PM_LIMIT)
#undef PM_LIMIT
}

}  // namespace

void read_options(Options& out) noexcept {
    ReportAndKeepDefault policy;
#define PM_READ(field, env, kind, def, help) \
    core::read_option<core::OptionKind::kind>(out.field, env, def, policy);
    PM_MALLOC_OPTIONS(PM_READ)
#undef PM_READ
    enforce_limits(out);
    if (out.help) list_options();
}

}  // namespace physmem::malloc
