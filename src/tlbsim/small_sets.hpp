// src/tlbsim/small_sets.hpp — a set-associative array of up to 16 ways with true LRU, each set
// in one run of 64-bit words, so an access touches one or two cache lines and no pointers:
//   word 0          recency order: nibble p = the way at recency position p (0 = most
//                   recent); nibbles past the last way hold 0xF, which no way of a set of
//                   under 16 ways has;
//   words 1..F      fingerprints: byte w of word 1 + w / 8 = a hash byte of way w's key (any
//                   value for an empty way: its key, kEmpty, never matches);
//   words F+1..     the ways' keys.
// The operations take the way count as a template argument W where the caller knows it
// (SetAssoc dispatches the common counts, so their masks and loops are constants); W = 0
// reads it from the object. Finding a key XORs each fingerprint word with the key's fingerprint and flags the zero
// bytes (swar.hpp): on a miss usually no way is flagged, on a hit usually only the way, and
// only flagged ways compare the full key. A hit moves the way's nibble to the front; an
// insert takes the last position's way (the least recently used) and moves it to the front.
#pragma once

#include <cstdint>
#include <vector>

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

    unsigned ways() const noexcept { return ways_; }

    // In each: pre: W == 0 or W == ways().
    // true on a hit (the way becomes the most recently used); false on a miss, nothing changed.
    template <unsigned W = 0>
    bool lookup(std::uint64_t key) noexcept;
    // Makes key present and most recently used, evicting the set's least recently used key.
    // pre: key != kEmpty and key is not present.
    template <unsigned W = 0>
    void insert(std::uint64_t key) noexcept;
    // lookup(key) || (insert(key), false), finding the set and the fingerprint once.
    template <unsigned W = 0>
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
    std::uint64_t fp_ways(unsigned word) const noexcept {
        if constexpr (W == 0) return fp_ways_[word];
        else return W >= 8 * (word + 1) ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * (W - 8 * word))) - 1;
    }
    // The way holding key in set s, or -1.
    template <unsigned W>
    int find(const std::uint64_t* s, std::uint64_t key, std::uint64_t fp) const noexcept;
    template <unsigned W>
    void place(std::uint64_t* s, std::uint64_t key, std::uint64_t fp) noexcept;
    static std::uint64_t fingerprint(std::uint64_t key) noexcept { return (key * 0x9E3779B97F4A7C15ull) >> 56; }
    std::uint64_t* set_of(std::uint64_t key) noexcept { return &words_[std::size_t{index_(key)} * stride_]; }
    // The recency order with `way` moved from its position to the front.
    template <unsigned W>
    std::uint64_t to_front(std::uint64_t order, unsigned way) const noexcept;

    SetIndex index_;
    unsigned ways_ = 0, fp_words_ = 0, stride_ = 0;
    std::uint64_t used_ = 0;            // the order word's nibbles that are positions
    std::uint64_t fp_ways_[2] = {0, 0};  // per fingerprint word: 0x80 in the bytes that are ways
    std::vector<std::uint64_t> words_;
};

template <unsigned W>
std::uint64_t SmallSets::to_front(std::uint64_t order, unsigned way) const noexcept {
    const unsigned p = swar::first_nibble(swar::zero_nibbles(order ^ (swar::kNibblesOf1 * way)) & used<W>());
    const std::uint64_t before = (std::uint64_t{1} << (4 * p)) - 1;         // positions < p
    const std::uint64_t through = (std::uint64_t{16} << (4 * p)) - 1;       // positions <= p (p = 15: all)
    return (order & ~through) | ((order & before) << 4) | way;
}

template <unsigned W>
int SmallSets::find(const std::uint64_t* s, std::uint64_t key, std::uint64_t fp) const noexcept {
    const unsigned words = fp_words<W>();
    const std::uint64_t* keys = s + 1 + words;
    const std::uint64_t splat = swar::kBytesOf1 * fp;
    for (unsigned i = 0; i < words; ++i) {
        for (std::uint64_t f = swar::zero_bytes(s[1 + i] ^ splat) & fp_ways<W>(i); f; f &= f - 1) {
            const unsigned way = 8 * i + swar::first_byte(f);
            if (keys[way] == key) return int(way);
        }
    }
    return -1;
}

// Puts key in the least recently used way of set s and makes it the most recent.
template <unsigned W>
void SmallSets::place(std::uint64_t* s, std::uint64_t key, std::uint64_t fp) noexcept {
    const std::uint64_t order = s[0], used_nibbles = used<W>();
    const unsigned victim = unsigned(order >> (4 * (ways_of<W>() - 1))) & 0xF;
    s[1 + fp_words<W>() + victim] = key;
    std::uint64_t& word = s[1 + victim / 8];
    const unsigned at = 8 * (victim % 8);
    word = (word & ~(std::uint64_t{0xFF} << at)) | (fp << at);
    s[0] = ((order << 4) & used_nibbles) | (order & ~used_nibbles) | victim;
}

template <unsigned W>
bool SmallSets::lookup(std::uint64_t key) noexcept {
    std::uint64_t* s = set_of(key);
    const int way = find<W>(s, key, fingerprint(key));
    if (way < 0) return false;
    s[0] = to_front<W>(s[0], unsigned(way));
    return true;
}

template <unsigned W>
void SmallSets::insert(std::uint64_t key) noexcept {
    place<W>(set_of(key), key, fingerprint(key));
}

template <unsigned W>
bool SmallSets::access(std::uint64_t key) noexcept {
    std::uint64_t* s = set_of(key);
    const std::uint64_t fp = fingerprint(key);
    const int way = find<W>(s, key, fp);
    if (way < 0) {
        place<W>(s, key, fp);
        return false;
    }
    s[0] = to_front<W>(s[0], unsigned(way));
    return true;
}

}  // namespace physmem::tlbsim
