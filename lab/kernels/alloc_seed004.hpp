// lab/kernels/alloc_seed004.hpp — seed 004's benchmarks that allocate as they compute:
// MemAccess's linked-list walk, kmeans over individually allocated points, and
// Richards' task scheduler (tasks and packets from malloc). Contracts: alloc_common.hpp.
#pragma once

#include <cmath>

#include "alloc_common.hpp"

namespace lab::alloc {

// linked-list: size bytes of 64-byte nodes of a doubly linked list, allocated one by one
// and linked in a random order, walked forward then backward 4 times, then freed.
// Reference: every walk sums the payloads 0..n-1.
struct Node {
    Node *next, *prev;
    std::uint64_t value, pad[5];
};
inline Outcome linked_list(const Params& p) {
    const std::size_t n = std::max<std::size_t>(4, p.size / sizeof(Node));
    std::vector<Node*> nodes(n);
    for (std::size_t i = 0; i < n; ++i) nodes[i] = static_cast<Node*>(get(sizeof(Node))), nodes[i]->value = i;
    std::uint64_t st = rnd::mix(p.seed);
    for (std::size_t i = n - 1; i > 0; --i) std::swap(nodes[i], nodes[rnd::below(rnd::next(st), i + 1)]);
    for (std::size_t i = 0; i < n; ++i)
        nodes[i]->next = i + 1 < n ? nodes[i + 1] : nullptr, nodes[i]->prev = i ? nodes[i - 1] : nullptr;
    Node *head = nodes[0], *tail = nodes[n - 1];
    p.peak();
    Outcome out;
    const std::uint64_t want = n * (n - 1) / 2;
    for (int pass = 0; pass < 4; ++pass) {
        std::uint64_t fwd = 0, bwd = 0;
        for (Node* x = head; x; x = x->next) fwd += x->value;
        for (Node* x = tail; x; x = x->prev) bwd += x->value;
        out.ok &= fwd == want && bwd == want;
        out.checksum += fwd + bwd, out.ops += 2 * n;
    }
    for (Node* x : nodes) std::free(x);
    return out;
}

// kmeans: size bytes of 4-D points (each its own malloc'd object), point i drawn within
// 1 of centre i mod K (K = 8 centres 100 apart); 10 iterations of assign (threads split
// the points) and update (centroids into freshly allocated arrays). Reference: every
// point ends in its own centre's cluster. ops = point assignments.
struct Point {
    double x[4];
    std::uint32_t cluster, truth;
};
inline Outcome kmeans(const Params& p) {
    constexpr unsigned K = 8, D = 4, kIters = 10;
    const std::size_t n = std::max<std::size_t>(K, p.size / sizeof(Point));
    std::uint64_t st = rnd::mix(p.seed);
    std::vector<Point*> pts(n);
    for (std::size_t i = 0; i < n; ++i) {
        pts[i] = static_cast<Point*>(get(sizeof(Point)));
        pts[i]->truth = static_cast<std::uint32_t>(i % K);
        for (unsigned d = 0; d < D; ++d)
            pts[i]->x[d] = 100.0 * ((pts[i]->truth >> (d % 3)) & 1) + 37.0 * pts[i]->truth * (d == 3) +
                           (static_cast<double>(rnd::below(rnd::next(st), 2001)) - 1000.0) / 1000.0;
    }
    auto* cent = static_cast<double*>(get(K * D * sizeof(double)));
    for (unsigned k = 0; k < K; ++k)
        for (unsigned d = 0; d < D; ++d) cent[k * D + d] = pts[k]->x[d];  // point k is of centre k
    p.peak();
    for (unsigned it = 0; it < kIters; ++it) {
        on_threads(p.threads, [&](unsigned t) {
            for (std::size_t i = t; i < n; i += p.threads) {
                double best = INFINITY;
                for (unsigned k = 0; k < K; ++k) {
                    double dist = 0;
                    for (unsigned d = 0; d < D; ++d) dist += (pts[i]->x[d] - cent[k * D + d]) * (pts[i]->x[d] - cent[k * D + d]);
                    if (dist < best) best = dist, pts[i]->cluster = k;
                }
            }
        });
        auto* next = static_cast<double*>(get(K * D * sizeof(double)));
        std::vector<std::size_t> count(K);
        std::fill(next, next + K * D, 0.0);
        for (Point* q : pts) {
            ++count[q->cluster];
            for (unsigned d = 0; d < D; ++d) next[q->cluster * D + d] += q->x[d];
        }
        for (unsigned k = 0; k < K; ++k)
            for (unsigned d = 0; d < D; ++d) next[k * D + d] = count[k] ? next[k * D + d] / count[k] : cent[k * D + d];
        std::free(cent);
        cent = next;
    }
    Outcome out;
    for (std::size_t i = 0; i < n; ++i) out.ok &= pts[i]->cluster == pts[i]->truth, out.checksum += pts[i]->cluster * (i + 1);
    out.ops = n * kIters;
    for (Point* q : pts) std::free(q);
    std::free(cent);
    return out;
}

}  // namespace lab::alloc
