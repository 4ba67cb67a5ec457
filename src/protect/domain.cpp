// src/protect/domain.cpp — see physmem/domain.hpp.
#include "physmem/domain.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "core/fatal.hpp"
#include "port/os.hpp"

namespace physmem {

namespace {

// Domain d's key: 0 not asked yet, -1 none (g_why[d] says why), else the key.
std::array<std::atomic<int>, 64> g_keys{};
std::array<std::string, 64> g_why;
std::mutex g_key_mutex;  // allocation only; DomainScope reads g_keys lock-free

// The domain of each key, for the fault report (signal handler: plain reads of ints set
// before the key was published).
std::array<int, 16> g_domain_of_key{};

// Appends s, or the decimal (or hex, with the 0x prefix) digits of v, to buf at n: the
// fault report is built in a signal handler, so no printf.
void put(char* buf, std::size_t& n, std::size_t cap, const char* s) {
    while (*s && n + 1 < cap) buf[n++] = *s++;
}
void put(char* buf, std::size_t& n, std::size_t cap, std::uintptr_t v, unsigned base) {
    char digits[24];
    int k = 0;
    do digits[k++] = "0123456789abcdef"[v % base], v /= base;
    while (v && k < 24);
    if (base == 16) put(buf, n, cap, "0x");
    while (k && n + 1 < cap) buf[n++] = digits[--k];
}

// The fault report (async-signal-safe): true for a key of physmem's domains.
bool report_fault(int key, const void* addr) {
    if (key <= 0 || key >= 16 || g_domain_of_key[static_cast<unsigned>(key)] == 0) return false;
    char buf[256];
    std::size_t n = 0;
    put(buf, n, sizeof buf, "physmem: fatal: protection key ");
    put(buf, n, sizeof buf, static_cast<std::uintptr_t>(key), 10);
    put(buf, n, sizeof buf, " (domain ");
    put(buf, n, sizeof buf, static_cast<std::uintptr_t>(g_domain_of_key[static_cast<unsigned>(key)]), 10);
    put(buf, n, sizeof buf, "): access at ");
    put(buf, n, sizeof buf, reinterpret_cast<std::uintptr_t>(addr), 16);
    put(buf, n, sizeof buf, " by a thread that does not hold the domain (enter a physmem::DomainScope first)\n");
    (void)!write(2, buf, n);
    return true;
}

constexpr std::uint32_t key_bits(int key) noexcept { return 3u << (2 * key); }

}  // namespace

DomainScope::DomainScope(std::uint32_t d) noexcept : saved_(detail::domain_mask) {
    if (d >= 64) core::fatal("DomainScope(%u): domains are 0..63", d);
    detail::domain_mask |= std::uint64_t{1} << d;
    int key = g_keys[d].load(std::memory_order_acquire);
    if (key > 0) {
        saved_pkru_ = os::read_pkru();
        key_ = static_cast<std::uint8_t>(key);
        os::write_pkru(saved_pkru_ & ~key_bits(key));
    }
}

// Only the scope's key's bits come back: a key allocated meanwhile keeps its rights.
void DomainScope::restore_keys() const noexcept {
    const std::uint32_t bits = key_bits(static_cast<int>(key_));
    os::write_pkru((os::read_pkru() & ~bits) | (saved_pkru_ & bits));
}

ProtectionKeys protection_keys() noexcept {
    os::CpuPku k = os::cpu_protection_keys();
    return {k.pku, k.ospke};
}

std::string keys_unavailable() {
    ProtectionKeys k = protection_keys();
    if (!k.cpu) return "the CPU has no protection keys (CPUID.7 PKU = 0)";
    if (!k.os) return "the kernel did not enable protection keys (CPUID.7 OSPKE = 0)";
    return "";
}

int domain_key(std::uint32_t d, std::string* why) {
    if (d >= 64) core::fatal("physmem::domain_key(%u): domains are 0..63", d);
    if (d == 0) {
        if (why) *why = "domain 0 is everyone's: it has no key";
        return -1;
    }
    int key = g_keys[d].load(std::memory_order_acquire);
    if (key == 0) {
        std::lock_guard<std::mutex> guard(g_key_mutex);
        key = g_keys[d].load(std::memory_order_relaxed);
        if (key == 0) {
            std::string no = keys_unavailable();
            if (no.empty()) {
                key = os::pkey_allocate();
                if (key < 0) no = std::string("pkey_alloc: ") + std::strerror(errno) + " (a process has 15 keys)";
                else if (key >= 16) no = "pkey_alloc returned key " + std::to_string(key) + ", beyond PKRU's 16";
            }
            if (!no.empty()) {
                key = -1;
                g_why[d] = no;
            } else {
                g_domain_of_key[static_cast<unsigned>(key)] = static_cast<int>(d);
                static const bool hooked = os::on_pkey_fault(report_fault) == 0;
                (void)hooked;
            }
            g_keys[d].store(key, std::memory_order_release);
        }
    }
    if (key < 0 && why) {
        std::lock_guard<std::mutex> guard(g_key_mutex);
        *why = g_why[d];
    }
    return key;
}

}  // namespace physmem
