// physmem/sort.hpp — physmem::sort: std::sort's contract, leaf-aware on a TreeArray or PagedArray range.
//
//   physmem::TreeArray<std::uint64_t> a(n, pool);
//   physmem::sort(a.begin(), a.end());                 // or physmem::sort(a), physmem::sort(a, comp)
//
// Contract as std::sort's: [first, last) ends sorted by comp (a strict weak order), not
// stably; the iterators are random access and std::sortable with comp. On a TreeArray's
// iterators with a trivially copyable element type, the range is sorted by leaves: each
// leaf's part is sorted as the contiguous array it is (std::sort on pointers, no tree walk
// per element), then the sorted runs are merged pairwise, bottom-up, between the range and
// a scratch TreeArray of the same length on the array's pool (resident blocks: no page
// faults, where fresh heap memory takes one a page), and the result lands in the range.
// The merge works in stretches that no input run and no output leaf crosses, so its
// inner loop is pointers only, with a conditional move as the select.
//
// Memory: (last - first) elements of the array's pool while it runs (std::sort needs
// none), else of physmem::default_pool(); when neither can give them, sorts with std::sort.
// A PagedArray's range takes twice that of the default pool (its copy, and the copy's scratch).
// On a PagedArray's iterators, when the leaves of the range fit the array's budget (all of
// it may be in memory at once): the range is copied leaf by leaf into a scratch TreeArray
// on physmem::default_pool(), sorted there as above and copied back, so nothing in the
// range changes before the sort is done; a larger range is sorted with std::sort through
// the iterators (correct at any budget, and loads a leaf per access to another).
// Other iterators (a vector's, a CheckedTreeArray's), element types that are not trivially
// copyable and default constructible, comps that cannot take const elements: std::sort.
// A range within one leaf of a TreeArray: std::sort on its pointers.
// Measured against std::sort through the iterators in the lab's suite `algorithms`
// (kernels std_sort and physmem_sort). Exceptions: what comp throws, with std::sort's
// guarantee for the leaf sorts; a comp that throws during a merge leaves the range a mix of
// sorted runs and elements of the scratch (basic guarantee only for comps that do not throw).
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <iterator>
#include <new>
#include <optional>
#include <ranges>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "physmem/algorithm.hpp"
#include "physmem/paged_array.hpp"
#include "physmem/segmented_iterator.hpp"
#include "physmem/tree_array.hpp"

namespace physmem {

namespace detail {

// A TreeArray's own iterator (not a CheckedTreeArray's, not a PagedArray's), and a
// PagedArray's own non-const one.
template <class I>
struct IsTreeArrayIterator : std::false_type {};
template <class T>
struct IsTreeArrayIterator<TreeIterator<TreeArray<T>, false>> : std::true_type {};
template <class I>
struct IsPagedArrayIterator : std::false_type {};
template <class T>
struct IsPagedArrayIterator<PagedIterator<PagedArray<T>, false>> : std::true_type {};

// Whether a scratch TreeArray can sort elements T with comp: T trivially copyable and
// default constructible, comp callable on const elements (the merges read the runs as const).
template <class T, class Comp>
inline constexpr bool scratch_sortable_v = std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T> &&
                                           std::predicate<Comp&, const T&, const T&>;

// Whether physmem::sort sorts [I, I) by leaves (a TreeArray's iterators) or as a scratch
// copy (a PagedArray's: sort_paged below).
template <class I, class Comp>
inline constexpr bool sort_by_leaves_v =
    IsTreeArrayIterator<std::remove_cvref_t<I>>::value && scratch_sortable_v<std::iter_value_t<I>, Comp>;
template <class I, class Comp>
inline constexpr bool sort_paged_v =
    IsPagedArrayIterator<std::remove_cvref_t<I>>::value && scratch_sortable_v<std::iter_value_t<I>, Comp>;

// A position in a TreeArray read or written in index order: the current leaf's pointer and
// end, refilled when the position reaches the end of its leaf.
template <class T>
struct LeafCursor {
    const TreeArray<T>* a;
    T* p;
    T* end;
    std::size_t next;  // index of the element at `end`

