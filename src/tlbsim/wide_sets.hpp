// src/tlbsim/wide_sets.hpp — a set-associative array of more than 16 ways (fully associative
// L1 TLBs of 64-96 entries, 24-way L2 TLBs) with true LRU replacement.
//
// Each set keeps its ways on a recency list (prev/next indices), so a hit's move to the front
// and a miss's victim (the back) are O(1). Finding a key, by the set's width:
//   - up to 32 ways: a fingerprint byte per way (a hash byte of its key), all of a set's
//     compared with the key's at once (SSE2 where the target has it, else swar) into a mask
//     of candidate ways, and only candidates compare the full key (as SmallSets); a set's
//     fingerprints are 32 bytes, so a many-set L2 TLB's are a few KiB;
//   - 33 to 255 ways: a presence filter: per hash bucket the number of present keys hashing
//     there and the XOR of their ways (so with one key left, its way). A miss on an empty
//     bucket and a hit or miss on a bucket of one key are one load and one compare; only a
//     bucket shared by two keys (rare: 16+ buckets per way) scans;
//   - 256 ways or more: a scan.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "tlbsim/set_index.hpp"
#include "tlbsim/swar.hpp"

namespace physmem::tlbsim {

class WideSets {
  public:
    WideSets() = default;
    // pre: sets >= 1; 16 < ways < 0xFFFF.
    WideSets(unsigned sets, unsigned ways);

    // How a key is found (the file's comment): chosen by the way count at construction. The
    // operations take it as a template argument where the caller knows it (the simulator's
    // compiled paths); `any` reads it from the object.
    enum class Mode : std::uint8_t { fingerprints, filter, scan, any };
    Mode mode() const noexcept { return mode_; }

    // Where a key lives: its set and its fingerprint (sets of up to 32 ways) or filter bucket
    // (up to 255), found once by lookup and reused by the insert after a miss (as SmallSets').
    struct Hint {
        unsigned set;
        std::uint32_t bucket;  // the fingerprint, the filter bucket, or 0
    };

    // true on a hit (the entry becomes the most recently used); false on a miss, nothing changed.
    // Either way h describes key's set.
    // In each: pre: M == any or M == mode().
    template <Mode M = Mode::any>
    bool lookup(std::uint64_t key, Hint& h) noexcept;
    template <Mode M = Mode::any>
    bool lookup(std::uint64_t key) noexcept {
        Hint h;
        return lookup<M>(key, h);
    }
    // Makes `key` present and most recently used, evicting the set's least recently used
    // entry when full. pre: key != kEmpty and key is not present (a lookup just missed); h
    // (if given) from lookup(key, h) on this object (a hint depends on the key alone).
    template <Mode M = Mode::any>
    void insert(std::uint64_t key, const Hint& h) noexcept;
    template <Mode M = Mode::any>
    void insert(std::uint64_t key) noexcept {
        insert<M>(key, hint_of<M>(key));
    }
    // lookup(key) || (insert(key), false), finding the set and the bucket once.
    template <Mode M = Mode::any>
    bool access(std::uint64_t key) noexcept {
        Hint h;
        if (lookup<M>(key, h)) return true;
        insert<M>(key, h);
        return false;
    }
    // Forgets every entry.
    void flush() noexcept;

    static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

  private:
    unsigned set_of(std::uint64_t key) const noexcept { return index_(key); }
    // The presence filter's bucket for a key of `set` (wide sets only): buckets are per set,
    // so the keys sharing one are in one set; within it, the product's top bits.
    std::uint32_t bucket(unsigned set, std::uint64_t key) const noexcept {
        return (set << bshift_) | std::uint32_t((key * 0x9E3779B97F4A7C15ull) >> fshift_);
    }
    static std::uint32_t fingerprint(std::uint64_t key) noexcept {
        return std::uint32_t((key * 0x9E3779B97F4A7C15ull) >> 56);
    }
    template <Mode M>
    Mode mode_of() const noexcept {
        return M == Mode::any ? mode_ : M;
    }
    template <Mode M>
    Hint hint_of(std::uint64_t key) const noexcept {
        const unsigned set = set_of(key);
        const Mode m = mode_of<M>();
        return {set, m == Mode::fingerprints ? fingerprint(key) : m == Mode::filter ? bucket(set, key) : 0};
    }
    // The ways of `set` whose fingerprint is fp, as bits. pre: mode_ == fingerprints.
    unsigned matches(unsigned set, std::uint32_t fp) const noexcept;
    template <Mode M>
    int find(const Hint& h, std::uint64_t key) const noexcept;  // way or -1
    void to_front(unsigned set, unsigned way) noexcept;

