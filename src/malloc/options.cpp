// src/malloc/options.cpp — the option table parsed from getenv, and stderr output.
#include "malloc/options.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "port/os.hpp"

namespace physmem::malloc {

namespace {

bool parse(const char* s, bool& out) noexcept {
    static const char* const yes[] = {"1", "true", "yes", "on"};
    static const char* const no[] = {"0", "false", "no", "off"};
    for (const char* y : yes) if (strcasecmp(s, y) == 0) { out = true; return true; }
    for (const char* n : no) if (strcasecmp(s, n) == 0) { out = false; return true; }
    return false;
}

bool parse(const char* s, std::uint64_t& out) noexcept {
    if (*s < '0' || *s > '9') return false;
    char* end = nullptr;
    unsigned long long v = std::strtoull(s, &end, 10);
    if (*end != '\0') return false;
    out = v;
    return true;
}

bool parse(const char* s, Rung& out) noexcept {
    struct { const char* name; Rung rung; } const names[] = {
        {"best", Rung::best}, {"auto", Rung::best}, {"1g", Rung::page_1g},
        {"2m", Rung::page_2m}, {"thp", Rung::thp},  {"4k", Rung::page_4k}};
    for (auto& n : names) if (strcasecmp(s, n.name) == 0) { out = n.rung; return true; }
    return false;
}

template <class T>
void set_option(T& field, const char* env, const char* def) noexcept {
    bool ok = parse(def, field);
    (void)ok;
    const char* v = std::getenv(env);
    if (!v || !*v || parse(v, field)) return;
    parse(def, field);
    say("physmem: %s=\"%s\" is not a valid value; using the default %s\n", env, v, def);
}

void list_options() noexcept {
#define PM_HELP(field, env, kind, def, help) say("  %-32s %-5s %s\n", env, def, help);
    say("physmem malloc options (environment, default, meaning):\n");
    PM_MALLOC_OPTIONS(PM_HELP)
#undef PM_HELP
}

}  // namespace

void read_options(Options& out) noexcept {
#define PM_READ(field, env, kind, def, help) set_option(out.field, env, def);
    PM_MALLOC_OPTIONS(PM_READ)
#undef PM_READ
    if (out.help) list_options();
}

void say(const char* format, ...) noexcept {
    char buf[512];
    va_list ap;
    va_start(ap, format);
    int n = std::vsnprintf(buf, sizeof buf, format, ap);
    va_end(ap);
    if (n < 0) return;
    os::write_stderr(buf, static_cast<std::size_t>(n) < sizeof buf ? static_cast<std::size_t>(n) : sizeof buf - 1);
}

void fatal(const char* format, ...) noexcept {
    char buf[512];
    int k = std::snprintf(buf, sizeof buf, "physmem: fatal: ");
    va_list ap;
    va_start(ap, format);
    int n = std::vsnprintf(buf + k, sizeof buf - static_cast<std::size_t>(k) - 1, format, ap);
    va_end(ap);
    std::size_t len = static_cast<std::size_t>(k) + (n > 0 ? static_cast<std::size_t>(n) : 0);
    if (len > sizeof buf - 2) len = sizeof buf - 2;
    buf[len++] = '\n';
    os::write_stderr(buf, len);
    std::abort();
}

}  // namespace physmem::malloc