    LeafCursor(const TreeArray<T>& arr, std::size_t i) : a(&arr) { seek(i); }
    void seek(std::size_t i) {
        if (i >= a->size()) {  // the end of the array: nothing to read or write
            p = end = nullptr;
            next = i;
            return;
        }
        const TreeShape& s = a->shape();
        std::size_t k = i >> s.leaf_shift;
        std::size_t base = k << s.leaf_shift, len = std::min(a->leaf_length(), a->size() - base);
        T* leaf = a->leaf_data(k);
        p = leaf + (i - base);
        end = leaf + len;
        next = base + len;
    }
    std::size_t left() const noexcept { return static_cast<std::size_t>(end - p); }
    void refill() {
        if (p == end && next < a->size()) seek(next);
    }
};

// Merges runs [a0, a0 + na) and [b0, b0 + nb) of src into dst from d0 on (equal elements:
// the first run's first), in stretches that no cursor leaves its leaf during.
template <class T, class Comp>
void merge_runs(const TreeArray<T>& src, std::size_t a0, std::size_t na, std::size_t b0, std::size_t nb,
                const TreeArray<T>& dst, std::size_t d0, Comp& comp) {
    LeafCursor<T> a(src, a0), b(src, b0), o(dst, d0);
    while (na && nb) {
        std::size_t k = std::min({a.left(), b.left(), o.left(), na, nb});
        const T* pa = a.p;
        const T* pb = b.p;
        T* po = o.p;
        for (std::size_t j = 0; j < k; ++j) {  // at most k from either input: none crosses its leaf
            const bool take_b = std::invoke(comp, *pb, *pa);
            *po++ = take_b ? *pb : *pa;
            pa += !take_b;
            pb += take_b;
        }
        std::size_t from_a = static_cast<std::size_t>(pa - a.p), from_b = k - from_a;
        a.p += from_a, na -= from_a;
        b.p += from_b, nb -= from_b;
        o.p = po;
        a.refill(), b.refill(), o.refill();
    }
    for (LeafCursor<T>* in : {&a, &b}) {  // the rest of whichever run is left
        std::size_t& n = in == &a ? na : nb;
        while (n) {
            std::size_t k = std::min({in->left(), o.left(), n});
            o.p = std::copy(in->p, in->p + k, o.p);
            in->p += k, n -= k;
            in->refill(), o.refill();
        }
    }
}

// Sorts elements [lo, lo + n) of tree `t` by leaves (above). false, with nothing changed,
// when the scratch cannot be had from t's pool nor the default pool.
template <class T, class Comp>
bool sort_by_leaves(const TreeArray<T>& t, std::size_t lo, std::size_t n, Comp& comp) {
    std::optional<TreeArray<T>> scratch;
    for (BlockPool* pool : {&t.pool(), &default_pool()}) {
        try {
            scratch.emplace(n, *pool);
            break;
        } catch (const std::bad_alloc&) {         // the pool is full
        } catch (const std::invalid_argument&) {  // T does not fit the default pool's blocks
        }
    }
    if (!scratch) return false;
    // Runs in index space relative to lo: one per leaf the range touches.
    std::vector<std::size_t> ends;
    for (std::size_t done = 0; done < n;) {
        LeafCursor<T> c(t, lo + done);
        std::size_t m = std::min(c.left(), n - done);
        std::sort(c.p, c.p + m, comp);
        ends.push_back(done += m);
    }
    // Pairwise passes, the range and the scratch in turn (base: where index 0 of each is).
    const TreeArray<T>* src = &t;
    const TreeArray<T>* dst = &*scratch;
    std::size_t src_base = lo, dst_base = 0;
    while (ends.size() > 1) {
        std::size_t out = 0, start = 0;
        for (std::size_t r = 0; r < ends.size(); r += 2) {
            std::size_t mid = ends[r], end = r + 1 < ends.size() ? ends[r + 1] : mid;
            merge_runs(*src, src_base + start, mid - start, src_base + mid, end - mid, *dst, dst_base + start, comp);
            ends[out++] = end;
            start = end;
        }
        ends.resize(out);
        std::swap(src, dst);
        std::swap(src_base, dst_base);
    }
    if (src != &t) merge_runs(*src, src_base, n, src_base + n, 0, t, lo, comp);  // the result back: a copy
    return true;
}

// Sorts [first, first + n) of a PagedArray through a scratch TreeArray (above). false,
// with nothing changed, when the range's leaves exceed the budget or the default pool
// cannot hold the copy. pre: n >= 2.
template <class I, class Comp>
bool sort_paged(I first, std::size_t n, Comp& comp) {
    using T = std::iter_value_t<I>;
    const auto& a = *first.container();
    const std::size_t lo = first.index(), shift = a.shape().leaf_shift;
    const std::size_t leaves = ((lo + n - 1) >> shift) - (lo >> shift) + 1;
    if (leaves > a.budget() / a.pager().leaf_bytes()) return false;  // would page while sorting
    std::optional<TreeArray<T>> scratch;
    try {
        scratch.emplace(n, default_pool());
    } catch (const std::bad_alloc&) {         // the pool is full
        return false;
    } catch (const std::invalid_argument&) {  // T does not fit the default pool's blocks
        return false;
    }
    typename PagedArray<T>::const_iterator from = first;
    physmem::copy(from, from + static_cast<std::ptrdiff_t>(n), scratch->begin());
    if (!sort_by_leaves(*scratch, 0, n, comp)) std::sort(scratch->begin(), scratch->end(), comp);
    physmem::copy(std::as_const(*scratch).begin(), std::as_const(*scratch).end(), first);
    return true;
}

}  // namespace detail

template <std::random_access_iterator I, class Comp = std::ranges::less>
    requires std::sortable<I, Comp>
void sort(I first, I last, Comp comp = {}) {
    if constexpr (detail::sort_by_leaves_v<I, Comp>) {
        const std::size_t n = static_cast<std::size_t>(last - first);
        if (n < 2) return;  // also an empty range of default iterators: no array to look at
        const auto& tree = *first.container();
        const std::size_t lo = first.index(), shift = tree.shape().leaf_shift;
        if ((lo >> shift) == ((lo + n - 1) >> shift)) {  // within one leaf: its pointers
            auto* p = first.operator->();
            std::sort(p, p + n, comp);
            return;
        }
        if (detail::sort_by_leaves(tree, lo, n, comp)) return;
    } else if constexpr (detail::sort_paged_v<I, Comp>) {
        const std::size_t n = static_cast<std::size_t>(last - first);
        if (n < 2) return;
        if (detail::sort_paged(first, n, comp)) return;
    }
    std::sort(first, last, comp);
}

template <std::ranges::random_access_range R, class Comp = std::ranges::less>
    requires std::sortable<std::ranges::iterator_t<R>, Comp>
void sort(R&& r, Comp comp = {}) {
    physmem::sort(std::ranges::begin(r), std::ranges::end(r), std::move(comp));
}

}  // namespace physmem
