// physmem/algorithm.hpp — <algorithm> and <numeric> that run leaf by leaf on TreeArray
// and PagedArray iterators (segmented algorithms).
//
//   physmem::TreeArray<double> a(n, pool);
//   std::vector<double> v(n);
//   physmem::copy(v.begin(), v.end(), a.begin());        // vector -> tree, memmove per leaf
//   double s = physmem::accumulate(a.begin(), a.end(), 0.0);
//   auto it = physmem::find(a, 42.0);                     // range form
//
// Each function has the signature, the result, the order of application and the
// iterator requirements of the std:: one of the same name (the range forms take a common
// range and return what the iterator form returns, not std::ranges' result structs).
// When any iterator involved is a TreeIterator or PagedIterator (segmented_iterator.hpp)
// the work is a plain pointer loop over each run of elements that sit in one leaf of every
// range involved (tree -> vector, vector -> tree, tree -> tree with other leaf boundaries):
// the compiler vectorizes it and the tree is walked once per leaf. Otherwise, and when the
// other range's iterators are not forward iterators where a length is needed, the call
// forwards to std:: — except count, count_if, unary transform and minmax_element (of
// integers under the default order) on contiguous ranges, which run the same out-of-line
// loop they run on each leaf (count_run, transform_run, minmax_run).
//
// PagedArray: each leaf is loaded and pinned while its run is processed (one pin per paged
// range at a time, or a window of up to 8 leaves a range when two or more ranges are paged;
// a non-const iterator marks the leaves it reached dirty). When the pins an algorithm
// needs at once exceed a pager's budget (two ranges of one array under a one-leaf budget),
// it forwards to std:: through the proxy iterators instead: correct at every budget. A
// callback (for_each's f, a predicate, generate's g) must not touch another leaf of a
// paged array the algorithm runs over when the budget holds no free frame: that access
// throws std::runtime_error (every frame pinned), as inside for_each_segment.
//
// Large copies: copy, copy_n and move of trivially copyable elements larger in all than
// 3/4 of the last-level cache store their runs non-temporally (detail::stream_copy), as
// glibc's memmove does for one contiguous range that large — a run of a leaf never is.
//
// reduce and transform_reduce fold each run with std::reduce and the runs left to right:
// a valid order for them, not necessarily the one std::reduce picks on a vector (equal for
// associative and commutative operations, which those functions require).
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <iterator>
#include <numeric>
#include <optional>
#include <ranges>
#include <type_traits>
#include <utility>

#include "physmem/segmented_iterator.hpp"

namespace physmem {

namespace detail {

// Whether to run by leaves: some iterator is segmented and the first range's length
// can be taken (a forward iterator; segmented ones are random access).
template <class I, class... Os>
inline constexpr bool by_runs_v = any_segmented_v<I, Os...> && std::forward_iterator<I>;

template <class I>
std::size_t length(const I& first, const I& last) {
    return static_cast<std::size_t>(std::distance(first, last));
}

// The best element so far of a min/max search: its address when leaves stay put (tree),
// a copy when they may leave memory once unpinned (paged).
template <class I>
class Best {
    using V = std::iter_value_t<I>;
    static constexpr bool kCopy = IsPaged<I>::value;
    std::conditional_t<kCopy, std::optional<V>, const V*> v_{};

