// lab/protect/switches.hpp — the cost of a domain switch (issue 24, item 5): entering and
// leaving a physmem::DomainScope around one read of a block of the domain, in software
// (a domain without a protection key: the thread's domain set only) and, where the CPU
// and kernel have protection keys, in hardware (a keyed pool's domain: two WRPKRU and a
// RDPKRU more). Mondrian's and MPK's question: what does crossing into a domain cost.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "physmem/domain.hpp"
#include "physmem/pool.hpp"

namespace lab::protect {

constexpr std::uint32_t kSoftDomain = 12;   // tagged, never keyed
constexpr std::uint32_t kKeyedDomain = 13;  // keyed where keys are available

// One pool of one 4 KiB block per domain: `soft`'s domain has no key; `keyed`'s pool asks
// for protection keys (its key_enforcement() says whether it got them).
struct SwitchPools {
    SwitchPools()
        : soft(options(kSoftDomain, false)), keyed(options(kKeyedDomain, true)),
          soft_block(static_cast<std::uint64_t*>(soft.allocate())),
          keyed_block(static_cast<std::uint64_t*>(keyed.allocate())) {
        physmem::DomainScope s{kKeyedDomain};
        *keyed_block = 1;
        *soft_block = 1;
    }
    ~SwitchPools() {
        soft.deallocate(soft_block);
        keyed.deallocate(keyed_block);
    }
    physmem::BlockPool soft, keyed;
    std::uint64_t* soft_block;
    std::uint64_t* keyed_block;

  private:
    static physmem::PoolOptions options(std::uint32_t d, bool keys) {
        return {.block_size = 4096, .capacity = 4096, .backing = physmem::Backing::page_4k,
                .give_back_delay_ms = 0, .tags = true, .domain = d, .protection_keys = keys};
    }
};

// n switches into domain d, each reading *w inside the scope; the sum of the reads (n).
inline std::uint64_t domain_switches(std::uint32_t d, const std::uint64_t* w, std::uint64_t n) {
    std::uint64_t s = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
        physmem::DomainScope scope{d};
        s += *static_cast<const volatile std::uint64_t*>(w);
    }
    return s;
}

}  // namespace lab::protect
