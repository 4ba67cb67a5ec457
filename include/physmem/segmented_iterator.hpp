// physmem/segmented_iterator.hpp — iterators whose range splits into contiguous runs, and
// a driver that walks one to three such ranges side by side, run by run.
//
// The model is libc++'s __segmented_iterator_traits (used by its deque): an algorithm over
// a TreeArray or PagedArray iterator range runs as a plain pointer loop over each leaf's
// part of the range (which the compiler vectorizes), and walks the tree once per leaf.
//
//   Segmented<It>::value     true for TreeIterator and PagedIterator (const or not).
//   Segmented<It>::run(it, n, f)
//                            f(p, m): p a T* (const T* for const iterators) to *it and
//                            m = min(n, elements left in its leaf) > 0. For a PagedArray
//                            the leaf is loaded and pinned while f runs (marked dirty for a
//                            non-const iterator). pre: 0 < n <= elements from it to the end.
//
//   zip_runs(n, k, its...)   k(m, xs...) over consecutive runs of [it, it+n) of every it at
//                            once: each x is a pointer into a leaf (for a segmented it) or
//                            the caller's iterator itself (any other it), which k advances
//                            by the m it consumes. k returns how many it consumed (m to go
//                            on, fewer to stop). The segmented its are advanced by what was
//                            consumed; returns the total consumed. The runs are the
//                            intersections of every range's leaf boundaries, in order.
//   pins_fit(its...)         whether the PagedArray leaves zip_runs pins at once (one per
//                            paged it) fit each pager's budget; when not, algorithms fall
//                            back to std:: through the (proxy) iterators, correct at any budget.
#pragma once

#include <algorithm>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "physmem/paged_array.hpp"
#include "physmem/tree_iterator.hpp"

namespace physmem {

template <class It>
struct Segmented : std::false_type {};

template <class C, bool Const>
struct Segmented<TreeIterator<C, Const>> : std::true_type {
    // The fast path: the iterator already holds the element's address.
    template <class F>
    static void run(const TreeIterator<C, Const>& it, std::size_t n, F&& f) {
        std::size_t left = it.container()->leaf_length() - (it.index() & it.container()->shape().leaf_mask());
        f(it.operator->(), std::min(n, left));
    }
};

template <class A, bool Const>
struct Segmented<PagedIterator<A, Const>> : std::true_type {
    // Pins the leaf for f (detail::with_leaf, paged_array.hpp); unpinned when f throws too.
    template <class F>
    static void run(const PagedIterator<A, Const>& it, std::size_t n, F&& f) {
        auto* a = it.container();
        const TreeShape& s = a->shape();
        std::size_t i = it.index(), k = i >> s.leaf_shift, lo = i & s.leaf_mask();
        std::size_t hi = std::min(lo + n, s.leaf_len());
        detail::with_leaf(*a, k, lo, hi, [&](auto span) { f(span.data(), span.size()); });
    }
};

template <class It>
inline constexpr bool segmented_v = Segmented<std::remove_cvref_t<It>>::value;

template <class... Its>
inline constexpr bool any_segmented_v = (segmented_v<Its> || ...);

namespace detail {

template <class It>
struct IsPaged : std::false_type {};
template <class A, bool Const>
struct IsPaged<PagedIterator<A, Const>> : std::true_type {};

// The pager a paged iterator's leaves come from and its budget in leaves; null otherwise.
template <class It>
std::pair<const Pager*, std::size_t> pager_of(const It& it) {
    if constexpr (IsPaged<It>::value) {
        const auto* a = it.container();
        return {&a->pager(), a->budget() / (a->leaf_length() * sizeof(typename It::value_type))};
    } else {
        return {nullptr, 0};
    }
}

// Element J of `t`, or p when J == I: a tuple of references with one replaced.
template <std::size_t I, std::size_t J, class Tup, class P>
constexpr auto& pick(Tup& t, P& p) {
    if constexpr (I == J) return p;
    else return std::get<J>(t);
}
template <std::size_t I, class Tup, class P, std::size_t... J>
constexpr auto replace_at(Tup& t, P& p, std::index_sequence<J...>) {
    return std::forward_as_tuple(pick<I, J>(t, p)...);
}

// zip_runs from element I on: the first segmented iterator at or after I splits n into runs.
template <std::size_t I, class K, class Tup>
std::size_t zip_from(std::size_t n, K& k, Tup& t) {
    constexpr std::size_t N = std::tuple_size_v<Tup>;
    if constexpr (I == N) {
        return std::apply([&](auto&... xs) -> std::size_t { return k(n, xs...); }, t);
    } else if constexpr (!segmented_v<std::tuple_element_t<I, Tup>>) {
        return zip_from<I + 1>(n, k, t);
    } else {
        auto& it = std::get<I>(t);
        std::size_t done = 0;
        while (done < n) {
            std::size_t m = 0, used = 0;
            Segmented<std::remove_cvref_t<decltype(it)>>::run(it, n - done, [&](auto p, std::size_t len) {
                m = len;
                auto inner = replace_at<I>(t, p, std::make_index_sequence<N>{});
                used = zip_from<I + 1>(len, k, inner);
            });
            it += static_cast<std::ptrdiff_t>(used);
            done += used;
            if (used < m) break;
        }
        return done;
    }
}

}  // namespace detail

template <class K, class... Its>
std::size_t zip_runs(std::size_t n, K&& k, Its&... its) {
    if (n == 0) return 0;
    std::tuple<Its&...> t(its...);
    return detail::zip_from<0>(n, k, t);
}

template <class... Its>
bool pins_fit(const Its&... its) {
    std::pair<const detail::Pager*, std::size_t> p[] = {detail::pager_of(its)...};
    for (const auto& [pager, frames] : p) {
        if (!pager) continue;
        std::size_t uses = 0;
        for (const auto& q : p) uses += q.first == pager;
        if (uses > frames) return false;
    }
    return true;
}

}  // namespace physmem