  public:
    void set(const V& x) {
        if constexpr (kCopy) v_ = x;
        else v_ = &x;
    }
    const V& get() const { return *v_; }
};

// Large copies (src/algo/stream_copy.cpp). stream_copy: n bytes from s to d, stored past
// the cache (non-temporal stores) when the ranges do not overlap and n is at least 16 KiB,
// else memmove. stream_copy_threshold: the copy size from which copy, copy_n and move
// stream their runs, 3/4 of the last-level cache (0, never, when the C library reports no
// cache size) — what glibc's memmove does for one range that large, which a run of a leaf
// never is.
void stream_copy(void* d, const void* s, std::size_t n) noexcept;
std::size_t stream_copy_threshold() noexcept;

// Whether a copy of n elements of I streams its runs.
template <class I>
bool streams(std::size_t n) noexcept {
    const std::size_t t = stream_copy_threshold();
    return t != 0 && n * sizeof(std::iter_value_t<I>) >= t;
}

// Contiguous iterators over the same trivially copyable type: a run copies as bytes.
template <class X, class Y>
constexpr bool bytewise() {
    if constexpr (std::contiguous_iterator<X> && std::contiguous_iterator<Y>) {
        using T = std::iter_value_t<X>;
        return std::is_same_v<T, std::iter_value_t<Y>> && std::is_trivially_copyable_v<T> &&
               std::is_assignable_v<std::iter_reference_t<Y>, std::iter_reference_t<X>>;
    } else {
        return false;
    }
}
template <class X, class Y>
inline constexpr bool bytewise_v = bytewise<X, Y>();

// One run of copy, copy_n or move: m elements from in to o, both advanced past them;
// streamed when `stream` (the whole copy is large) and the elements copy as bytes.
template <class X, class Y>
void copy_run(X& in, std::size_t m, Y& o, bool stream) {
    if constexpr (bytewise_v<X, Y>) {
        if (stream) {
            stream_copy(std::to_address(o), std::to_address(in), m * sizeof(std::iter_value_t<X>));
            in += static_cast<std::ptrdiff_t>(m);
            o += static_cast<std::ptrdiff_t>(m);
            return;
        }
    }
    auto r = std::ranges::copy_n(in, static_cast<std::ptrdiff_t>(m), o);
    in = r.in;
    o = r.out;
}

}  // namespace detail

// --- for_each, for_each_n ---------------------------------------------------------------
template <std::input_iterator I, class F>
F for_each(I first, I last, F f) {
    if constexpr (segmented_v<I>) {
        zip_runs(detail::length(first, last), [&](std::size_t m, auto p) {
            for (std::size_t j = 0; j < m; ++j) f(p[j]);
            return m;
        }, first);
        return f;
    } else {
        return std::for_each(first, last, std::move(f));
    }
}
template <std::input_iterator I, class Size, class F>
I for_each_n(I first, Size n, F f) {
    if constexpr (segmented_v<I>) {
        if (n <= 0) return first;
        zip_runs(static_cast<std::size_t>(n), [&](std::size_t m, auto p) {
            for (std::size_t j = 0; j < m; ++j) f(p[j]);
            return m;
        }, first);
        return first;
    } else {
        return std::for_each_n(first, n, std::move(f));
    }
}

// --- copy, copy_n, move -------------------------------------------------------------------
template <std::input_iterator I, class O>
O copy(I first, I last, O out) {
    if constexpr (detail::by_runs_v<I, O>) {
        if (pins_fit(first, out)) {
            const std::size_t n = detail::length(first, last);
            const bool stream = detail::streams<I>(n);
            zip_runs(n, [stream](std::size_t m, auto& in, auto& o) {
                detail::copy_run(in, m, o, stream);
                return m;
            }, first, out);
            return out;
        }
    }
    return std::copy(first, last, out);
}
template <std::input_iterator I, class Size, class O>
O copy_n(I first, Size n, O out) {
    if constexpr (any_segmented_v<I, O>) {
        if (n <= 0) return out;
        if (pins_fit(first, out)) {
            const bool stream = detail::streams<I>(static_cast<std::size_t>(n));
            zip_runs(static_cast<std::size_t>(n), [stream](std::size_t m, auto& in, auto& o) {
                detail::copy_run(in, m, o, stream);
                return m;
            }, first, out);
            return out;
        }
    }
    return std::copy_n(first, n, out);
}
template <std::input_iterator I, class O>
O move(I first, I last, O out) {
    if constexpr (detail::by_runs_v<I, O>) {
        if (pins_fit(first, out)) {
            const std::size_t n = detail::length(first, last);
            const bool stream = detail::streams<I>(n);
            zip_runs(n, [stream](std::size_t m, auto& in, auto& o) {
                if constexpr (detail::bytewise_v<std::remove_reference_t<decltype(in)>, std::remove_reference_t<decltype(o)>>) {
                    detail::copy_run(in, m, o, stream);  // a move of these is a copy
                } else {
                    auto x = in;
                    auto y = o;
                    for (std::size_t j = 0; j < m; ++j, ++x, ++y) *y = std::move(*x);
                    in = x;
                    o = y;
                }
                return m;
            }, first, out);
            return out;
        }
    }
    return std::move(first, last, out);
}

// --- fill, fill_n, generate, generate_n, iota ---------------------------------------------
template <std::forward_iterator I, class T>
void fill(I first, I last, const T& value) {
    if constexpr (segmented_v<I>)
        zip_runs(detail::length(first, last), [&](std::size_t m, auto p) { return std::fill_n(p, m, value), m; }, first);
    else
        std::fill(first, last, value);
}
template <class I, class Size, class T>
I fill_n(I first, Size n, const T& value) {
    if constexpr (segmented_v<I>) {
        if (n <= 0) return first;
        zip_runs(static_cast<std::size_t>(n), [&](std::size_t m, auto p) { return std::fill_n(p, m, value), m; }, first);
        return first;
    } else {
        return std::fill_n(first, n, value);
    }
}
template <std::forward_iterator I, class G>
void generate(I first, I last, G g) {
    if constexpr (segmented_v<I>)
        zip_runs(detail::length(first, last), [&](std::size_t m, auto p) {
            for (std::size_t j = 0; j < m; ++j) p[j] = g();
            return m;
        }, first);
    else
        std::generate(first, last, std::move(g));
}
template <class I, class Size, class G>
I generate_n(I first, Size n, G g) {
    if constexpr (segmented_v<I>) {
        if (n <= 0) return first;
        zip_runs(static_cast<std::size_t>(n), [&](std::size_t m, auto p) {
            for (std::size_t j = 0; j < m; ++j) p[j] = g();
            return m;
        }, first);
        return first;
    } else {
        return std::generate_n(first, n, std::move(g));
    }
}
template <std::forward_iterator I, class T>
void iota(I first, I last, T value) {
    if constexpr (segmented_v<I>)
        zip_runs(detail::length(first, last), [&](std::size_t m, auto p) {
            for (std::size_t j = 0; j < m; ++j, ++value) p[j] = value;
            return m;
        }, first);
    else
        std::iota(first, last, std::move(value));
}

// --- transform, replace, replace_if -------------------------------------------------------
namespace detail {
// *y = op(*x) for m elements, in order, advancing x and y past them. Out of line, as
// count_run, so a leaf's run and a contiguous range's are the same compiled loop.
// Over one array in place (x == y, pointers to one type) the loop reads and writes through
// one pointer: with two, the compiler must assume each store may change the next element
// read, and keeps the loop scalar and in order.
template <class X, class Y, class Op>
[[gnu::noinline]] void transform_run(X& x, Y& y, std::size_t m, Op& op) {
    if constexpr (std::is_pointer_v<X> && std::is_pointer_v<Y> &&
                  std::is_same_v<std::remove_cv_t<std::remove_pointer_t<X>>, std::remove_pointer_t<Y>>) {
        if (static_cast<const void*>(x) == static_cast<const void*>(y)) {
            for (std::size_t j = 0; j < m; ++j) y[j] = op(y[j]);
            x += m, y += m;
            return;
        }
    }
    auto a = x;
    auto b = y;
    for (std::size_t j = 0; j < m; ++j, ++a, ++b) *b = op(*a);
    x = a;
    y = b;
}
}  // namespace detail

// Unary transform runs detail::transform_run over each run of leaves, and over two
// contiguous ranges (std::vector's) too.
template <std::input_iterator I, class O, class Op>
O transform(I first, I last, O out, Op op) {
    if constexpr (detail::by_runs_v<I, O>) {
        if constexpr (std::is_same_v<I, O> && segmented_v<I>) {
            // In place (out is first, on one array): out's runs alone, as for_each_segment
            // walks them. Zipping the iterator with itself walked each leaf twice: 1.06-1.08x
            // the vector's time on 64 KiB leaves, where for_each_segment's loop is 1.00x.
            if (first.container() == out.container() && first == out) {
                zip_runs(detail::length(first, last), [&](std::size_t m, auto& o) {
                    auto in = o;
                    detail::transform_run(in, o, m, op);
                    return m;
                }, out);
                return out;
            }
        }
        if (pins_fit(first, out)) {
            zip_runs(detail::length(first, last), [&](std::size_t m, auto& in, auto& o) {
                detail::transform_run(in, o, m, op);
                return m;
            }, first, out);
            return out;
        }
    } else if constexpr (std::contiguous_iterator<I> && std::contiguous_iterator<O>) {
        auto x = std::to_address(first);
        auto y = std::to_address(out);
        detail::transform_run(x, y, detail::length(first, last), op);
        return out + (y - std::to_address(out));
    }
    return std::transform(first, last, out, std::move(op));
}
template <std::input_iterator I1, std::input_iterator I2, class O, class Op>
O transform(I1 first1, I1 last1, I2 first2, O out, Op op) {
    if constexpr (detail::by_runs_v<I1, I2, O>) {
        if (pins_fit(first1, first2, out)) {
            zip_runs(detail::length(first1, last1), [&](std::size_t m, auto& a, auto& b, auto& o) {
                auto x = a;
                auto y = b;
                auto z = o;
                for (std::size_t j = 0; j < m; ++j, ++x, ++y, ++z) *z = op(*x, *y);
                a = x;
                b = y;
                o = z;
                return m;
            }, first1, first2, out);
            return out;
        }
    }
    return std::transform(first1, last1, first2, out, std::move(op));
}
template <std::forward_iterator I, class P, class T>
void replace_if(I first, I last, P pred, const T& new_value) {
    if constexpr (segmented_v<I>)
        zip_runs(detail::length(first, last), [&](std::size_t m, auto p) {
            for (std::size_t j = 0; j < m; ++j)
                if (pred(p[j])) p[j] = new_value;
            return m;
        }, first);
    else
        std::replace_if(first, last, std::move(pred), new_value);
}
template <std::forward_iterator I, class T>
void replace(I first, I last, const T& old_value, const T& new_value) {
    if constexpr (segmented_v<I>)
        zip_runs(detail::length(first, last), [&](std::size_t m, auto p) {
            // A pointer walk, not p[j]: at -O3 g++ 12 kept p[j]'s indexed compare and store,
            // and the loop ran at 1.4-1.7x std::replace's over a vector (the same loop with
            // a pointer ran level with it; the algorithms suite, 64 MiB on THP).
            for (auto e = p + m; p != e; ++p)
                if (*p == old_value) *p = new_value;
            return m;
        }, first);
    else
        std::replace(first, last, old_value, new_value);
}

// --- folds --------------------------------------------------------------------------------
template <std::input_iterator I, class T, class Op = std::plus<>>
T accumulate(I first, I last, T init, Op op = {}) {
    if constexpr (segmented_v<I>) {
        zip_runs(detail::length(first, last), [&](std::size_t m, auto p) {
            init = std::accumulate(p, p + m, std::move(init), op);
            return m;
        }, first);
        return init;
    } else {
        return std::accumulate(first, last, std::move(init), std::move(op));
    }
}
template <std::input_iterator I, class T, class Op = std::plus<>>
T reduce(I first, I last, T init, Op op = {}) {
    if constexpr (segmented_v<I>) {
        zip_runs(detail::length(first, last), [&](std::size_t m, auto p) {
            init = std::reduce(p, p + m, std::move(init), op);
            return m;
        }, first);
        return init;
    } else {
        return std::reduce(first, last, std::move(init), std::move(op));
    }
}
template <std::input_iterator I>
std::iter_value_t<I> reduce(I first, I last) {
    return physmem::reduce(first, last, std::iter_value_t<I>{});
}
// transform_reduce over one range: reduce(init, transform(x)) for each x.
template <std::input_iterator I, class T, class R, class U>
T transform_reduce(I first, I last, T init, R reduce, U transform) {
    if constexpr (segmented_v<I>) {
        zip_runs(detail::length(first, last), [&](std::size_t m, auto p) {
            init = std::transform_reduce(p, p + m, std::move(init), reduce, transform);
            return m;
        }, first);
        return init;
    } else {
        return std::transform_reduce(first, last, std::move(init), std::move(reduce), std::move(transform));
    }
}
// Over two ranges: reduce(init, transform(x, y)); by default a sum of products.
template <std::input_iterator I1, std::input_iterator I2, class T, class R = std::plus<>, class U = std::multiplies<>>
T transform_reduce(I1 first1, I1 last1, I2 first2, T init, R reduce = {}, U transform = {}) {
    if constexpr (detail::by_runs_v<I1, I2> && std::forward_iterator<I2>) {
        if (pins_fit(first1, first2)) {
            zip_runs(detail::length(first1, last1), [&](std::size_t m, auto& a, auto& b) {
                auto end = std::next(a, static_cast<std::ptrdiff_t>(m));
                init = std::transform_reduce(a, end, b, std::move(init), reduce, transform);
                a = end;
                b = std::next(b, static_cast<std::ptrdiff_t>(m));
                return m;
            }, first1, first2);
            return init;
        }
    }
    return std::transform_reduce(first1, last1, first2, std::move(init), std::move(reduce), std::move(transform));
}
template <std::input_iterator I1, std::input_iterator I2, class T, class Op1 = std::plus<>, class Op2 = std::multiplies<>>
T inner_product(I1 first1, I1 last1, I2 first2, T init, Op1 op1 = {}, Op2 op2 = {}) {
    if constexpr (detail::by_runs_v<I1, I2>) {
        if (pins_fit(first1, first2)) {
            zip_runs(detail::length(first1, last1), [&](std::size_t m, auto& a, auto& b) {
                auto end = std::next(a, static_cast<std::ptrdiff_t>(m));
                init = std::inner_product(a, end, b, std::move(init), op1, op2);
                a = end;
                b = std::next(b, static_cast<std::ptrdiff_t>(m));
                return m;
            }, first1, first2);
            return init;
        }
    }
    return std::inner_product(first1, last1, first2, std::move(init), std::move(op1), std::move(op2));
}

// --- searches -----------------------------------------------------------------------------
template <std::input_iterator I, class P>
I find_if(I first, I last, P pred) {
    if constexpr (segmented_v<I>) {
        zip_runs(detail::length(first, last), [&](std::size_t m, auto p) {
            return static_cast<std::size_t>(std::find_if(p, p + m, std::ref(pred)) - p);
        }, first);
        return first;  // advanced to the match (zip_runs stops there), or last
    } else {
        return std::find_if(first, last, std::move(pred));
    }
}
template <std::input_iterator I, class P>
I find_if_not(I first, I last, P pred) {
    return physmem::find_if(first, last, [&pred](const auto& x) { return !pred(x); });
}
template <std::input_iterator I, class T>
I find(I first, I last, const T& value) {
    return physmem::find_if(first, last, [&value](const auto& x) { return x == value; });
}
template <std::input_iterator I, class P>
bool all_of(I first, I last, P pred) {
    return physmem::find_if_not(first, last, std::ref(pred)) == last;
}
template <std::input_iterator I, class P>
bool any_of(I first, I last, P pred) {
    return physmem::find_if(first, last, std::ref(pred)) != last;
}
template <std::input_iterator I, class P>
bool none_of(I first, I last, P pred) {
    return physmem::find_if(first, last, std::ref(pred)) == last;
}
namespace detail {
// The elements of p[0, m) satisfying pred, pred applied to each in order: two elements an
// iteration into two counts, each pred result added as 0 or 1 (no branch on it). The
// one-element loop of std::count_if (load, test, add with carry, step, compare, branch)
// issues about as many operations an element as a wide core dispatches a cycle, so any
// stall in it is lost time and its speed depended on where the loop landed (the commit
// that added count_run gives the figures).
template <class P, class Pred>
[[gnu::noinline]] std::size_t count_run(P p, std::size_t m, Pred& pred) {
    std::size_t c0 = 0, c1 = 0, j = 0;
    for (; j + 2 <= m; j += 2) {
        c0 += static_cast<bool>(pred(p[j]));
        c1 += static_cast<bool>(pred(p[j + 1]));
    }
    if (j < m) c0 += static_cast<bool>(pred(p[j]));
    return c0 + c1;
}
}  // namespace detail

// count_if and count run detail::count_run over each leaf's run, and over a contiguous
// range too (a std::vector's), so both run the same loop.
template <std::input_iterator I, class P>
std::iter_difference_t<I> count_if(I first, I last, P pred) {
    if constexpr (segmented_v<I>) {
        std::iter_difference_t<I> c = 0;
        zip_runs(detail::length(first, last), [&](std::size_t m, auto p) {
            c += static_cast<std::iter_difference_t<I>>(detail::count_run(p, m, pred));
            return m;
        }, first);
        return c;
    } else if constexpr (std::contiguous_iterator<I>) {
        return static_cast<std::iter_difference_t<I>>(
            detail::count_run(std::to_address(first), detail::length(first, last), pred));
    } else {
        return std::count_if(first, last, std::move(pred));
    }
}
template <std::input_iterator I, class T>
std::iter_difference_t<I> count(I first, I last, const T& value) {
    return physmem::count_if(first, last, [&value](const auto& x) { return x == value; });
}

// --- mismatch, equal ----------------------------------------------------------------------
// The first pair that differs (pred false), within n elements of both.
namespace detail {
template <class I1, class I2, class P>
std::pair<I1, I2> mismatch_n(I1 first1, std::size_t n, I2 first2, P& pred) {
    zip_runs(n, [&](std::size_t m, auto& a, auto& b) {
        auto x = a;
        auto y = b;
        std::size_t j = 0;
        for (; j < m; ++j, ++x, ++y)
            if (!pred(*x, *y)) break;
        a = x;
        b = y;
        return j;
    }, first1, first2);
    return {first1, first2};
}
}  // namespace detail

template <std::input_iterator I1, std::input_iterator I2, class P = std::equal_to<>>
std::pair<I1, I2> mismatch(I1 first1, I1 last1, I2 first2, P pred = {}) {
    if constexpr (detail::by_runs_v<I1, I2>)
        if (pins_fit(first1, first2)) return detail::mismatch_n(first1, detail::length(first1, last1), first2, pred);
    return std::mismatch(first1, last1, first2, std::move(pred));
}
template <std::input_iterator I1, std::input_iterator I2, class P = std::equal_to<>>
std::pair<I1, I2> mismatch(I1 first1, I1 last1, I2 first2, I2 last2, P pred = {}) {
    if constexpr (detail::by_runs_v<I1, I2> && std::forward_iterator<I2>) {
        if (pins_fit(first1, first2)) {
            std::size_t n = std::min(detail::length(first1, last1), detail::length(first2, last2));
            return detail::mismatch_n(first1, n, first2, pred);
        }
    }
    return std::mismatch(first1, last1, first2, last2, std::move(pred));
}
template <std::input_iterator I1, std::input_iterator I2, class P = std::equal_to<>>
bool equal(I1 first1, I1 last1, I2 first2, P pred = {}) {
    return physmem::mismatch(first1, last1, first2, std::ref(pred)).first == last1;
}
template <std::input_iterator I1, std::input_iterator I2, class P = std::equal_to<>>
bool equal(I1 first1, I1 last1, I2 first2, I2 last2, P pred = {}) {
    if constexpr (detail::by_runs_v<I1, I2> && std::forward_iterator<I2>) {
        if (detail::length(first1, last1) != detail::length(first2, last2)) return false;
        return physmem::equal(first1, last1, first2, std::ref(pred));
    }
    return std::equal(first1, last1, first2, last2, std::move(pred));
}

// --- min_element, max_element, minmax_element ---------------------------------------------
// Each run's best (std:: on the run) against the best so far: the first smallest, the first
// largest; minmax_element: the first smallest and the last largest, as std::'s.
template <std::forward_iterator I, class C = std::less<>>
I min_element(I first, I last, C comp = {}) {
    if constexpr (segmented_v<I>) {
        I start = first;
        std::size_t pos = 0, best = detail::length(first, last);
        detail::Best<I> v;
        zip_runs(best, [&](std::size_t m, auto p) {
            auto q = std::min_element(p, p + m, std::ref(comp));
            if (pos == 0 || comp(*q, v.get())) best = pos + (q - p), v.set(*q);
            return pos += m, m;
        }, first);
        return start + static_cast<std::iter_difference_t<I>>(best);
    } else {
        return std::min_element(first, last, std::move(comp));
    }
}
template <std::forward_iterator I, class C = std::less<>>
I max_element(I first, I last, C comp = {}) {
    if constexpr (segmented_v<I>) {
        I start = first;
        std::size_t pos = 0, best = detail::length(first, last);
        detail::Best<I> v;
        zip_runs(best, [&](std::size_t m, auto p) {
            auto q = std::max_element(p, p + m, std::ref(comp));
            if (pos == 0 || comp(v.get(), *q)) best = pos + (q - p), v.set(*q);
            return pos += m, m;
        }, first);
        return start + static_cast<std::iter_difference_t<I>>(best);
    } else {
        return std::max_element(first, last, std::move(comp));
    }
}
namespace detail {
// minmax_element by value: integers under the default order, where two equal elements are
// alike, so the first smallest and the last largest are found from the values alone.
template <class V, class C>
inline constexpr bool minmax_by_value_v =
    std::is_integral_v<V> &&
    (std::is_same_v<C, std::less<>> || std::is_same_v<C, std::less<V>> || std::is_same_v<C, std::ranges::less>);

// The answer so far of a search by value: positions counted from the search's start.
template <class V>
struct MinMax {
    std::size_t lo = 0, hi = 0;
    V vlo{}, vhi{};
};

// Folds p[0, m), at positions pos.., into r, a chunk of 2048 elements at a time (8-16 KiB:
// still in L1 for a second look): its smallest and largest by a branch-free pass, then,
// only when the chunk improves on r (or is the search's first: r holds nothing yet), the
// position of its first smallest or last largest.
// std::minmax_element branches on each pair's order, which random data mispredicts half the
// time (about 3x slower). Out of line, as count_run: a leaf's run and a contiguous range's
// are one compiled loop.
template <class P, class V>
[[gnu::noinline]] void minmax_run(P p, std::size_t m, std::size_t pos, MinMax<V>& r) {
    constexpr std::size_t kChunk = 2048;
    for (std::size_t i = 0; i < m; i += kChunk) {
        const std::size_t e = std::min(m, i + kChunk);
        V lo = p[i], hi = p[i];
        for (std::size_t j = i + 1; j < e; ++j) {
            const V x = p[j];
            lo = x < lo ? x : lo;
            hi = hi < x ? x : hi;
        }
        const bool first = pos + i == 0;
        if (first || lo < r.vlo) {
            std::size_t j = i;
            while (!(p[j] == lo)) ++j;  // lo is in [i, e)
            r.vlo = lo, r.lo = pos + j;
        }
        if (first || !(hi < r.vhi)) {
            std::size_t j = e - 1;
            while (!(p[j] == hi)) --j;  // hi is in [i, e)
            r.vhi = hi, r.hi = pos + j;
        }
    }
}
}  // namespace detail

// On integers under the default order (segmented or contiguous) detail::minmax_run; on a
// tree otherwise std::minmax_element per run.
template <std::forward_iterator I, class C = std::less<>>
std::pair<I, I> minmax_element(I first, I last, C comp = {}) {
    using V = std::iter_value_t<I>;
    using D = std::iter_difference_t<I>;
    constexpr bool by_value = detail::minmax_by_value_v<V, C>;
    if constexpr (by_value && (segmented_v<I> || std::contiguous_iterator<I>)) {
        const std::size_t n = detail::length(first, last);
        if (n == 0) return {first, first};
        detail::MinMax<V> r;
        if constexpr (segmented_v<I>) {
            std::size_t pos = 0;
            I it = first;  // zip_runs advances it
            zip_runs(n, [&](std::size_t m, auto p) {
                detail::minmax_run(p, m, pos, r);
                return pos += m, m;
            }, it);
        } else {
            detail::minmax_run(std::to_address(first), n, 0, r);
        }
        return {first + static_cast<D>(r.lo), first + static_cast<D>(r.hi)};
    } else if constexpr (segmented_v<I>) {
        I start = first;
        std::size_t n = detail::length(first, last), pos = 0, lo = n, hi = n;
        detail::Best<I> vlo, vhi;
        zip_runs(n, [&](std::size_t m, auto p) {
            auto [a, b] = std::minmax_element(p, p + m, std::ref(comp));
            if (pos == 0 || comp(*a, vlo.get())) lo = pos + (a - p), vlo.set(*a);
            if (pos == 0 || !comp(*b, vhi.get())) hi = pos + (b - p), vhi.set(*b);
            return pos += m, m;
        }, first);
        return {start + static_cast<D>(lo), start + static_cast<D>(hi)};
    } else {
        return std::minmax_element(first, last, std::move(comp));
    }
}

// --- range forms: the iterator form on [begin(r), end(r)) ---------------------------------
namespace detail {
template <class R>
concept Range = std::ranges::common_range<R>;
}  // namespace detail

#define PHYSMEM_RANGE_FORM(name)                                                              \
    template <detail::Range R, class... Args>                                                  \
    decltype(auto) name(R&& r, Args&&... args)                                                 \
        requires requires { physmem::name(std::ranges::begin(r), std::ranges::end(r), std::forward<Args>(args)...); } \
    {                                                                                          \
        return physmem::name(std::ranges::begin(r), std::ranges::end(r), std::forward<Args>(args)...); \
    }
PHYSMEM_RANGE_FORM(for_each)
PHYSMEM_RANGE_FORM(copy)
PHYSMEM_RANGE_FORM(move)
PHYSMEM_RANGE_FORM(fill)
PHYSMEM_RANGE_FORM(generate)
PHYSMEM_RANGE_FORM(iota)
PHYSMEM_RANGE_FORM(transform)
PHYSMEM_RANGE_FORM(replace)
PHYSMEM_RANGE_FORM(replace_if)
PHYSMEM_RANGE_FORM(accumulate)
PHYSMEM_RANGE_FORM(reduce)
PHYSMEM_RANGE_FORM(transform_reduce)
PHYSMEM_RANGE_FORM(inner_product)
PHYSMEM_RANGE_FORM(find)
PHYSMEM_RANGE_FORM(find_if)
PHYSMEM_RANGE_FORM(find_if_not)
PHYSMEM_RANGE_FORM(all_of)
PHYSMEM_RANGE_FORM(any_of)
PHYSMEM_RANGE_FORM(none_of)
PHYSMEM_RANGE_FORM(count)
PHYSMEM_RANGE_FORM(count_if)
PHYSMEM_RANGE_FORM(mismatch)
PHYSMEM_RANGE_FORM(equal)
PHYSMEM_RANGE_FORM(min_element)
PHYSMEM_RANGE_FORM(max_element)
PHYSMEM_RANGE_FORM(minmax_element)
#undef PHYSMEM_RANGE_FORM

}  // namespace physmem
