// src/protect/domain.cpp — see physmem/domain.hpp.
#include "physmem/domain.hpp"

#include "core/fatal.hpp"
#include "port/os.hpp"

namespace physmem {

DomainScope::DomainScope(std::uint32_t d) noexcept : saved_(detail::domain_mask) {
    if (d >= 64) core::fatal("DomainScope(%u): domains are 0..63", d);
    detail::domain_mask |= std::uint64_t{1} << d;
}

ProtectionKeys protection_keys() noexcept {
    os::CpuPku k = os::cpu_protection_keys();
    return {k.pku, k.ospke};
}

}  // namespace physmem
