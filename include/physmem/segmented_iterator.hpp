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
//                            Each PagedIterator pins a window of up to 8 consecutive
//                            leaves at a time (at most a quarter of its budget, shared
//                            among the zip's iterators on that pager; at least one).
//   pins_fit(its...)         whether the PagedArray leaves zip_runs pins at once (one per
//                            paged it) fit each pager's budget; when not, algorithms fall
//                            back to std:: through the (proxy) iterators, correct at any budget.
#pragma once

#include <algorithm>
#include <array>
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

// One iterator of a zip, as the runs see it. open(want) prepares the next `want` elements
// from the iterator on and returns how many of them it can serve (at least one);
// arg(pos, m) is what k gets for element pos of those (a pointer into its leaf, or the
// iterator itself), m cut to the run that pointer covers; finish(done) releases what open
// held and moves the iterator on by `done`.

// Any other iterator: k gets it and advances it itself.
template <class It>
struct PlainCursor {
    It& it;
    PlainCursor(It& i, std::size_t) : it(i) {}
    std::size_t open(std::size_t want) noexcept { return want; }
    It& arg(std::size_t, std::size_t&) noexcept { return it; }
    void finish(std::size_t) noexcept {}
};

// A segmented iterator whose leaves stay put (TreeIterator, CheckedTreeIterator): each
// run's address from Segmented::run at the iterator moved to the run.
template <class It>
struct StayingCursor {
    using P = decltype(std::declval<const It&>().operator->());
    It& it;
    It cur;
    std::size_t at = 0;  // cur is it + at
    StayingCursor(It& i, std::size_t) : it(i), cur(i) {}
    std::size_t open(std::size_t want) {
        cur = it, at = 0;
        return want;
    }
    P arg(std::size_t pos, std::size_t& m) {
        cur += static_cast<std::ptrdiff_t>(pos - at), at = pos;
        P p{};
        Segmented<It>::run(cur, m, [&](auto q, std::size_t len) { p = q, m = len; });
        return p;
    }
    void finish(std::size_t done) { it += static_cast<std::ptrdiff_t>(done); }
};

// Up to 8 consecutive leaves of one pager, pinned under one lock of it (pin_window), so a
// run of leaves enters the pager twice a window, not twice a leaf. at(j) is element j's
// address and marks its leaf reached; a non-const (writing) P marks the leaves reached
// dirty when they are unpinned (on the way out of an exception too).
template <class P>
struct PinnedLeaves {
    static constexpr bool kWrite = !std::is_const_v<std::remove_pointer_t<P>>;
    static constexpr std::size_t kMax = 8;

    Pager* pager;
    unsigned shift;
    std::size_t size, k0 = 0, count = 0, reached = 0;
    void* leaf[kMax];

    // w: the window's leaves, clamped to [1, kMax].
    PinnedLeaves(Pager* p, unsigned s, std::size_t w) noexcept
        : pager(p), shift(s), size(std::clamp<std::size_t>(w, 1, kMax)) {}
    PinnedLeaves(PinnedLeaves&& o) noexcept : PinnedLeaves(o.pager, o.shift, o.size) {}  // before open
    ~PinnedLeaves() { close(); }

    // Pins leaves k, k+1, ... (need of them, at most size; fewer when frames run out) in
    // place of the window held; returns how many.
    std::size_t open(std::size_t k, std::size_t need) {
        close();
        k0 = k;
        return count = pager->pin_window(k, std::min(need, size), leaf);
    }
    // Whether leaf k is pinned (a k below k0 wraps past count).
    bool holds(std::size_t k) const noexcept { return k - k0 < count; }
    // Elements from j to the end of its leaf.
    std::size_t left(std::size_t j) const noexcept { return (std::size_t{1} << shift) - (j & ((std::size_t{1} << shift) - 1)); }
    // pre: holds(j >> shift).
    P at(std::size_t j) noexcept {
        const std::size_t c = (j >> shift) - k0;
        reached = std::max(reached, c + 1);
        return static_cast<P>(leaf[c]) + (j & ((std::size_t{1} << shift) - 1));
    }
    void close() noexcept {
        if (count) pager->unpin_window(k0, count, kWrite ? reached : 0);
        count = reached = 0;
    }
};

// A PagedIterator beside another: open pins a window of leaves from the iterator on (a
// scan of two paged arrays that entered both pagers at every leaf ran measurably slower
// than the same scan of two trees, by more the smaller the leaves; the algorithms suite
// shows it).
template <class It>
struct PagedCursor {
    using P = decltype(std::declval<const It&>().operator->());

    It& it;
    PinnedLeaves<P> pins;
    std::size_t i0 = 0;

