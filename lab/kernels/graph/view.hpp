// lab/kernels/graph/view.hpp — a CSR graph held in any three arrays, and its neighbour
// loops.
//
// GraphView names the arrays of a Csr (csr.hpp) wherever they live: offsets (n + 1
// uint64), neighbours and weights (uint32, one per directed entry). Each may be a
// std::span, a physmem::TreeArray or a physmem::PagedArray (arrays.hpp: what they must
// provide); the kernels only read them.
//
// Neighbour loops read u's list neighbours[offsets[u] .. offsets[u + 1]) a leaf's part
// at a time (arrays.hpp: RangeReader): one walk per leaf the list touches, then a plain
// loop.
// Sweeps over every vertex in order (for_each_vertex with a RangeReader over the
// neighbours: for_each_in, find_at; one over the offsets) read both arrays as the
// streams they are: a walk a leaf, not a few a vertex.
// Weighted loops read the weights the same way, in lockstep: the same index range of
// the weights inside each part of the neighbours (so a list pays a walk per leaf of each
// array, never one per edge). Nothing is pinned: a PagedArray's leaf stays in its frame
// while the callback runs because the callback must not access the offsets, neighbours
// or weights arrays itself, nor prefetch() them (only an access to an array, or a hint
// that starts reading into it, can evict one of its leaves).
// Look-ahead, for arrays that page: sweeps hint the neighbours ahead of them
// (hint_range), and kernels that reach lists at random hint the next vertices' lists in
// batches (ListHints) — prefetch() on a PagedArray, the view's willneed hook on a mapping;
// nothing on arrays in memory.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/graph/arrays.hpp"

