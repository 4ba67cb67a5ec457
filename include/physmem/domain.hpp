// physmem/domain.hpp — protection domains (Mondrian's model, in software): a block's tag
// names its domain (BlockPool::set_domain, 0..63); a thread holds a set of domains, and
// a checked access (capability.hpp) to a block whose domain the thread does not hold
// fails. Domain 0 is everyone's: a thread starts holding {0}.
//
//   physmem::DomainScope s{3};   // this thread holds {0, 3} until s is destroyed
//
// Protection keys (Intel PKU/MPK) would enforce domains on unchecked code too; this slice
// only detects them (protection_keys()).
#pragma once

#include <cstdint>

namespace physmem {

namespace detail {
inline thread_local std::uint64_t domain_mask = 1;  // bit d: the thread holds domain d
}

// The calling thread's domains, bit d for domain d.
inline std::uint64_t held_domains() noexcept { return detail::domain_mask; }
inline bool holds_domain(std::uint32_t d) noexcept { return d < 64 && (detail::domain_mask >> d & 1); }

// Adds domain d (< 64; aborts otherwise) to the calling thread's set for its lifetime;
// the set before it comes back at destruction. Scopes nest; not movable (thread-bound).
class DomainScope {
  public:
    explicit DomainScope(std::uint32_t d) noexcept;
    ~DomainScope() { detail::domain_mask = saved_; }
    DomainScope(const DomainScope&) = delete;
    DomainScope& operator=(const DomainScope&) = delete;

  private:
    std::uint64_t saved_;
};

// What the CPU and kernel offer for protection keys (CPUID leaf 7, ECX bit 3 PKU, bit 4
// OSPKE: the OS enabled them). Not used beyond detection in this slice.
struct ProtectionKeys {
    bool cpu = false;  // PKU: the CPU has protection keys
    bool os = false;   // OSPKE: the kernel turned them on (CR4.PKE)
};
ProtectionKeys protection_keys() noexcept;

}  // namespace physmem
