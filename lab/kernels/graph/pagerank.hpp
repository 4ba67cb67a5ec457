// lab/kernels/graph/pagerank.hpp — pull-based PageRank (GAP's pr.cc), a fixed number of
// iterations, scores as double.
//
// Every score starts at 1/n. An iteration first sets contrib[v] = d * score[v] / degree(v),
// then each vertex pulls: score[u] = (1 - d)/n + the sum of contrib[v] over u's
// neighbours (the graph is undirected: in- and out-neighbours are the same list). GAP
// multiplies by d after the sum instead; folded into contrib, the pull is adds only, so
// no compiler can fuse `base + d * sum` into an FMA in one instantiation and not in
// another (g++ 12 -O3 -march=native did, for std::span but not TreeArray: see
// lab/cmake/graph.cmake): the scores are bit-identical on every array type whatever
// -ffp-contract says.
// Dangling vertices (degree 0; here, isolated ones) are handled as GAP does: nothing
// pulls from them, so their score leaves the system instead of being spread over all
// vertices, and the scores sum to less than 1 (expected_pagerank_sum gives the exact
// sum). Their contrib is set to 0 rather than GAP's score/0 (never read there either).
//
// Scores are double (GAP uses float): the reference below then agrees to rounding
// (it sums in the same order, so it usually agrees exactly). No early stop on
// convergence (GAP stops when the L1 change < 1e-4): every run does the same work.
// d = 0.85.
//
// Arrays (arrays.hpp: span, TreeArray, PagedArray): scores and contrib of n doubles.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/graph/csr.hpp"
#include "kernels/graph/view.hpp"

namespace lab::graph {

inline constexpr double kDamping = 0.85;

namespace detail {
template <class G, class Scores, class Contrib>
void spread(const G& g, const Scores& scores, Contrib& contrib, double damping) {
    for_each_vertex<false>(g, [&](std::uint32_t v, std::uint64_t first, std::uint64_t last) {  // bounds only
        const std::uint64_t d = last - first;
        store(contrib, v, d ? damping * load(scores, v) / static_cast<double>(d) : 0.0);
    });
}
// One pull sweep (contrib already damped); returns the L1 change of the scores.
template <class G, class Scores, class Contrib>
double pull(const G& g, Scores& scores, const Contrib& contrib, double damping) {
    const double base = (1.0 - damping) / g.n;
    double change = 0;
    RangeReader lists(g.neighbours);
    with_walk(contrib, [&](auto&& c) {  // c[v] at random: arrays.hpp
        for_each_vertex(g, [&](std::uint32_t u, std::uint64_t first, std::uint64_t last) {
            double sum = 0;
            lists.scan(first, last, [&](std::span<const std::uint32_t> s) {
                sum = sum_at(c, s, sum);
                return false;
            });
            const double score = base + sum;
            change += std::fabs(score - load(scores, u));
            store(scores, u, score);
        });
    });
    return change;
}
}  // namespace detail

// `iterations` PageRank iterations into scores; returns the last one's L1 change.
// pre: g.n > 0; scores.size() and contrib.size() >= g.n.
template <class G, class Scores, class Contrib>
double pagerank(const G& g, Scores& scores, Contrib& contrib, unsigned iterations, double damping = kDamping) {
    fill(scores, 1.0 / g.n);
    double change = 0;
    for (unsigned it = 0; it < iterations; ++it) {
        detail::spread(g, scores, contrib, damping);
        change = detail::pull(g, scores, contrib, damping);
    }
    return change;
}

// The same computation on plain vectors, for validation.
inline std::vector<double> pagerank_reference(const Csr& g, unsigned iterations, double damping = kDamping) {
    std::vector<double> scores(g.n, 1.0 / g.n), contrib(g.n);
    const double base = (1.0 - damping) / g.n;
    for (unsigned it = 0; it < iterations; ++it) {
        for (std::uint32_t v = 0; v < g.n; ++v)
            contrib[v] = degree(g, v) ? damping * scores[v] / static_cast<double>(degree(g, v)) : 0.0;
        for (std::uint32_t u = 0; u < g.n; ++u) {
            double sum = 0;
            for (std::uint32_t v : neighbours_of(g, u)) sum += contrib[v];
            scores[u] = base + sum;
        }
    }
    return scores;
}

// The exact sum of the scores after `iterations` (long double): S_0 = 1 and
// S_t+1 = (1 - d) + d * (S_t - D_t), where D_t, the score held by the k dangling
// vertices, is k/n at t = 0 and k(1 - d)/n after. Without dangling vertices, 1.
inline long double expected_pagerank_sum(const Csr& g, unsigned iterations, double damping = kDamping) {
    std::uint64_t dangling = 0;
    for (std::uint32_t v = 0; v < g.n; ++v) dangling += degree(g, v) == 0;
    const long double d = damping, k = static_cast<long double>(dangling), n = g.n;
    long double sum = 1, held = k / n;
    for (unsigned it = 0; it < iterations; ++it) {
        sum = (1 - d) + d * (sum - held);
        held = k * (1 - d) / n;
    }
    return sum;
}

}  // namespace lab::graph
