// src/core/bucketed_lists.hpp — the core of a page filler (TCMalloc's HugePageFiller idea,
// own code): N intrusive lists ("buckets") and a bit mask of the non-empty ones, so that
// "the first non-empty bucket at or above k" is a count-trailing-zeros per 64 buckets.
// Both fillers are this template plus their own rule for which bucket a page belongs in:
//   the pool (src/pool/page_filler.hpp)   36 buckets: bit_width(free blocks) of partly
//                                         used pages, then empty, populated, unbacked
//   the malloc (src/malloc/filler.cpp)    513 buckets: the longest free run of 4 KiB pages
// With buckets numbered fullest (or most wanted) first, first_at_or_above(k) is "the
// fullest page that fits" for a request that needs bucket k or above.
//
// Contract: as core::IntrusiveList (O(1) push and remove, noexcept, no allocation, no
// lock, constant-initialised); first_at_or_above is O(N / 64). The caller remembers which
// bucket an element is on and passes it to remove (both fillers keep it in the page).
#pragma once

#include <bit>
#include <cstdint>

#include "core/intrusive_list.hpp"

namespace physmem::core {

template <class T, unsigned N, T* T::*Prev = &T::prev, T* T::*Next = &T::next>
class BucketedLists {
    static_assert(N > 0, "at least one bucket");

  public:
    using List = IntrusiveList<T, Prev, Next>;
    static constexpr unsigned kBuckets = N;

    constexpr BucketedLists() noexcept = default;

    const List& bucket(unsigned b) const noexcept { return lists_[b]; }
    T* front(unsigned b) const noexcept { return lists_[b].front(); }
    T* back(unsigned b) const noexcept { return lists_[b].back(); }

    // pre: b < N, x on no list.
    void push_front(unsigned b, T* x) noexcept {
        lists_[b].push_front(x);
        mark(b);
    }
    void push_back(unsigned b, T* x) noexcept {
        lists_[b].push_back(x);
        mark(b);
    }
    // pre: x on bucket b.
    void remove(unsigned b, T* x) noexcept {
        lists_[b].remove(x);
        if (lists_[b].empty()) nonempty_[b / 64] &= ~(std::uint64_t{1} << (b % 64));
    }

    // The lowest non-empty bucket >= k, or -1 when there is none (any k, also k >= N).
    int first_at_or_above(unsigned k) const noexcept {
        for (unsigned w = k / 64; w < kWords; ++w) {
            std::uint64_t bits = nonempty_[w];
            if (w == k / 64) bits &= ~std::uint64_t{0} << (k % 64);
            if (bits) return static_cast<int>(w * 64 + static_cast<unsigned>(std::countr_zero(bits)));
        }
        return -1;
    }
    // The front of that bucket, or nullptr.
    T* first_front_at_or_above(unsigned k) const noexcept {
        int b = first_at_or_above(k);
        return b < 0 ? nullptr : lists_[b].front();
    }

  private:
    static constexpr unsigned kWords = (N + 63) / 64;
    void mark(unsigned b) noexcept { nonempty_[b / 64] |= std::uint64_t{1} << (b % 64); }

    List lists_[N];
    std::uint64_t nonempty_[kWords] = {};  // bit b: bucket b has an element
};

}  // namespace physmem::core
