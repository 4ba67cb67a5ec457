// src/tlbsim/set_assoc.cpp — SetAssoc's construction, insertion and hash index (the hot
// lookup is inline in the header).
#include "tlbsim/set_assoc.hpp"

#include <bit>
#include <stdexcept>

namespace physmem::tlbsim {

SetAssoc::SetAssoc(unsigned entries, unsigned ways) {
    if (ways == 0) ways = entries;
    if (entries == 0 || entries % ways != 0 || ways > 0xFFFF)
        throw std::invalid_argument("set-associative array: entries must be a positive multiple of ways");
    ways_ = ways;
    sets_ = entries / ways;
    pow2_ = std::has_single_bit(sets_);
    tags_.assign(std::size_t{sets_} * ways_, kEmpty);
    prev_.resize(tags_.size());
    next_.resize(tags_.size());
    head_.resize(sets_);
    tail_.resize(sets_);
    if (ways_ > kScanWays) {
        std::uint32_t n = std::bit_ceil(2u * entries);
        hkeys_.assign(n, kEmpty);
        hslots_.assign(n, 0);
        hmask_ = n - 1;
    }
    flush();
}

void SetAssoc::flush() noexcept {
    std::fill(tags_.begin(), tags_.end(), kEmpty);
    std::fill(hkeys_.begin(), hkeys_.end(), kEmpty);
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
    if (!hkeys_.empty()) {
        if (tag != kEmpty) hash_erase(tag);
        hash_put(key, set * ways_ + victim);
    }
    tag = key;
    to_front(set, victim);
}

void SetAssoc::hash_put(std::uint64_t key, std::uint32_t slot) noexcept {
    std::uint32_t i = hash_slot(key);
    while (hkeys_[i] != kEmpty) i = (i + 1) & hmask_;
    hkeys_[i] = key;
    hslots_[i] = slot;
}

// Linear probing's deletion without tombstones: later entries of the cluster that could
// live in the hole move back into it.
void SetAssoc::hash_erase(std::uint64_t key) noexcept {
    std::uint32_t i = hash_slot(key);
    while (hkeys_[i] != key) i = (i + 1) & hmask_;
    for (std::uint32_t j = (i + 1) & hmask_; hkeys_[j] != kEmpty; j = (j + 1) & hmask_) {
        std::uint32_t home = hash_slot(hkeys_[j]);
        bool movable = ((j - home) & hmask_) >= ((j - i) & hmask_);
        if (movable) {
            hkeys_[i] = hkeys_[j];
            hslots_[i] = hslots_[j];
            i = j;
        }
    }
    hkeys_[i] = kEmpty;
}

}  // namespace physmem::tlbsim