    PagedCursor(It& i, std::size_t w)
        : it(i), pins(&i.container()->pager(), i.container()->shape().leaf_shift, w) {}

    std::size_t open(std::size_t want) {
        i0 = it.index();
        const std::size_t k = i0 >> pins.shift;
        const std::size_t count = pins.open(k, ((i0 + want - 1) >> pins.shift) - k + 1);
        return std::min(want, ((k + count) << pins.shift) - i0);
    }
    P arg(std::size_t pos, std::size_t& m) noexcept {
        m = std::min(m, pins.left(i0 + pos));
        return pins.at(i0 + pos);
    }
    void finish(std::size_t done) {
        pins.close();
        it += static_cast<std::ptrdiff_t>(done);
    }
};

template <class It>
using CursorFor = std::conditional_t<IsPaged<std::remove_cv_t<It>>::value, PagedCursor<It>,
                                     std::conditional_t<segmented_v<It>, StayingCursor<It>, PlainCursor<It>>>;

// For each iterator: its pager's budget in leaves and how many of the iterators page
// from that pager ({0, 0} for an iterator that is not paged).
template <class... Its>
std::array<std::pair<std::size_t, std::size_t>, sizeof...(Its)> pin_shares(const Its&... its) {
    std::pair<const Pager*, std::size_t> p[] = {pager_of(its)...};
    std::array<std::pair<std::size_t, std::size_t>, sizeof...(Its)> s{};
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (!p[i].first) continue;
        s[i].first = p[i].second;
        for (const auto& q : p) s[i].second += q.first == p[i].first;
    }
    return s;
}

