// src/tlbsim/set_index.hpp — which set of a set-associative array a key maps to: the key's
// low 32 bits mod the number of sets, for any count (a mask for a power of two, else a
// multiply, not a division: Lemire's fastmod).
#pragma once

#include <bit>
#include <cstdint>

namespace physmem::tlbsim {

__extension__ typedef unsigned __int128 U128;  // GCC/Clang: the high half of a 64x64 product

class SetIndex {
  public:
    SetIndex() = default;
    // pre: sets >= 1 (0 makes an index its owner must refuse: no division happens here).
    explicit SetIndex(unsigned sets)
        : sets_(sets), pow2_(std::has_single_bit(sets)), fastmod_(sets ? ~std::uint64_t{0} / sets + 1 : 0) {}

    unsigned sets() const noexcept { return sets_; }
    unsigned operator()(std::uint64_t key) const noexcept {
        if (pow2_) return unsigned(key & (sets_ - 1));
        std::uint64_t low = fastmod_ * std::uint32_t(key);
        return unsigned((static_cast<U128>(low) * sets_) >> 64);
    }

  private:
    unsigned sets_ = 0;
    bool pow2_ = false;
    std::uint64_t fastmod_ = 0;  // 2^64 / sets, rounded up
};

}  // namespace physmem::tlbsim
