// physmem/domain.hpp — protection domains (Mondrian's model): a block's tag names its
// domain (BlockPool::set_domain, or every block of a pool with PoolOptions::domain, 0..63);
// a thread holds a set of domains, and a checked access (capability.hpp, the checked
// arrays) to a block whose domain the thread does not hold fails. Domain 0 is everyone's:
// a thread starts holding {0}.
//
//   physmem::DomainScope s{3};   // this thread holds {0, 3} until s is destroyed
//
// Hardware enforcement (protection keys, Intel PKU/MPK, also on AMD since Zen 3): a pool
// with PoolOptions::protection_keys puts its memory under domain's key (domain_key), so
// that *unchecked* code too — raw pointers, spans, the unchecked arrays — faults on a block
// of a domain its thread does not hold. A DomainScope of a keyed domain grants the key to
// its thread (WRPKRU) and takes it back at its end. An access without it ends the process:
// SIGSEGV, after "physmem: fatal: protection key K (domain D): ..." on stderr. Where the
// CPU or kernel has no keys (protection_keys(), keys_unavailable()) the pool falls back to
// the software checks, and says so (BlockPool::key_enforcement()).
//
// The keys' limits: a thread's key rights change at its scopes, and at its creation: a
// thread started inside a scope inherits the key rights (clone copies the register) but
// not the domain set, and one that entered a scope of d before d had a key holds d in
// software only, until its next scope of d; signal handlers run without the keys; the
// kernel refuses system calls that read or write a keyed block for a thread without its
// key (EFAULT), io_uring's workers included; BlockPool::compact() and relocate() copy
// blocks on the calling thread, which must hold the domain; a process has 15 keys, so at
// most 15 domains have one. The fault report handles faults on physmem's keys only and
// passes any other SIGSEGV to the handler installed before it.
#pragma once

#include <cstdint>
#include <string>

namespace physmem {

namespace detail {
inline thread_local std::uint64_t domain_mask = 1;  // bit d: the thread holds domain d
}

// The calling thread's domains, bit d for domain d.
inline std::uint64_t held_domains() noexcept { return detail::domain_mask; }
inline bool holds_domain(std::uint32_t d) noexcept { return d < 64 && (detail::domain_mask >> d & 1); }

// Adds domain d (< 64; aborts otherwise) to the calling thread's set for its lifetime,
// and grants the thread d's protection key if d has one; the set and the key rights before
// it come back at destruction. Scopes nest (destroy them in reverse order); not movable
// (thread-bound).
class DomainScope {
  public:
    explicit DomainScope(std::uint32_t d) noexcept;
    ~DomainScope() {
        detail::domain_mask = saved_;
        if (key_ != 0) restore_keys();
    }
    DomainScope(const DomainScope&) = delete;
    DomainScope& operator=(const DomainScope&) = delete;

  private:
    std::uint64_t saved_;
    std::uint32_t saved_pkru_ = 0;  // PKRU before the scope (when key_ != 0)
    std::uint8_t key_ = 0;          // the domain's key, 0: the domain has none
    void restore_keys() const noexcept;
};

// What the CPU and kernel offer for protection keys (CPUID leaf 7, ECX bit 3 PKU, bit 4
// OSPKE: the OS enabled them).
struct ProtectionKeys {
    bool cpu = false;  // PKU: the CPU has protection keys
    bool os = false;   // OSPKE: the kernel turned them on (CR4.PKE)
};
ProtectionKeys protection_keys() noexcept;

// Why protection keys cannot be used here ("the CPU has no protection keys (CPUID.7 PKU =
// 0)", "the kernel did not enable them (OSPKE = 0)"), or "" where they can.
std::string keys_unavailable();

// Domain d's protection key (1..15), allocated at the first call for d; -1 when d is 0
// (everyone's: never keyed), keys are unavailable, or none is free — `why` (optional)
// then says which. The first key also installs the fault report (SIGSEGV). Thread-safe.
// pre: d < 64.
int domain_key(std::uint32_t d, std::string* why = nullptr);

}  // namespace physmem
