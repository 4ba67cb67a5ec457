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
    tags_.assign(std::size_t{sets_} * ways_, kEmpty);
    prev_.resize(tags_.size());
    next_.resize(tags_.size());
    head_.resize(sets_);
    tail_.resize(sets_);
    if (ways_ > kScanWays) {  // 16 to 32 buckets per way: few buckets hold two keys
        bshift_ = unsigned(std::countr_zero(std::bit_ceil(16u * ways_)));
        fshift_ = 64 - bshift_;
        filter_.assign(std::size_t{sets_} << bshift_, Bucket{});
        bucket_of_.assign(tags_.size(), 0);
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

// Way `gone` of `set` loses its key: its bucket counts one less, and a bucket left with one
// key learns that key's way again (a scan of the set, only when two keys shared it).
void SetAssoc::leave_bucket(unsigned set, unsigned gone) noexcept {
    const std::size_t base = std::size_t{set} * ways_;
    const std::uint32_t b = bucket_of_[base + gone];
    Bucket& out = filter_[b];
    out.way = kNoWay;
    if (--out.count != 1) return;
    for (unsigned w = 0; w < ways_; ++w)
        if (w != gone && tags_[base + w] != kEmpty && bucket_of_[base + w] == b) out.way = std::uint16_t(w);
}

void SetAssoc::insert(std::uint64_t key) noexcept {
    unsigned set = set_of(key);
    unsigned victim = tail_[set];
    std::uint64_t& tag = tags_[std::size_t{set} * ways_ + victim];
    if (!filter_.empty()) {
        if (tag != kEmpty) leave_bucket(set, victim);
        std::uint32_t b = bucket(set, key);
        bucket_of_[std::size_t{set} * ways_ + victim] = b;
        Bucket& in = filter_[b];
        in.way = in.count++ == 0 ? std::uint16_t(victim) : kNoWay;
    }
    tag = key;
    to_front(set, victim);
}

}  // namespace physmem::tlbsim