namespace lab::graph {

template <class Off, class Nbr, class W>
struct GraphView {
    Off& offsets;     // n + 1 entries
    Nbr& neighbours;  // offsets[n] entries
    W& weights;       // parallel to neighbours
    std::uint32_t n;
    // For contiguous arrays that live in a file mapping: tells the kernel that [p, p +
    // bytes) is read soon (madvise MADV_WILLNEED); nullptr for memory (ListHints).
    void (*willneed)(const void* p, std::size_t bytes) = nullptr;
};

// The view of three arrays; n = offsets.size() - 1. pre: offsets.size() >= 1.
template <class Off, class Nbr, class W>
GraphView<Off, Nbr, W> make_view(Off& offsets, Nbr& neighbours, W& weights) {
    return {offsets, neighbours, weights, static_cast<std::uint32_t>(offsets.size() - 1)};
}

// u's degree (entries in its list). pre: u < g.n.
template <class G>
std::uint64_t degree(const G& g, std::uint32_t u) {
    const std::uint64_t first = load(g.offsets, u);
    return load(g.offsets, std::size_t{u} + 1) - first;
}

// Look-ahead caps, the same for a PagedArray and a mapping: a hinted list brings in at most
// kListHint bytes of it (the rest is read as it comes), a sweep hints kSweepAhead bytes
// ahead of itself, and a batch of lists (ListHints) at most kBatchHint bytes on a mapping
// (a PagedArray's prefetch() takes at most half its budget a call).
inline constexpr std::uint64_t kListHint = 256 << 10, kSweepAhead = 256 << 10, kBatchHint = 1 << 20;

// Whether hints on g's lists do anything: a PagedArray's neighbours, or a mapping's (a
// span with the view's willneed hook); false for arrays in memory (a TreeArray at compile
// time, a plain span at run time), whose loops then skip the look-ahead's bookkeeping.
template <class G>
bool hints_active(const G& g) {
    using Nbr = std::remove_cvref_t<decltype(g.neighbours)>;
    if constexpr (Paged<Nbr>) return true;
    else if constexpr (Contiguous<Nbr>) return g.willneed != nullptr;
    else return false;
}

// Hints that g.neighbours[first, last) is read soon and returns where the hint ended
// (at most last): a PagedArray starts reading its leaves (one prefetch batch of up to 64
// leaves), a mapping gets MADV_WILLNEED (the view's willneed), arrays in memory nothing
// (last returned). pre: first < last <= g.neighbours.size().
template <class G>
std::uint64_t hint_range(const G& g, std::uint64_t first, std::uint64_t last) {
    using Nbr = std::remove_cvref_t<decltype(g.neighbours)>;
    if constexpr (Paged<Nbr>) {
        std::size_t at[64];
        std::size_t k = 0;
        const std::uint64_t len = g.neighbours.leaf_length();
        std::uint64_t x = first;
        for (; x < last && k < 64; x = (x / len + 1) * len) at[k++] = x;
        g.neighbours.prefetch(std::span<const std::size_t>(at, k));
        return std::min(x, last);
    } else if constexpr (Contiguous<Nbr>) {
        if (g.willneed) g.willneed(g.neighbours.data() + first, (last - first) * sizeof(g.neighbours[0]));
    }
    return last;
}

// f(u, first, last) for every vertex u in order, [first, last) the range of its list in
// g.neighbours: the offsets read a piece at a time through a RangeReader (one walk a leaf
// of offsets, not two a vertex; arrays.hpp says why the loop is not a callback's). f must
// not access g.offsets itself nor prefetch() it (on a PagedArray either could evict the
// piece's leaf).
// ReadsLists (the default): f reads the lists, so on arrays that page the neighbours are
// hinted ahead of the sweep (hint_range), kSweepAhead bytes at a time when the sweep
// comes within half of that of the end of what it hinted — the pager's own read-ahead
// loses the pattern where a sweep skips lists, as BFS's bottom-up steps do. A sweep that
// only needs the lists' bounds (PageRank's spread) passes false and reads nothing more.
template <bool ReadsLists = true, class G, class F>
void for_each_vertex(const G& g, F&& f) {
    constexpr std::uint64_t ahead = kSweepAhead / sizeof(std::uint32_t);  // entries
    const bool hinting = ReadsLists && hints_active(g);
    RangeReader offsets(g.offsets);
    const std::size_t end = std::size_t{g.n} + 1;
    std::uint64_t first = offsets.piece(0, end)[0], hinted = 0;
    for (std::size_t i = 1; i < end;) {
        const auto s = offsets.piece(i, end);
        for (const std::uint64_t last : s) {
            if (hinting && last + ahead / 2 > hinted && hinted < g.neighbours.size()) {
                const std::uint64_t from = std::max(hinted, last);
                const std::uint64_t to = std::min<std::uint64_t>(g.neighbours.size(), from + ahead);
                hinted = from < to ? hint_range(g, from, to) : to;
            }
            f(static_cast<std::uint32_t>(i - 1), first, last);
            first = last;
            ++i;
        }
    }
}

// The neighbours in lists[first, last) (a RangeReader over g.neighbours, arrays.hpp), in
// list order: f(v) for each (for_each_in), or until pred(v) is true (find_at, which
// returns the index in [first, last) of the neighbour pred took, else last; so a caller
// counts what it examined without a count per edge). Loops over the reader's pieces
// (arrays.hpp says why not through a callback).
template <class R, class F>
[[gnu::always_inline]] inline void for_each_in(R& lists, std::uint64_t first, std::uint64_t last, F&& f) {
    while (first < last) {
        const auto s = lists.piece(first, last);
        for (std::uint32_t v : s) f(v);
        first += s.size();
    }
}
template <class R, class P>
[[gnu::always_inline]] inline std::uint64_t find_at(R& lists, std::uint64_t first, std::uint64_t last, P&& pred) {
    while (first < last) {
        const auto s = lists.piece(first, last);
        for (std::size_t j = 0; j < s.size(); ++j)
            if (pred(s[j])) return first + j;
        first += s.size();
    }
    return last;
}

// f(v) for each neighbour v of u, in list order (ascending for a Csr), read through a
// RangeReader (no pin, so no lock, on a PagedArray). Returns u's degree (the neighbours
// visited: a caller counts them from it, not with a count per edge). pre: u < g.n.
template <class G, class F>
[[gnu::always_inline]] inline std::uint64_t for_each_neighbour(const G& g, std::uint32_t u, F&& f) {
    const std::uint64_t first = load(g.offsets, u), last = load(g.offsets, std::size_t{u} + 1);
    RangeReader lists(g.neighbours);
    for_each_in(lists, first, last, f);
    return last - first;
}

// f(v, w) for each neighbour v of u and the weight w of {u, v}, in list order; the
// weights read in lockstep, both through RangeReaders (arrays.hpp: a walk a leaf, no pin,
// so no lock on a PagedArray): a piece of the neighbours, then the weights' piece at the
// same indices (as long or, where their leaves end first, shorter). Returns u's degree,
// as for_each_neighbour. pre: u < g.n.
template <class G, class F>
[[gnu::always_inline]] inline std::uint64_t for_each_weighted_neighbour(const G& g, std::uint32_t u, F&& f) {
    const std::uint64_t first = load(g.offsets, u), last = load(g.offsets, std::size_t{u} + 1);
    RangeReader lists(g.neighbours), weights(g.weights);
    for (std::uint64_t x = first; x < last;) {
        const auto vs = lists.piece(x, last);
        const auto ws = weights.piece(x, x + vs.size());
        for (std::size_t j = 0; j < ws.size(); ++j) f(vs[j], ws[j]);
        x += ws.size();
    }
    return last - first;
}

// Look-ahead over the lists of a sequence of vertices read at random (a BFS frontier, an
// SSSP bucket), as an out-of-core graph system issues the next vertices' edge reads
// before it needs them: at every kBatch-th vertex of the sequence, the lists of the next
// kBatch (the first call: the first 2 kBatch) are hinted as one batch — on a PagedArray
// their leaves start reading (PagedArray::prefetch: asynchronous, at most half the budget
// a call), on a mapping (the view's willneed) the kernel is told MADV_WILLNEED; arrays
// in memory (TreeArray, a span without willneed) get nothing, at no cost. The offsets
// are read to find the lists (kept in memory by the lab's paged variant). `weighted`:
// the weights' ranges too.
template <class G>
class ListHints {
  public:
    static constexpr std::size_t kBatch = 16;
    ListHints(const G& g, bool weighted) : g_(g), weighted_(weighted) {}
    // Before the list of the i-th vertex of a sequence of `count`; vertex_at(j) is its j-th.
    template <class At>
    void at(std::size_t i, std::size_t count, At&& vertex_at) {
        if constexpr (kMay) {
            if (i % kBatch || !active()) return;
            const std::size_t from = i ? i + kBatch : 0, to = std::min(count, i + 2 * kBatch);
            at_.clear(), batched_ = 0;
            for (std::size_t j = from; j < to; ++j) {
                const std::uint32_t u = vertex_at(j);
                add(load(g_.offsets, u), load(g_.offsets, std::size_t{u} + 1));
            }
            if (at_.empty()) return;
            issue(g_.neighbours);
            if constexpr (Paged<W> == Paged<Nbr> && Contiguous<W> == Contiguous<Nbr>)  // the same indices fit
                if (weighted_) issue(g_.weights);
        }
    }

