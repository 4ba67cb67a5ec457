// src/tlbsim/small_sets.hpp — a set-associative array of up to 16 ways with true LRU. Each set
// is a metadata row (2 words for up to 8 ways, 4 for more: a power of two, so rows never
// straddle a cache line) and a row of keys, kept apart so that a miss, the common case of a
// large L2 TLB, reads only the metadata (4096 16-way entries: 8 KiB of metadata, 32 KiB of keys):
//   meta word 0     recency order: nibble p = the way at recency position p (0 = most
//                   recent); nibbles past the last way hold 0xF, which no way of a set of
//                   under 16 ways has;
//   meta words 1..F fingerprints: byte w of word 1 + w / 8 = a hash byte of way w's key (any
//                   value for an empty way: its key, kEmpty, never matches);
//   key word w      way w's key.
// The operations take the way count as a template argument W where the caller knows it
// (SetAssoc dispatches the common counts, so their masks and loops are constants); W = 0
// reads it from the object. Finding a key compares every fingerprint byte with the key's at
// once (SSE2 where the target has it, else swar::match_bytes) into one mask of candidate ways:
// on a miss usually none, on a hit usually only the way, and only candidates compare the
// full key. A hit moves the way's nibble to the front; an
// insert takes the last position's way (the least recently used) and moves it to the front.
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

class SmallSets {
  public:
    static constexpr unsigned kMaxWays = 16;
    static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

    SmallSets() = default;
    // pre: 1 <= ways <= kMaxWays, sets >= 1.
    SmallSets(unsigned sets, unsigned ways);
    // Move-only: meta_/keys_ point into the vectors, which a move carries along and a copy
    // would not.
    SmallSets(SmallSets&&) noexcept = default;
    SmallSets& operator=(SmallSets&&) noexcept = default;
    SmallSets(const SmallSets&) = delete;
    SmallSets& operator=(const SmallSets&) = delete;

    unsigned ways() const noexcept { return ways_; }

    // In each: pre: W == 0 or W == ways().
    // Where a key lives: its set's rows and its fingerprint, found once by lookup and
    // reused by the insert that follows a miss.
    struct Hint {  // trivial: a walk keeps one per level uninitialized until its lookup
        std::uint64_t* meta;
        std::uint64_t* keys;
        std::uint64_t fp;
    };

    // true on a hit (the way becomes the most recently used); false on a miss, nothing changed.
    // Either way h describes key's set.
    template <unsigned W = 0>
    bool lookup(std::uint64_t key, Hint& h) noexcept;
    template <unsigned W = 0>
    bool lookup(std::uint64_t key) noexcept {
        Hint h;
        return lookup<W>(key, h);
    }
    // Makes key present and most recently used, evicting the set's least recently used key.
    // pre: key != kEmpty and key is not present; h (if given) from lookup(key, h) on this object.
    template <unsigned W = 0>
    void insert(std::uint64_t key, const Hint& h) noexcept;
    template <unsigned W = 0>
    void insert(std::uint64_t key) noexcept {
        insert<W>(key, hint_of<W>(key));
    }
    // lookup(key) || (insert(key), false), finding the set and the fingerprint once.
    // kMostlyMru: a hit is expected on the set's most recent way (an upper-level walk cache,
    // one entry of which covers a GiB and more): it is tested, and then nothing is stored.
    template <unsigned W = 0, bool kMostlyMru = false>
    bool access(std::uint64_t key) noexcept;
    void flush() noexcept;

  private:
    // The way count, the fingerprint words and the order word's used nibbles for W.
    template <unsigned W>
    unsigned ways_of() const noexcept {
        return W ? W : ways_;
    }
    template <unsigned W>
    unsigned fp_words() const noexcept {
        return W ? (W + 7) / 8 : fp_words_;
    }
    template <unsigned W>
    std::uint64_t used() const noexcept {
        if constexpr (W == 16) return ~std::uint64_t{0};
        else if constexpr (W != 0) return (std::uint64_t{1} << (4 * W)) - 1;
        else return used_;
    }
    template <unsigned W>
    unsigned meta_stride() const noexcept {
        return W ? (W <= 8 ? 2 : 4) : meta_stride_;
    }
    using Row = Hint;  // find and place read only the rows
    // The ways whose fingerprint byte is fp, as bits (bit w: way w): both fingerprint words
    // in one mask, so where a hit lies costs no branch.
    template <unsigned W>
    unsigned matches(const std::uint64_t* meta, std::uint64_t fp) const noexcept;
    template <unsigned W>
    unsigned way_bits() const noexcept {
        return (1u << ways_of<W>()) - 1;
    }
    // The way holding key in row r, or -1.
    template <unsigned W>
    int find(Row r, std::uint64_t key, std::uint64_t fp) const noexcept;
    template <unsigned W>
    void place(Row r, std::uint64_t key, std::uint64_t fp) noexcept;
    static std::uint64_t fingerprint(std::uint64_t key) noexcept { return (key * 0x9E3779B97F4A7C15ull) >> 56; }
    template <unsigned W>
    Hint hint_of(std::uint64_t key) noexcept {
        const std::size_t set = index_(key);
        return {meta_ + set * meta_stride<W>(), keys_ + set * ways_of<W>(), fingerprint(key)};
    }
    // Makes `way` of the set at meta the most recently used.
    template <unsigned W>
    void touch(std::uint64_t* meta, unsigned way) noexcept;
    // The recency order with `way` moved from its position to the front.
    template <unsigned W>
    std::uint64_t to_front(std::uint64_t order, unsigned way) const noexcept;

