// src/malloc/options.cpp — the option table read with the allocator's error policy.
#include "malloc/options.hpp"

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

}  // namespace

void read_options(Options& out) noexcept {
    ReportAndKeepDefault policy;
#define PM_READ(field, env, kind, def, help) \
    core::read_option<core::OptionKind::kind>(out.field, env, def, policy);
    PM_MALLOC_OPTIONS(PM_READ)
#undef PM_READ
    if (out.help) list_options();
}

}  // namespace physmem::malloc
