// lab/kernels/graph/csr.hpp — an undirected graph in compressed sparse rows, built from
// an edge list the way GAP's builder does: symmetrised, self loops dropped, each
// adjacency list sorted with duplicate neighbours removed.
//
// u's neighbours are neighbours[offsets[u] .. offsets[u + 1]), ascending and distinct;
// weights[j] is the weight of the edge to neighbours[j] (edge_weight: symmetric). Every
// undirected edge appears twice, once in each endpoint's list.
//
// The build is two counting passes over the edges into one array (no vector per
// vertex): offsets from the degrees, then each endpoint placed at its row's cursor —
// the cursors are offsets[u + 1] themselves, which end at the next row's start. Peak
// memory is the edge list plus 2 * 4 bytes per edge and the offsets; the duplicates are
// squeezed out in place and the array shrunk (one copy of the smaller array).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/graph/generate.hpp"

namespace lab::graph {

struct Csr {
    std::uint32_t n = 0;
    std::vector<std::uint64_t> offsets;      // n + 1
    std::vector<std::uint32_t> neighbours;   // edges(*this)
    std::vector<std::uint32_t> weights;      // parallel to neighbours
};

// Directed entries: twice the undirected edges.
inline std::uint64_t edges(const Csr& g) noexcept { return g.neighbours.size(); }
inline std::uint64_t degree(const Csr& g, std::uint32_t u) noexcept { return g.offsets[u + 1] - g.offsets[u]; }
inline std::span<const std::uint32_t> neighbours_of(const Csr& g, std::uint32_t u) noexcept {
    return std::span(g.neighbours).subspan(g.offsets[u], degree(g, u));
}
// Whether {u, v} is an edge (a binary search of u's sorted list). pre: u < g.n.
inline bool has_edge(const Csr& g, std::uint32_t u, std::uint32_t v) noexcept {
    auto list = neighbours_of(g, u);
    return std::binary_search(list.begin(), list.end(), v);
}

namespace detail {
// offsets[u + 1] = degree of u (self loops not counted), offsets[0] = 0, then the
// exclusive prefix sum shifted by one: offsets[u + 1] = start of u's row. Returns the
// entries of all rows.
inline std::uint64_t count_rows(Csr& g, std::span<const Edge> edges) {
    g.offsets.assign(std::size_t{g.n} + 1, 0);
    for (const Edge& e : edges)
        if (e.u != e.v) ++g.offsets[e.u + 1], ++g.offsets[e.v + 1];
    std::uint64_t start = 0;
    for (std::uint32_t u = 0; u < g.n; ++u) {
        const std::uint64_t d = g.offsets[u + 1];
        g.offsets[u + 1] = start;
        start += d;
    }
    return start;
}

// Each endpoint at its row's cursor offsets[u + 1], which then ends at the row's end.
inline void place(Csr& g, std::span<const Edge> edges, std::uint64_t total) {
    g.neighbours.assign(total, 0);
    for (const Edge& e : edges)
        if (e.u != e.v) g.neighbours[g.offsets[e.u + 1]++] = e.v, g.neighbours[g.offsets[e.v + 1]++] = e.u;
}

// Sorts each row, drops repeated neighbours and packs the rows down in place (a row
// never moves up: it only loses entries before it).
inline void sort_and_dedupe(Csr& g) {
    auto at = [&g](std::uint64_t j) { return g.neighbours.begin() + static_cast<std::ptrdiff_t>(j); };
    std::uint64_t read = 0, write = 0;
    for (std::uint32_t u = 0; u < g.n; ++u) {
        const auto first = at(read), last = at(g.offsets[u + 1]);
        read = g.offsets[u + 1];
        std::sort(first, last);
        const auto end = std::unique(first, last);
        g.offsets[u] = write;
        if (at(write) != first) std::copy(first, end, at(write));  // to the left: no overlap issue
        write += static_cast<std::uint64_t>(end - first);
    }
    g.offsets[g.n] = write;
    g.neighbours.resize(write);
    g.neighbours.shrink_to_fit();
}

inline void weigh(Csr& g, std::uint64_t weight_seed) {
    g.weights.resize(g.neighbours.size());
    for (std::uint32_t u = 0; u < g.n; ++u)
        for (std::uint64_t j = g.offsets[u]; j < g.offsets[u + 1]; ++j)
            g.weights[j] = edge_weight(weight_seed, u, g.neighbours[j]);
}
}  // namespace detail

// The undirected graph of `edges` on vertices [0, n). pre: every endpoint < n.
inline Csr build_undirected(std::uint32_t n, std::span<const Edge> edges, std::uint64_t weight_seed) {
    Csr g;
    g.n = n;
    detail::place(g, edges, detail::count_rows(g, edges));
    detail::sort_and_dedupe(g);
    detail::weigh(g, weight_seed);
    return g;
}

}  // namespace lab::graph
