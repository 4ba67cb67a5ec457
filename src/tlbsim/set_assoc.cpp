// src/tlbsim/set_assoc.cpp — SetAssoc's construction and flush (lookup and insert, the hot
// paths, are inline in the header).
#include "tlbsim/set_assoc.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace physmem::tlbsim {

SetAssoc::SetAssoc(unsigned entries, unsigned ways) {
    if (ways == 0) ways = entries;
    if (entries == 0 || entries % ways != 0 || ways >= 0xFFFF)
        throw std::invalid_argument("set-associative array: entries must be a positive multiple of ways");
    ways_ = ways;
    sets_ = entries / ways;
    pow2_ = std::has_single_bit(sets_);
    fastmod_ = ~std::uint64_t{0} / sets_ + 1;
    tags_.assign(std::size_t{sets_} * ways_ + kScanWays, kEmpty);  // padding: find reads 8 tags
    links_.resize(std::size_t{sets_} * ways_);
    ends_.resize(sets_);
    if (ways_ > kScanWays && ways_ < 256) {  // 16 to 32 buckets per way: few buckets hold two keys
        bshift_ = unsigned(std::countr_zero(std::bit_ceil(16u * ways_)));
        fshift_ = 64 - bshift_;
        filter_.assign(std::size_t{sets_} << bshift_, Bucket{});
    }
    flush();
}

void SetAssoc::flush() noexcept {
    std::fill(tags_.begin(), tags_.end(), kEmpty);
    std::fill(filter_.begin(), filter_.end(), Bucket{});
    for (unsigned s = 0; s < sets_; ++s) {
        Link* l = &links_[std::size_t{s} * ways_];
        for (unsigned w = 0; w < ways_; ++w)
            l[w] = {std::uint16_t(w - 1), std::uint16_t(w + 1)};  // way 0's prev, the last's next: unused
        ends_[s] = {0, std::uint16_t(ways_ - 1)};
    }
}

}  // namespace physmem::tlbsim
