// src/tlbsim/wide_sets.cpp — WideSets' construction and flush (lookup and insert, the hot
// paths, are inline in the header).
#include "tlbsim/wide_sets.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace physmem::tlbsim {

WideSets::WideSets(unsigned sets, unsigned ways) : index_(sets), ways_(ways) {
    if (sets == 0 || ways <= 16 || ways >= 0xFFFF) throw std::invalid_argument("WideSets: 17 to 65534 ways, 1 or more sets");
    tags_.assign(std::size_t{sets} * ways_, kEmpty);
    links_.resize(std::size_t{sets} * ways_);
    ends_.resize(sets);
    if (ways_ <= kFpWays) {
        mode_ = Mode::fingerprints;
        fps_.assign(std::size_t{sets} * kFpWords, 0);
        way_bits_ = ways_ == 32 ? ~0u : (1u << ways_) - 1;
    } else if (ways_ < 256) {  // 16 to 32 buckets per way: few buckets hold two keys
        mode_ = Mode::filter;
        bshift_ = unsigned(std::countr_zero(std::bit_ceil(16u * ways_)));
        fshift_ = 64 - bshift_;
        filter_.assign(std::size_t{sets} << bshift_, Bucket{0});
    }
    flush();
}

void WideSets::flush() noexcept {
    std::fill(tags_.begin(), tags_.end(), kEmpty);
    std::fill(filter_.begin(), filter_.end(), Bucket{0});
    for (unsigned s = 0; s < index_.sets(); ++s) {
        Link* l = &links_[std::size_t{s} * ways_];
        for (unsigned w = 0; w < ways_; ++w)
            l[w] = {std::uint16_t(w - 1), std::uint16_t(w + 1)};  // way 0's prev, the last's next: unused
        ends_[s] = {0, std::uint16_t(ways_ - 1)};
    }
}

}  // namespace physmem::tlbsim