// The leaves each paged iterator may pin at once: a quarter of its pager's budget shared
// by the paged iterators of the zip on that pager (at least one each), so that the
// windows leave frames for other pins and faults.
template <class... Its>
std::array<std::size_t, sizeof...(Its)> windows(const Its&... its) {
    std::array<std::size_t, sizeof...(Its)> w{};
    auto s = pin_shares(its...);
    for (std::size_t i = 0; i < w.size(); ++i)
        if (s[i].second) w[i] = s[i].first / (4 * s[i].second);
    return w;
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

template <class It>
struct IsTreeIterator : std::false_type {};
template <class C, bool Const>
struct IsTreeIterator<TreeIterator<C, Const>> : std::true_type {};

template <std::size_t I, class K, class Tup>
std::size_t zip_from(std::size_t n, K& k, Tup& t);

// zip_from's runs of a TreeIterator (element I), leaf by leaf straight from the array: the
// next leaf's address is looked up before the current leaf's run, and the iterator walks
// once, at the end. A run that starts on an address held in a register since before the
// run before it kept the array's speed; one whose start came from a load just before it
// (the walk's, or the iterator's copy in memory) ran up to 1.5x slower on a CPU of the
// lab's (the same std::count_if loop over the same 64 KiB leaves: the commit that made this
// change gives the figures).
template <std::size_t I, class K, class Tup>
std::size_t zip_tree(std::size_t n, K& k, Tup& t) {
    constexpr std::size_t N = std::tuple_size_v<Tup>;
    auto& it = std::get<I>(t);
    using P = typename std::remove_cvref_t<decltype(it)>::pointer;
    const auto* a = it.container();
    const TreeShape& s = a->shape();
    const std::size_t first = it.index();
    P p = it.operator->();
    std::size_t done = 0;
    while (done < n) {
        const std::size_t i = first + done;
        const std::size_t m = std::min(n - done, s.leaf_len() - (i & s.leaf_mask()));
        P next = done + m < n ? static_cast<P>(a->leaf_data((i + m) >> s.leaf_shift)) : p;
        auto inner = replace_at<I>(t, p, std::make_index_sequence<N>{});
        const std::size_t used = zip_from<I + 1>(m, k, inner);
        done += used;
        if (used < m) break;
        p = next;
    }
    it += static_cast<std::ptrdiff_t>(done);
    return done;
}

// The leaves of the zip's one PagedIterator, pinned a window at a time (PinnedLeaves, a
// quarter of its budget at most): run(it, n, f) calls f(p, m) as Segmented::run does,
// pinning the next window only when its leaf is outside the one pinned. Pinning each
// leaf alone (the pager's lock taken twice a leaf) made physmem::find, all_of, any_of and
// none_of over one paged array of 64 KiB leaves ~1.15x the vector's where the tree's were
// ~1.00x (the commit that made this change gives the figures). The runs stay in
// zip_from's loop: the same windows driven by a loop of their own left g++ a vectorized
// sum loop it did not align, and std::accumulate ran 1.2x the vector's.
struct NoWindow {  // LeafWindow's place for the other segmented iterators
    template <class It>
    explicit NoWindow(const It&) noexcept {}
};
template <class It>
class LeafWindow {
  public:
    explicit LeafWindow(const It& it)
        : pins_(&it.container()->pager(), it.container()->shape().leaf_shift, pager_of(it).second / 4) {}

    // pre: 0 < n <= elements from it to the end.
    template <class F>
    void run(const It& it, std::size_t n, F&& f) {
        const std::size_t i = it.index(), k = i >> pins_.shift;
        if (!pins_.holds(k)) pins_.open(k, ((i + n - 1) >> pins_.shift) - k + 1);
        f(pins_.at(i), std::min(n, pins_.left(i)));
    }

  private:
    PinnedLeaves<typename It::pointer> pins_;
};

// zip_runs with at most one paged iterator, from element I on: the first segmented
// iterator at or after I splits n into runs, a leaf at a time (a PagedIterator's leaves
// pinned a window at a time, LeafWindow).
template <std::size_t I, class K, class Tup>
std::size_t zip_from(std::size_t n, K& k, Tup& t) {
    constexpr std::size_t N = std::tuple_size_v<Tup>;
    if constexpr (I == N) {
        return std::apply([&](auto&... xs) -> std::size_t { return k(n, xs...); }, t);
    } else if constexpr (!segmented_v<std::tuple_element_t<I, Tup>>) {
        return zip_from<I + 1>(n, k, t);
    } else if constexpr (IsTreeIterator<std::remove_cvref_t<std::tuple_element_t<I, Tup>>>::value) {
        return zip_tree<I>(n, k, t);
    } else {
        auto& it = std::get<I>(t);
        using It = std::remove_cvref_t<decltype(it)>;
        [[maybe_unused]] std::conditional_t<IsPaged<It>::value, LeafWindow<It>, NoWindow> window(it);
        std::size_t done = 0;
        while (done < n) {
            std::size_t m = 0, used = 0;
            auto f = [&](auto p, std::size_t len) {
                m = len;
                auto inner = replace_at<I>(t, p, std::make_index_sequence<N>{});
                used = zip_from<I + 1>(len, k, inner);
            };
            if constexpr (IsPaged<It>::value) window.run(it, n - done, f);
            else Segmented<It>::run(it, n - done, f);
            it += static_cast<std::ptrdiff_t>(used);
            done += used;
            if (used < m) break;
        }
        return done;
    }
}

// The runs of one window of every cursor: [0, want) of the elements they opened, k(m,
// xs...) on each. Returns the elements consumed; `stopped` when k consumed fewer than
// offered.
template <class K, class Cs, std::size_t... I>
std::size_t run_window(K& k, Cs& cs, std::size_t want, bool& stopped, std::index_sequence<I...>) {
    std::size_t pos = 0;
    while (pos < want) {
        std::size_t m = want - pos;
        std::tuple<decltype(std::get<I>(cs).arg(pos, m))...> args{std::get<I>(cs).arg(pos, m)...};
        std::size_t used = k(m, std::get<I>(args)...);
        pos += used;
        if (used < m) {
            stopped = true;
            break;
        }
    }
    return pos;
}
}  // namespace detail

template <class K, class... Its>
std::size_t zip_runs(std::size_t n, K&& k, Its&... its) {
    if (n == 0) return 0;
    constexpr int kPaged = (int{detail::IsPaged<std::remove_cv_t<Its>>::value} + ... + 0);
    if constexpr (kPaged < 2) {  // leaf by leaf (one paged iterator's leaves a window at a time)
        std::tuple<Its&...> t(its...);
        return detail::zip_from<0>(n, k, t);
    } else {
        const auto w = detail::windows(its...);
        return [&]<std::size_t... I>(std::index_sequence<I...> is) -> std::size_t {
            std::tuple<detail::CursorFor<Its>...> cs(detail::CursorFor<Its>(its, w[I])...);
            std::size_t done = 0;
            bool stopped = false;
            while (done < n && !stopped) {
                std::size_t want = n - done;
                ((want = std::get<I>(cs).open(want)), ...);
                std::size_t pos = detail::run_window(k, cs, want, stopped, is);
                (std::get<I>(cs).finish(pos), ...);
                done += pos;
            }
            return done;
        }(std::index_sequence_for<Its...>{});
    }
}

template <class... Its>
bool pins_fit(const Its&... its) {
    for (const auto& [frames, uses] : detail::pin_shares(its...))
        if (uses > frames) return false;
    return true;
}

}  // namespace physmem
