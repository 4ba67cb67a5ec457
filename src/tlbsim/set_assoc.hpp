// src/tlbsim/set_assoc.hpp — one set-associative array of tags with true LRU replacement:
// the building block of every TLB array, page-walk cache and data cache the simulator models.
//
// sets = entries / ways, any count (set = key mod sets). Each set keeps its ways on a
// recency list (prev/next indices), so a hit's move to the front and a miss's victim (the
// back) are O(1). Lookup within a set is a linear scan for up to kScanWays ways; wider sets
// (fully associative L1 TLBs of 64-96 entries) also keep an open-addressed hash index from
// key to slot (set * ways + way), so a lookup is O(1) there too.
#pragma once

#include <cstdint>
#include <vector>

namespace physmem::tlbsim {

class SetAssoc {
  public:
    SetAssoc() = default;
    // pre: entries >= 1; ways == 0 (fully associative) or entries % ways == 0.
    SetAssoc(unsigned entries, unsigned ways);

    bool empty() const noexcept { return sets_ == 0; }
    unsigned entries() const noexcept { return sets_ * ways_; }

    // true on a hit (the entry becomes the most recently used); false on a miss, nothing changed.
    bool lookup(std::uint64_t key) noexcept;
    // Makes `key` present and most recently used, evicting the set's least recently used
    // entry when full. pre: key != kEmpty.
    void insert(std::uint64_t key) noexcept;
    // lookup(key) || (insert(key), false).
    bool access(std::uint64_t key) noexcept {
        if (lookup(key)) return true;
        insert(key);
        return false;
    }
    // Forgets every entry.
    void flush() noexcept;

    static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

  private:
    static constexpr unsigned kScanWays = 24;
    unsigned set_of(std::uint64_t key) const noexcept {
        return pow2_ ? unsigned(key & (sets_ - 1)) : unsigned(key % sets_);
    }
    int find(unsigned set, std::uint64_t key) const noexcept;  // way or -1
    void to_front(unsigned set, unsigned way) noexcept;
    // The hash index of wide sets (ways > kScanWays).
    std::uint32_t hash_slot(std::uint64_t key) const noexcept;
    int hash_find(std::uint64_t key) const noexcept;
    void hash_put(std::uint64_t key, std::uint32_t slot) noexcept;
    void hash_erase(std::uint64_t key) noexcept;

    unsigned sets_ = 0, ways_ = 0;
    bool pow2_ = false;
    std::vector<std::uint64_t> tags_;   // [set * ways + way]
    std::vector<std::uint16_t> prev_;   // recency list links, way indices within the set
    std::vector<std::uint16_t> next_;
    std::vector<std::uint16_t> head_;   // per set: most recently used way
    std::vector<std::uint16_t> tail_;   // per set: least recently used way
    std::vector<std::uint64_t> hkeys_;  // hash index (wide sets only): key -> slot
    std::vector<std::uint32_t> hslots_;
    std::uint32_t hmask_ = 0;
};

inline std::uint32_t SetAssoc::hash_slot(std::uint64_t key) const noexcept {
    return std::uint32_t((key * 0x9E3779B97F4A7C15ull) >> 32) & hmask_;
}

inline int SetAssoc::hash_find(std::uint64_t key) const noexcept {
    for (std::uint32_t i = hash_slot(key);; i = (i + 1) & hmask_) {
        if (hkeys_[i] == key) return int(hslots_[i] % ways_);
        if (hkeys_[i] == kEmpty) return -1;
    }
}

inline int SetAssoc::find(unsigned set, std::uint64_t key) const noexcept {
    if (!hkeys_.empty()) return hash_find(key);
    const std::uint64_t* t = &tags_[std::size_t{set} * ways_];
    for (unsigned w = 0; w < ways_; ++w)
        if (t[w] == key) return int(w);
    return -1;
}

inline void SetAssoc::to_front(unsigned set, unsigned way) noexcept {
    unsigned h = head_[set];
    if (h == way) return;
    std::size_t base = std::size_t{set} * ways_;
    std::uint16_t p = prev_[base + way], n = next_[base + way];
    if (tail_[set] == way) tail_[set] = p;
    else prev_[base + n] = p;
    next_[base + p] = n;
    next_[base + way] = std::uint16_t(h);
    prev_[base + h] = std::uint16_t(way);
    head_[set] = std::uint16_t(way);
}

inline bool SetAssoc::lookup(std::uint64_t key) noexcept {
    unsigned set = set_of(key);
    int way = find(set, key);
    if (way < 0) return false;
    to_front(set, unsigned(way));
    return true;
}

}  // namespace physmem::tlbsim