    // Whether at() hints anything (hints_active: a caller may skip gathering vertices for it).
    bool active() const { return hints_active(g_); }

  private:
    using Nbr = std::remove_cvref_t<decltype(std::declval<const G&>().neighbours)>;
    using W = std::remove_cvref_t<decltype(std::declval<const G&>().weights)>;
    static constexpr bool kMay = Paged<Nbr> || Contiguous<Nbr>;
    // Indices to hint for [first, last), at most kListHint bytes of it: its first element
    // and each leaf start after it, a leaf the batch already names skipped (prefetch()
    // takes at most half the budget a call, counted before it drops repeats). Batches a
    // mapping's ranges: [first, last) pairs, at most kBatchHint bytes a batch.
    void add(std::uint64_t first, std::uint64_t last) {
        if (first >= last) return;
        last = std::min(last, first + kListHint / sizeof(element_t<Nbr>));
        if constexpr (Paged<Nbr>) {
            const std::uint64_t len = g_.neighbours.leaf_length();
            for (std::uint64_t x = first; x < last; x = (x / len + 1) * len)
                if (at_.empty() || at_.back() / len != x / len) at_.push_back(x);
        } else {
            const std::uint64_t room = kBatchHint / sizeof(element_t<Nbr>) - std::min(batched_, kBatchHint / sizeof(element_t<Nbr>));
            last = std::min(last, first + room);
            if (first == last) return;
            batched_ += last - first;
            at_.push_back(first), at_.push_back(last);  // a range: [first, last)
        }
    }
    // The batch to `a` (the neighbours, or the weights at the same indices).
    template <class A>
    void issue(const A& a) {
        if constexpr (Paged<A>) {
            a.prefetch(std::span<const std::size_t>(at_));
        } else {
            for (std::size_t k = 0; k + 1 < at_.size(); k += 2)
                g_.willneed(a.data() + at_[k], (at_[k + 1] - at_[k]) * sizeof(element_t<A>));
        }
    }

    const G& g_;
    bool weighted_;
    std::vector<std::size_t> at_;  // Paged: indices to prefetch; else [first, last) pairs
    std::uint64_t batched_ = 0;    // entries named by this batch's pairs
};

}  // namespace lab::graph