    SetIndex index_;
    unsigned ways_ = 0, fp_words_ = 0, meta_stride_ = 0;
    std::uint64_t used_ = 0;            // the order word's nibbles that are positions
    // The rows: meta_ and keys_, each the first word of its vector's storage on a cache line.
    std::vector<std::uint64_t> meta_words_, key_words_;
    std::uint64_t* meta_ = nullptr;
    std::uint64_t* keys_ = nullptr;
};

template <unsigned W>
std::uint64_t SmallSets::to_front(std::uint64_t order, unsigned way) const noexcept {
    const unsigned p = swar::first_nibble(swar::zero_nibbles(order ^ (swar::kNibblesOf1 * way)) & used<W>());
    const std::uint64_t before = (std::uint64_t{1} << (4 * p)) - 1;         // positions < p
    const std::uint64_t through = (std::uint64_t{16} << (4 * p)) - 1;       // positions <= p (p = 15: all)
    return (order & ~through) | ((order & before) << 4) | way;
}

template <unsigned W>
void SmallSets::touch(std::uint64_t* meta, unsigned way) noexcept {
    // No branch on whether the way is the most recent already (to_front then returns the
    // order unchanged): in a walk cache whose few entries are hit in turn that branch goes
    // either way at random, and a misprediction costs more than the store.
    meta[0] = to_front<W>(meta[0], way);
}

template <unsigned W>
int SmallSets::find(Row r, std::uint64_t key, std::uint64_t fp) const noexcept {
    for (unsigned candidates = matches<W>(r.meta, fp); candidates; candidates &= candidates - 1) {
        const unsigned way = unsigned(std::countr_zero(candidates));
        if (r.keys[way] == key) return int(way);
    }
    return -1;
}

template <unsigned W>
unsigned SmallSets::matches(const std::uint64_t* meta, std::uint64_t fp) const noexcept {
#if defined(__SSE2__)
    // One byte compare of all the fingerprints (x86-64's baseline SIMD).
    const __m128i want = _mm_set1_epi8(char(fp));
    const __m128i* fps = reinterpret_cast<const __m128i*>(meta + 1);
    const __m128i have = fp_words<W>() == 2 ? _mm_loadu_si128(fps) : _mm_loadl_epi64(fps);
    return unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(have, want))) & way_bits<W>();
#else
    return swar::match_bytes(meta + 1, fp_words<W>(), fp) & way_bits<W>();
#endif
}

// Puts key in the least recently used way of row r and makes it the most recent.
template <unsigned W>
void SmallSets::place(Row r, std::uint64_t key, std::uint64_t fp) noexcept {
    const std::uint64_t order = r.meta[0], used_nibbles = used<W>();
    const unsigned victim = unsigned(order >> (4 * (ways_of<W>() - 1))) & 0xF;
    r.keys[victim] = key;
    swar::set_byte(r.meta + 1, victim, fp);
    r.meta[0] = ((order << 4) & used_nibbles) | (order & ~used_nibbles) | victim;
}

template <unsigned W>
bool SmallSets::lookup(std::uint64_t key, Hint& h) noexcept {
    h = hint_of<W>(key);
    const int way = find<W>(h, key, h.fp);
    if (way < 0) return false;
    touch<W>(h.meta, unsigned(way));
    return true;
}

template <unsigned W>
void SmallSets::insert(std::uint64_t key, const Hint& h) noexcept {
    place<W>(h, key, h.fp);
}

template <unsigned W, bool kMostlyMru>
bool SmallSets::access(std::uint64_t key) noexcept {
    const Hint h = hint_of<W>(key);
    const int way = find<W>(h, key, h.fp);
    if (way < 0) {
        place<W>(h, key, h.fp);
        return false;
    }
    if (!kMostlyMru || (h.meta[0] & 0xF) != unsigned(way)) touch<W>(h.meta, unsigned(way));
    return true;
}

}  // namespace physmem::tlbsim