    SetIndex index_;
    unsigned ways_ = 0;
    std::vector<std::uint64_t> tags_;  // [set * ways + way]
    struct Link {
        std::uint16_t prev, next;
    };
    struct Ends {
        std::uint16_t head, tail;
    };
    std::vector<Link> links_;  // [set * ways + way]: recency list links, way indices
    std::vector<Ends> ends_;   // per set: most and least recently used way
    // A filter bucket: the count of present keys hashing there in the low byte, the XOR of
    // their ways in the high byte (so the way itself when the count is 1). One 16-bit word,
    // not two bytes: a store through a byte type may alias anything, and the compiler would
    // then reload every member after each filter update.
    using Bucket = std::uint16_t;
    static unsigned count_of(Bucket b) noexcept { return b & 0xFF; }
    static unsigned ways_of(Bucket b) noexcept { return b >> 8; }
    // The bucket with way w's key added (+1) or removed (-1); the count never leaves 0..255.
    static Bucket with(Bucket b, int delta, unsigned w) noexcept { return Bucket((b + delta) ^ (w << 8)); }
    std::vector<Bucket> filter_;  // Mode::filter only: sets << bshift_ buckets
    unsigned fshift_ = 63, bshift_ = 0;
    // Mode::fingerprints only: kFpWords words a set, byte w (by value: bits 8(w%8).. of word
    // w/8) way w's fingerprint; the ways' bits.
    static constexpr unsigned kFpWays = 32, kFpWords = kFpWays / 8;
    std::vector<std::uint64_t> fps_;
    unsigned way_bits_ = 0;
    Mode mode_ = Mode::scan;
};

inline unsigned WideSets::matches(unsigned set, std::uint32_t fp) const noexcept {
    const std::uint64_t* f = &fps_[std::size_t{set} * kFpWords];
#if defined(__SSE2__)
    const __m128i want = _mm_set1_epi8(char(fp));
    const __m128i* v = reinterpret_cast<const __m128i*>(f);
    const unsigned lo = unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(v), want)));
    const unsigned hi = unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(v + 1), want)));
    return (lo | hi << 16) & way_bits_;
#else
    return swar::match_bytes(f, kFpWords, fp) & way_bits_;
#endif
}

template <WideSets::Mode M>
int WideSets::find(const Hint& h, std::uint64_t key) const noexcept {
    const std::uint64_t* t = &tags_[std::size_t{h.set} * ways_];
    const Mode m = mode_of<M>();
    if (m == Mode::fingerprints) {
        for (unsigned c = matches(h.set, h.bucket); c; c &= c - 1) {
            const unsigned way = unsigned(std::countr_zero(c));
            if (t[way] == key) return int(way);
        }
        return -1;
    }
    if (m == Mode::filter) {
        const Bucket b = filter_[h.bucket];
        if (count_of(b) < 2) {  // one answer either way: no branch on which (ways is 0 when empty)
            const bool hit = (count_of(b) == 1) & (t[ways_of(b)] == key);
            return hit ? int(ways_of(b)) : -1;
        }
        int found = -1;  // a shared bucket: scan every way, no early exit to mispredict
        for (unsigned w = 0; w < ways_; ++w) found = t[w] == key ? int(w) : found;
        return found;
    }
    for (unsigned w = 0; w < ways_; ++w)
        if (t[w] == key) return int(w);
    return -1;
}

inline void WideSets::to_front(unsigned set, unsigned way) noexcept {
    Ends& e = ends_[set];
    unsigned h = e.head;
    if (h == way) return;
    Link* l = &links_[std::size_t{set} * ways_];
    std::uint16_t p = l[way].prev, n = l[way].next;
    if (e.tail == way) e.tail = p;
    else l[n].prev = p;
    l[p].next = n;
    l[way].next = std::uint16_t(h);
    l[h].prev = std::uint16_t(way);
    e.head = std::uint16_t(way);
}

template <WideSets::Mode M>
bool WideSets::lookup(std::uint64_t key, Hint& h) noexcept {
    h = hint_of<M>(key);
    int way = find<M>(h, key);
    if (way < 0) return false;
    to_front(h.set, unsigned(way));
    return true;
}

template <WideSets::Mode M>
void WideSets::insert(std::uint64_t key, const Hint& h) noexcept {
    const unsigned set = h.set;
    Ends& e = ends_[set];
    unsigned victim = e.tail;
    std::uint64_t& tag = tags_[std::size_t{set} * ways_ + victim];
    const Mode m = mode_of<M>();
    if (m == Mode::fingerprints) {
        swar::set_byte(&fps_[std::size_t{set} * kFpWords], victim, h.bucket);
    } else if (m == Mode::filter) {
        if (tag != kEmpty) {
            Bucket& out = filter_[bucket(set, tag)];
            out = with(out, -1, victim);
        }
        Bucket& in = filter_[h.bucket];
        in = with(in, +1, victim);
    }
    tag = key;
    // The victim is the tail: it becomes the head.
    Link* l = &links_[std::size_t{set} * ways_];
    e.tail = l[victim].prev;
    l[victim].next = e.head;
    l[e.head].prev = std::uint16_t(victim);
    e.head = std::uint16_t(victim);
}

}  // namespace physmem::tlbsim
