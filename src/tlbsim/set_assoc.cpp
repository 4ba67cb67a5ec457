// src/tlbsim/set_assoc.cpp — SetAssoc's construction, flush and insertion (the hot lookup is
// inline in the header).
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
    tags_.assign(std::size_t{sets_} * ways_, kEmpty);
    prev_.resize(tags_.size());
    next_.resize(tags_.size());
    head_.resize(sets_);
    tail_.resize(sets_);
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
        std::uint16_t* p = &prev_[std::size_t{s} * ways_];
        std::uint16_t* n = &next_[std::size_t{s} * ways_];
        for (unsigned w = 0; w < ways_; ++w) {
            p[w] = std::uint16_t(w - 1);  // way 0's prev is unused
            n[w] = std::uint16_t(w + 1);  // the last way's next is unused
        }
        head_[s] = 0;
        tail_[s] = std::uint16_t(ways_ - 1);
    }
}

void SetAssoc::insert(std::uint64_t key) noexcept {
    unsigned set = set_of(key);
    unsigned victim = tail_[set];
    std::uint64_t& tag = tags_[std::size_t{set} * ways_ + victim];
    if (!filter_.empty()) {
        if (tag != kEmpty) {
            Bucket& out = filter_[bucket(set, tag)];
            --out.count;
            out.ways ^= std::uint8_t(victim);
        }
        Bucket& in = filter_[bucket(set, key)];
        ++in.count;
        in.ways ^= std::uint8_t(victim);
    }
    tag = key;
    if (ways_ == 1) return;
    // The victim is the tail: it becomes the head.
    std::uint16_t* prev = &prev_[std::size_t{set} * ways_];
    std::uint16_t* next = &next_[std::size_t{set} * ways_];
    tail_[set] = prev[victim];
    next[victim] = head_[set];
    prev[head_[set]] = std::uint16_t(victim);
    head_[set] = std::uint16_t(victim);
}

}  // namespace physmem::tlbsim
