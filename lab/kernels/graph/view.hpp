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
// neighbours: for_each_in, find_in) read both arrays as the streams they are: a walk (or
// a pin, for the offsets) a leaf, not a few a vertex.
// Weighted loops read the weights the same way, in lockstep: the same index range of
// the weights inside each part of the neighbours (so a list pays a walk per leaf of each
// array, never one per edge). Nothing is pinned: a PagedArray's leaf stays in its frame
// while the callback runs because the callback must not access the neighbours or
// weights arrays itself (only an access to an array can evict one of its leaves).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/graph/arrays.hpp"

namespace lab::graph {

template <class Off, class Nbr, class W>
struct GraphView {
    Off& offsets;     // n + 1 entries
    Nbr& neighbours;  // offsets[n] entries
    W& weights;       // parallel to neighbours
    std::uint32_t n;
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

// f(u, first, last) for every vertex u in order, [first, last) the range of its list in
// g.neighbours: the offsets read a segment at a time (one walk, or one pin, a leaf of
// offsets) instead of two loads a vertex. f must not access g.offsets itself (on a
// PagedArray the segment stays pinned while f runs).
template <class G, class F>
void for_each_vertex(const G& g, F&& f) {
    std::uint32_t u = 0;
    std::uint64_t first = 0;
    bool started = false;
    scan(g.offsets, 0, std::size_t{g.n} + 1, [&](std::span<const std::uint64_t> s) {
        std::size_t j = 0;
        if (!started) first = s[0], j = 1, started = true;
        for (; j < s.size(); ++j) {
            const std::uint64_t last = s[j];
            f(u++, first, last);
            first = last;
        }
        return false;
    });
}

// The neighbours in lists[first, last) (a RangeReader over g.neighbours, arrays.hpp), in
// list order: f(v) for each (for_each_in), or until pred(v) is true (find_in, which
// returns whether it was).
template <class R, class F>
void for_each_in(R& lists, std::uint64_t first, std::uint64_t last, F&& f) {
    lists.scan(first, last, [&](std::span<const std::uint32_t> s) {
        for (std::uint32_t v : s) f(v);
        return false;
    });
}
template <class R, class P>
bool find_in(R& lists, std::uint64_t first, std::uint64_t last, P&& pred) {
    return lists.scan(first, last, [&](std::span<const std::uint32_t> s) {
        for (std::uint32_t v : s)
            if (pred(v)) return true;
        return false;
    });
}

// f(v) for each neighbour v of u, in list order (ascending for a Csr), read through a
// RangeReader (no pin, so no lock, on a PagedArray). pre: u < g.n.
template <class G, class F>
void for_each_neighbour(const G& g, std::uint32_t u, F&& f) {
    const std::uint64_t first = load(g.offsets, u), last = load(g.offsets, std::size_t{u} + 1);
    RangeReader lists(g.neighbours);
    for_each_in(lists, first, last, f);
}

// f(v, w) for each neighbour v of u and the weight w of {u, v}, in list order; the
// weights read in lockstep, both through RangeReaders (arrays.hpp: a walk a leaf, no pin,
// so no lock on a PagedArray). pre: u < g.n.
template <class G, class F>
void for_each_weighted_neighbour(const G& g, std::uint32_t u, F&& f) {
    const std::uint64_t first = load(g.offsets, u), last = load(g.offsets, std::size_t{u} + 1);
    RangeReader lists(g.neighbours), weights(g.weights);
    std::uint64_t at = first;  // index of vs[0]
    lists.scan(first, last, [&](std::span<const std::uint32_t> vs) {
        std::size_t j = 0;
        weights.scan(at, at + vs.size(), [&](std::span<const std::uint32_t> ws) {
            for (std::uint32_t w : ws) f(vs[j++], w);
            return false;
        });
        at += vs.size();
        return false;
    });
}

}  // namespace lab::graph
