// lab/kernels/graph/generate.hpp — seeded edge lists: Graph500's Kronecker graph and a
// uniform random graph, and GAP's edge weights.
//
// Both generators make m = edge_factor * 2^scale edges over n = 2^scale vertices,
// deterministic from (scale, edge_factor, seed). Edge i comes from its own counter-based
// stream (state rnd::mix(key ^ i), then rnd::next): no edge depends on another, so the
// list could be made in any order or in parallel and be the same. Lists keep self loops
// and duplicate edges, as Graph500's do; the CSR builder (csr.hpp) drops them.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/chase.hpp"
#include "kernels/random.hpp"

namespace lab::graph {

struct Edge {
    std::uint32_t u, v;
    friend bool operator==(const Edge&, const Edge&) = default;
};

namespace detail {
// Keys that separate the streams drawn from one seed (edges, labels, weights).
inline constexpr std::uint64_t kKeyKronecker = 0x4b524f4e45434b52ull;
inline constexpr std::uint64_t kKeyLabels = 0x4c4142454c53ull;
inline constexpr std::uint64_t kKeyUniform = 0x554e49464f524dull;
inline constexpr std::uint64_t kKeyWeights = 0x57454947485453ull;

// Graph500's initiator probabilities A = 0.57, B = 0.19, C = 0.19 (D = 0.05) as
// cumulative thresholds on 32 random bits: below kA quadrant (0, 0), then (0, 1),
// (1, 0), and (1, 1) from kABC up.
inline constexpr std::uint64_t kA = static_cast<std::uint64_t>(0.57 * 4294967296.0);
inline constexpr std::uint64_t kAB = static_cast<std::uint64_t>(0.76 * 4294967296.0);
inline constexpr std::uint64_t kABC = static_cast<std::uint64_t>(0.95 * 4294967296.0);

// One Kronecker edge before relabelling: a quadrant per bit level, 32 random bits
// each (two levels per 64-bit draw). pre: scale <= 31.
inline Edge kronecker_edge(unsigned scale, std::uint64_t key, std::uint64_t i) noexcept {
    std::uint64_t state = rnd::mix(key ^ i), bits = 0;
    std::uint32_t u = 0, v = 0;
    for (unsigned level = 0; level < scale; ++level) {
        if (level % 2 == 0) bits = rnd::next(state);
        const std::uint64_t r = (level % 2 == 0 ? bits : bits >> 32) & 0xffffffffu;
        const std::uint32_t bu = r >= kAB, bv = (r >= kA && r < kAB) || r >= kABC;
        u |= bu << level, v |= bv << level;
    }
    return {u, v};
}
}  // namespace detail

// Graph500's Kronecker generator (R-MAT with A, B, C, D above), vertex labels then
// scrambled by a seeded bijection of [0, n) (chase::RandomOrder), so a vertex's degree
// does not follow from its label. pre: 1 <= scale <= 31.
inline std::vector<Edge> kronecker_edges(unsigned scale, unsigned edge_factor, std::uint64_t seed) {
    const std::uint64_t n = std::uint64_t{1} << scale, m = edge_factor * n;
    const std::uint64_t key = rnd::mix(seed ^ detail::kKeyKronecker);
    const chase::RandomOrder label(n, rnd::mix(seed ^ detail::kKeyLabels));
    std::vector<Edge> edges(m);
    for (std::uint64_t i = 0; i < m; ++i) {
        const Edge e = detail::kronecker_edge(scale, key, i);
        edges[i] = {static_cast<std::uint32_t>(label(e.u)), static_cast<std::uint32_t>(label(e.v))};
    }
    return edges;
}

// Both endpoints uniform in [0, n) (Erdős–Rényi-like: GAP's -u graphs): the low and
// high 32 bits of one draw, masked. pre: 1 <= scale <= 31.
inline std::vector<Edge> uniform_edges(unsigned scale, unsigned edge_factor, std::uint64_t seed) {
    const std::uint64_t n = std::uint64_t{1} << scale, m = edge_factor * n, mask = n - 1;
    const std::uint64_t key = rnd::mix(seed ^ detail::kKeyUniform);
    std::vector<Edge> edges(m);
    for (std::uint64_t i = 0; i < m; ++i) {
        const std::uint64_t r = rnd::mix(key ^ i);
        edges[i] = {static_cast<std::uint32_t>(r & mask), static_cast<std::uint32_t>((r >> 32) & mask)};
    }
    return edges;
}

// The weight of edge {u, v}: in [1, 255] (GAP's range for its weighted graphs), the same
// for (u, v) and (v, u), so an undirected edge has one weight.
constexpr std::uint32_t edge_weight(std::uint64_t seed, std::uint32_t u, std::uint32_t v) noexcept {
    const std::uint64_t lo = u < v ? u : v, hi = u < v ? v : u;
    const std::uint64_t r = rnd::mix(rnd::mix(seed ^ detail::kKeyWeights) ^ (lo << 32 | hi));
    return 1 + static_cast<std::uint32_t>(rnd::below(r, 255));
}

}  // namespace lab::graph
