// lab/kernels/graph/sssp.hpp — single-source shortest paths by delta-stepping (Meyer and
// Sanders, J. Algorithms 2003), single-threaded, the way GAP's sssp.cc orders the work.
//
// Bucket b holds vertices whose tentative distance lies in [b*delta, (b+1)*delta).
// Buckets are emptied in increasing order; a vertex taken from bucket b whose distance
// still falls in b relaxes all its edges (light and heavy alike, as GAP does), and every
// improved neighbour goes into the bucket of its new distance — possibly b again, which
// is then emptied again before moving on. A vertex whose distance has dropped into an
// earlier bucket since it was queued was settled there: its entry is skipped. The result
// is exact for positive weights, whatever delta; delta only trades buckets (small delta,
// Dijkstra at 1) against vertices relaxed more than once (large delta, Bellman-Ford
// at infinity).
//
// Default delta = 1, GAP's default too: one thread gains nothing from wide buckets
// (their point is parallel work per phase) and pays for them in re-relaxations. Measured
// here (g++ -O3, std::span, root the hub, mean of 3 runs on a busy 2-CPU guest; ms per
// run, then edges relaxed per directed entry):
//   scale 19 Kronecker  delta 1: 170 ms, 1.00   4: 202, 1.33   32: 493, 3.9   255: 948, 7.6
//   scale 19 uniform    delta 1: 482 ms, 1.00   4: 547, 1.04   32: 554, 1.46  255: 1839, 5.6
// With delta = 1 a bucket holds one distance: each reached vertex is settled once and
// relaxes its edges once (Dial's algorithm); buckets number the largest distance
// (~500 on these graphs: their shortest paths take light edges).
//
// The buckets are scratch std::vectors (a vertex's entries come and go; they are not the
// graph). The distances are an array (arrays.hpp: span, TreeArray, PagedArray) of n
// uint64, kInfinity for vertices not reached.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/graph/view.hpp"

namespace lab::graph {

inline constexpr std::uint64_t kInfinity = ~std::uint64_t{0};  // distance of a vertex not reached
inline constexpr std::uint32_t kDefaultDelta = 1;

struct SsspStats {
    std::uint64_t relaxations = 0;    // edges relaxed (directed entries read)
    std::uint64_t settled = 0;        // bucket entries processed (a vertex may count more than once)
    std::uint64_t buckets = 0;        // buckets visited (up to the last distance / delta)
};

namespace detail {
using Buckets = std::vector<std::vector<std::uint32_t>>;

// Relaxes u's edges from distance du, queueing the improved neighbours.
template <class G, class Dist>
void relax(const G& g, Dist& dist, std::uint32_t u, std::uint64_t du, std::uint32_t delta, Buckets& buckets,
           SsspStats& st) {
    // Counted a vertex at a time, not an edge (bfs.hpp says why).
    st.relaxations += for_each_weighted_neighbour(g, u, [&](std::uint32_t v, std::uint32_t w) {
        const std::uint64_t nd = du + w;
        if (nd >= load(dist, v)) return;
        store(dist, v, nd);
        const std::uint64_t b = nd / delta;
        if (b >= buckets.size()) buckets.resize(b + 1);
        buckets[b].push_back(v);
    });
}

// Empties bucket b, again as long as relaxations refill it; frees its storage.
template <class G, class Dist>
void empty_bucket(const G& g, Dist& dist, std::uint64_t b, std::uint32_t delta, Buckets& buckets, SsspStats& st) {
    std::vector<std::uint32_t> items, ahead;
    ListHints hints(g, true);
    while (!buckets[b].empty()) {
        items.clear();
        items.swap(buckets[b]);  // relax may grow `buckets`: no reference into it is kept
        // The look-ahead sees past this bucket into the next ones (their vertices queued
        // so far): a bucket of delta 1 often holds fewer vertices than a batch.
        ahead.clear();
        for (std::uint64_t c = b + 1; hints.active() && c < buckets.size() && ahead.size() < 2 * hints.kBatch; ++c)
            ahead.insert(ahead.end(), buckets[c].begin(),
                         buckets[c].begin() + std::ptrdiff_t(std::min(buckets[c].size(), 2 * hints.kBatch - ahead.size())));
        const std::size_t n = items.size();
        for (std::size_t i = 0; i < n; ++i) {
            hints.at(i, n + ahead.size(), [&](std::size_t j) { return j < n ? items[j] : ahead[j - n]; });
            const std::uint32_t u = items[i];
            const std::uint64_t du = load(dist, u);
            if (du / delta != b) continue;  // settled in an earlier bucket
            ++st.settled;
            relax(g, dist, u, du, delta, buckets, st);
        }
    }
    std::vector<std::uint32_t>().swap(buckets[b]);
}
}  // namespace detail

// Shortest distances from root by the weights: dist[root] = 0, kInfinity where not
// reached. pre: root < g.n; dist.size() >= g.n; delta >= 1.
template <class G, class Dist>
SsspStats delta_stepping(const G& g, std::uint32_t root, Dist& dist, std::uint32_t delta = kDefaultDelta) {
    SsspStats st;
    fill(dist, kInfinity);
    return with_walk(dist, [&](auto&& d) {  // relax's d[v] at random: arrays.hpp
        store(d, root, 0);
        detail::Buckets buckets(1, std::vector<std::uint32_t>{root});
        for (std::uint64_t b = 0; b < buckets.size(); ++b, ++st.buckets) detail::empty_bucket(g, d, b, delta, buckets, st);
        return st;
    });
}

}  // namespace lab::graph
