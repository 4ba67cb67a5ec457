// Graph kernels: the seeded generators, the CSR builder, and BFS, PageRank, connected
// components and SSSP run on std::span, TreeArray and PagedArray — each result validated
// and the same on all three — and every validator rejecting a corrupted result.
// Correctness tests, not benchmarks.
//
// The PagedArrays have a budget of one 4 KiB leaf each: every access to another leaf of
// an array evicts, so a write through a reference kept across such an access is lost
// (the leaf went to the file before it) and a read through one sees another leaf once
// the frame is reused. A kernel that kept one (top-down BFS writing parent[v] through a
// reference taken before reading parent[u]) failed here; one read from a frame that was
// evicted but not yet reused goes unseen.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/graph/kernels.hpp"
#include "physmem/paged_array.hpp"
#include "physmem/tree_array.hpp"

namespace {

using namespace lab::graph;
using u32 = std::uint32_t;
using u64 = std::uint64_t;

constexpr unsigned kEdgeFactor = 16;
constexpr unsigned kIterations = 10;  // PageRank's, in every test
constexpr u64 kSeed = 1;

physmem::BlockPool small_pool(std::size_t block = 4096) {
    return physmem::BlockPool({.block_size = block, .capacity = 32 << 20, .backing = physmem::Backing::page_4k});
}

// Where a test's arrays live: make<T>(n) gives n value-initialised elements.
struct SpanKind {
    std::vector<std::shared_ptr<void>> keep;  // the vectors under the spans
    template <class T>
    std::span<T> make(std::size_t n) {
        auto v = std::make_shared<std::vector<T>>(n);
        keep.push_back(v);
        return std::span<T>(*v);
    }
};
struct TreeKind {
    physmem::BlockPool pool = small_pool();
    template <class T>
    physmem::TreeArray<T> make(std::size_t n) {
        return physmem::TreeArray<T>(n, pool);
    }
};
struct PagedKind {
    physmem::BlockPool pool = small_pool();
    template <class T>
    physmem::PagedArray<T> make(std::size_t n) {
        physmem::PagingOptions o;
        o.budget = 4096;  // one leaf: any access to another leaf evicts
        o.readahead = 2;
        o.direct = false;               // through the page cache: a miss is a copy, not a disk read
        o.io = physmem::PagingIo::sync;  // pread: 0.3 us a fault here, io_uring 1 us (the pager's
                                         // own tests cover io_uring)
        return physmem::PagedArray<T>(n, pool, o);
    }
};

template <class Kind, class T>
auto make_copy(Kind& kind, const std::vector<T>& v) {
    auto a = kind.template make<T>(v.size());
    copy_in(a, std::span<const T>(v));
    return a;
}

enum class Shape { kronecker, uniform };
const char* name(Shape s) { return s == Shape::kronecker ? "kronecker" : "uniform"; }

std::vector<Edge> edges_of(Shape s, unsigned scale, u64 seed = kSeed) {
    return s == Shape::kronecker ? kronecker_edges(scale, kEdgeFactor, seed) : uniform_edges(scale, kEdgeFactor, seed);
}
Csr graph_of(Shape s, unsigned scale) {
    const auto e = edges_of(s, scale);
    return build_undirected(u32{1} << scale, e, kSeed);
}

// A vertex of the largest degree (a root in the big component) and, when there is one,
// an isolated vertex (a search that reaches only its root): Kronecker graphs have them.
u32 hub(const Csr& g) {
    u32 best = 0;
    for (u32 v = 1; v < g.n; ++v)
        if (degree(g, v) > degree(g, best)) best = v;
    return best;
}
std::vector<u32> roots_of(const Csr& g) {
    std::vector<u32> roots{hub(g)};
    for (u32 v = 0; v < g.n; ++v)
        if (degree(g, v) == 0) return roots.push_back(v), roots;
    return roots;
}

// ---- generators ---------------------------------------------------------------------

TEST(GraphGenerate, SeededDeterministicAndInRange) {
    for (Shape s : {Shape::kronecker, Shape::uniform})
        for (unsigned scale : {10u, 11u, 12u}) {
            SCOPED_TRACE(std::string(name(s)) + " scale " + std::to_string(scale));
            const auto e = edges_of(s, scale);
            ASSERT_EQ(e.size(), u64{kEdgeFactor} << scale);
            EXPECT_EQ(e, edges_of(s, scale));
            EXPECT_NE(e, edges_of(s, scale, kSeed + 1));
            EXPECT_TRUE(std::all_of(e.begin(), e.end(), [&](Edge x) { return x.u >> scale == 0 && x.v >> scale == 0; }));
        }
    EXPECT_NE(kronecker_edges(10, kEdgeFactor, kSeed), uniform_edges(10, kEdgeFactor, kSeed));
}

// Before relabelling, each bit level picks quadrant (0,0) with 0.57, (0,1) and (1,0)
// with 0.19 and (1,1) with 0.05.
TEST(GraphGenerate, KroneckerQuadrantsFollowTheInitiator) {
    const unsigned scale = 12, m = 1 << 16;
    for (unsigned level : {0u, 5u, 11u}) {
        unsigned count[4] = {};
        for (u64 i = 0; i < m; ++i) {
            const Edge e = lab::graph::detail::kronecker_edge(scale, 99, i);
            ++count[(e.u >> level & 1) * 2 + (e.v >> level & 1)];
        }
        const double expect[4] = {0.57, 0.19, 0.19, 0.05};
        for (int q = 0; q < 4; ++q) EXPECT_NEAR(count[q] / double(m), expect[q], 0.01) << level << " " << q;
    }
}

// Kronecker degrees are skewed and the hub's label is scrambled; uniform ones are not.
TEST(GraphGenerate, KroneckerIsSkewedAndRelabelled) {
    const Csr k = graph_of(Shape::kronecker, 12), u = graph_of(Shape::uniform, 12);
    EXPECT_GT(degree(k, hub(k)), 8 * degree(u, hub(u)));
    EXPECT_NE(hub(k), 0u);  // unscrambled R-MAT's hub is vertex 0
    EXPECT_GT(edges(u), edges(k));  // Kronecker repeats edges, which the CSR drops
}

TEST(GraphGenerate, WeightsSymmetricInRange) {
    u32 lo = 255, hi = 1;
    for (u32 u = 0; u < 200; ++u)
        for (u32 v = 0; v < 50; ++v) {
            const u32 w = edge_weight(3, u, v);
            ASSERT_EQ(w, edge_weight(3, v, u));
            lo = std::min(lo, w), hi = std::max(hi, w);
        }
    EXPECT_EQ(lo, 1u);
    EXPECT_EQ(hi, 255u);
    EXPECT_NE(edge_weight(3, 1, 2), edge_weight(4, 1, 2));
}

// ---- CSR ----------------------------------------------------------------------------

TEST(GraphCsr, SortedDedupedSymmetricWithoutLoops) {
    for (Shape s : {Shape::kronecker, Shape::uniform})
        for (unsigned scale : {10u, 12u}) {
            SCOPED_TRACE(std::string(name(s)) + " scale " + std::to_string(scale));
            const auto e = edges_of(s, scale);
            const Csr g = build_undirected(u32{1} << scale, e, kSeed);
            ASSERT_EQ(g.offsets.size(), g.n + u64{1});
            ASSERT_EQ(g.offsets.back(), edges(g));
            ASSERT_EQ(g.weights.size(), edges(g));
            for (u32 u = 0; u < g.n; ++u) {
                auto list = neighbours_of(g, u);
                ASSERT_TRUE(std::adjacent_find(list.begin(), list.end(), std::greater_equal<>()) == list.end()) << u;
                for (u64 j = g.offsets[u]; j < g.offsets[u + 1]; ++j) {
                    const u32 v = g.neighbours[j];
                    ASSERT_NE(u, v);
                    ASSERT_TRUE(has_edge(g, v, u)) << u << "-" << v;
                    ASSERT_EQ(g.weights[j], edge_weight(kSeed, u, v));
                }
            }
            for (Edge x : e) {
                if (x.u != x.v) {
                    ASSERT_TRUE(has_edge(g, x.u, x.v));
                }
            }
        }
}

TEST(GraphCsr, SmallGraphByHand) {
    const std::vector<Edge> e{{0, 1}, {1, 0}, {2, 2}, {3, 1}, {1, 3}, {0, 1}};
    const Csr g = build_undirected(5, e, 0);
    EXPECT_EQ(g.offsets, (std::vector<u64>{0, 1, 3, 3, 4, 4}));
    EXPECT_EQ(g.neighbours, (std::vector<u32>{1, 0, 3, 1}));
}

// ---- kernels on each kind of array --------------------------------------------------

struct Results {
    std::vector<std::vector<u32>> parents;
    std::vector<std::vector<u64>> dists;
    std::vector<double> scores;
    std::vector<u32> labels;
    BfsStats bfs;  // from roots[0]
};

// Where two results first differ, or "" (a readable failure, not two byte dumps).
template <class T>
std::string first_difference(const char* what, const std::vector<T>& a, const std::vector<T>& b) {
    if (a.size() != b.size()) return std::string(what) + ": sizes differ";
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!(a[i] == b[i])) return std::string(what) + " differ first at " + std::to_string(i);
    return "";
}
std::string first_difference(const Results& a, const Results& b) {
    for (std::size_t i = 0; i < a.parents.size() && i < b.parents.size(); ++i) {
        if (auto d = first_difference("parents", a.parents[i], b.parents[i]); !d.empty()) return d;
        if (auto d = first_difference("distances", a.dists[i], b.dists[i]); !d.empty()) return d;
    }
    if (auto d = first_difference("scores", a.scores, b.scores); !d.empty()) return d;
    return first_difference("labels", a.labels, b.labels);
}

// Every kernel on the graph copied into Kind's arrays, with work arrays of that kind.
template <class Kind>
Results run_all(const Csr& g, const std::vector<u32>& roots) {
    Kind kind;
    auto off = make_copy(kind, g.offsets);
    auto nbr = make_copy(kind, g.neighbours);
    auto wts = make_copy(kind, g.weights);
    const auto view = make_view(off, nbr, wts);
    EXPECT_EQ(view.n, g.n);
    auto parent = kind.template make<u32>(g.n), queue = kind.template make<u32>(g.n);
    auto front = kind.template make<u64>(bitmap_words(g.n)), next = kind.template make<u64>(bitmap_words(g.n));
    auto dist = kind.template make<u64>(g.n), labels = kind.template make<u32>(g.n);
    auto scores = kind.template make<double>(g.n), contrib = kind.template make<double>(g.n);
    Results r;
    for (u32 root : roots) {
        const BfsStats st = bfs(view, root, parent, queue, front, next);
        if (root == roots[0]) r.bfs = st;
        r.parents.push_back(to_vector(parent));
        delta_stepping(view, root, dist);
        r.dists.push_back(to_vector(dist));
    }
    pagerank(view, scores, contrib, kIterations);
    r.scores = to_vector(scores);
    connected_components(view, labels);
    r.labels = to_vector(labels);
    if constexpr (std::is_same_v<Kind, PagedKind>) {  // the budget made them page
        EXPECT_GT(nbr.stats().evictions, 0u);
        EXPECT_GT(wts.stats().evictions, 0u);
        EXPECT_GT(contrib.stats().evictions, 0u);
        EXPECT_GT(dist.stats().writebacks, 0u);
    }
    return r;
}

void expect_valid(const Csr& g, const std::vector<u32>& roots, const Results& r) {
    for (std::size_t i = 0; i < roots.size(); ++i) {
        EXPECT_EQ(validate_bfs(g, roots[i], r.parents[i]), "") << "root " << roots[i];
        EXPECT_EQ(validate_sssp(g, roots[i], r.dists[i]), "") << "root " << roots[i];
    }
    EXPECT_EQ(validate_pagerank(g, r.scores, kIterations), "");
    EXPECT_EQ(validate_pagerank(g, r.scores, kIterations, kDamping, 0), "");  // the sum check alone
    EXPECT_EQ(validate_cc(g, r.labels), "");
    EXPECT_EQ(label_count(r.labels), component_count(reference_components(g)));
}

// RangeReader (arrays.hpp) against the array itself: ranges that follow one another,
// jump back and ahead, straddle leaves, are empty, and stop early — on 4 KiB leaves of
// 1024 uint32 (the PagedArray with its one-leaf budget evicting between calls).
template <class Kind>
void reader_matches(Kind& kind) {
    const std::size_t n = 5000;
    std::vector<u32> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = static_cast<u32>(i * 2654435761u);
    auto a = make_copy(kind, want);
    RangeReader reader(std::as_const(a));
    std::mt19937_64 rng(7);
    std::size_t at = 0;
    for (int call = 0; call < 4000; ++call) {
        std::size_t first = call % 3 == 0 ? rng() % n : at;  // mostly where the last ended
        std::size_t last = std::min(n, first + rng() % (call % 7 == 0 ? 3000 : 40));
        const std::size_t stop_after = call % 5 == 0 ? rng() % 50 : ~std::size_t{0};
        std::vector<u32> got;
        const bool stopped = reader.scan(first, last, [&](std::span<const u32> s) {
            for (u32 x : s) {
                if (got.size() == stop_after) return true;
                got.push_back(x);
            }
            return false;
        });
        const std::size_t seen = std::min(last - first, stop_after);
        ASSERT_EQ(stopped, stop_after < last - first) << "call " << call;
        ASSERT_EQ(got, std::vector<u32>(want.begin() + first, want.begin() + first + seen)) << "call " << call;
        at = last;
        // The other arrays' accesses between calls (a paged leaf evicted meanwhile).
        if (call % 11 == 0) (void)load(std::as_const(a), rng() % n);
    }
    // piece(first, last): a non-empty prefix of the range, inside first's leaf (the whole
    // range on a contiguous array), even right after another reader moved the one leaf a
    // PagedArray holds elsewhere.
    RangeReader other(std::as_const(a));
    for (int call = 0; call < 2000; ++call) {
        const std::size_t first = rng() % (n - 1), last = std::min(n, first + 1 + rng() % 2500);
        const std::span<const u32> s = reader.piece(first, last);
        ASSERT_GE(s.size(), 1u) << "call " << call;
        ASSERT_LE(s.size(), last - first) << "call " << call;
        ASSERT_TRUE(std::equal(s.begin(), s.end(), want.begin() + first)) << "call " << call;
        if constexpr (!std::is_same_v<Kind, SpanKind>)
            ASSERT_EQ((first + s.size() - 1) / a.leaf_length(), first / a.leaf_length()) << "call " << call;
        else
            ASSERT_EQ(s.size(), last - first) << "call " << call;
        (void)other.piece(rng() % n, n);
    }
}

TEST(GraphArrays, RangeReaderReadsWhatScanReads) {
    SpanKind span;
    TreeKind tree;
    PagedKind paged;
    reader_matches(span);
    reader_matches(tree);
    reader_matches(paged);
}

TEST(GraphKernels, ValidAndIdenticalOnSpanTreeAndPaged) {
    for (Shape s : {Shape::kronecker, Shape::uniform})
        for (unsigned scale : {10u, 11u, 12u}) {
            SCOPED_TRACE(std::string(name(s)) + " scale " + std::to_string(scale));
            const Csr g = graph_of(s, scale);
            const auto roots = roots_of(g);
            const Results span = run_all<SpanKind>(g, roots), tree = run_all<TreeKind>(g, roots),
                          paged = run_all<PagedKind>(g, roots);
            expect_valid(g, roots, span);
            expect_valid(g, roots, paged);
            EXPECT_EQ(first_difference(tree, span), "") << "tree";
            EXPECT_EQ(first_difference(paged, span), "") << "paged";
            // the search from the hub changes direction (both kinds of steps ran), and
            // bottom-up steps leave most lists unread
            EXPECT_GT(span.bfs.top_down_steps, 0u);
            EXPECT_GT(span.bfs.bottom_up_steps, 0u);
            EXPECT_LT(span.bfs.edges_examined, edges(g) / 2);
        }
}

// A view may mix kinds of arrays, whose leaves then end at different places: the
// weights' scan still keeps step with the neighbours'.
TEST(GraphKernels, MixedArraysAndLeafSizes) {
    const Csr g = graph_of(Shape::kronecker, 11);
    const u32 root = hub(g);
    physmem::BlockPool big = small_pool(16384);
    PagedKind paged;
    auto nbr = physmem::TreeArray<u32>(g.neighbours.size(), big);
    copy_in(nbr, std::span<const u32>(g.neighbours));
    auto wts = make_copy(paged, g.weights);
    std::vector<u64> off = g.offsets;
    std::span<u64> offs(off);
    const auto view = make_view(offs, nbr, wts);
    std::vector<u64> dist(g.n);
    std::span<u64> d(dist);
    delta_stepping(view, root, d);
    EXPECT_EQ(validate_sssp(g, root, dist), "");
    u64 total = 0;
    for (u32 u = 0; u < g.n; ++u)
        for_each_weighted_neighbour(view, u, [&](u32 v, u32 w) {
            total += w;
            ASSERT_EQ(w, edge_weight(kSeed, u, v));
        });
    u64 expect = 0;
    for (u32 w : g.weights) expect += w;
    EXPECT_EQ(total, expect);
}

// The look-ahead (view.hpp: ListHints, hint_range): on a mapping's spans the view's
// willneed hook gets the ranges of the lists a search reaches and of the sweeps' next
// entries, all inside the arrays; on PagedArrays the leaves are prefetched; the results
// are those of the same search without hints.
std::vector<std::pair<const void*, std::size_t>> g_willneed;
void record_willneed(const void* p, std::size_t bytes) { g_willneed.emplace_back(p, bytes); }

TEST(GraphHints, AMappingHearsOfTheListsAhead) {
    const Csr g = graph_of(Shape::kronecker, 12);
    const u32 root = hub(g);
    std::vector<u64> off = g.offsets;
    std::vector<u32> nbr = g.neighbours, wts = g.weights;
    std::span<u64> offs(off);
    std::span<u32> nbrs(nbr), wtss(wts);
    auto quiet = make_view(offs, nbrs, wtss);
    auto hinted = make_view(offs, nbrs, wtss);
    hinted.willneed = record_willneed;
    SpanKind span;
    auto run = [&](const auto& view) {
        auto parent = span.make<u32>(g.n), queue = span.make<u32>(g.n);
        auto front = span.make<u64>(bitmap_words(g.n)), next = span.make<u64>(bitmap_words(g.n));
        auto dist = span.make<u64>(g.n);
        bfs(view, root, parent, queue, front, next);
        delta_stepping(view, root, dist);
        return std::pair(to_vector(parent), to_vector(dist));
    };
    g_willneed.clear();
    const auto want = run(quiet);
    EXPECT_TRUE(g_willneed.empty());
    const auto got = run(hinted);
    EXPECT_EQ(got, want);
    ASSERT_GT(g_willneed.size(), 10u);
    auto inside = [](const void* p, std::size_t bytes, const std::vector<u32>& v) {
        auto* b = reinterpret_cast<const char*>(v.data());
        auto* q = static_cast<const char*>(p);
        return q >= b && q + bytes <= b + v.size() * sizeof(u32);
    };
    std::size_t weights = 0;
    for (auto [p, bytes] : g_willneed) {
        ASSERT_GT(bytes, 0u);
        ASSERT_TRUE(inside(p, bytes, nbr) || inside(p, bytes, wts));
        weights += inside(p, bytes, wts);
    }
    EXPECT_GT(weights, 0u);  // SSSP's lists: the weights too
}

// ListHints by itself: the first call names the lists of the first 2 batches, each later
// batch boundary the batch after the next one, empty lists nothing — exactly those ranges.
TEST(GraphHints, ListHintsNameTheNextBatchesLists) {
    const Csr g = graph_of(Shape::kronecker, 10);
    std::vector<u64> off = g.offsets;
    std::vector<u32> nbr = g.neighbours, wts = g.weights;
    std::span<u64> offs(off);
    std::span<u32> nbrs(nbr), wtss(wts);
    auto view = make_view(offs, nbrs, wtss);
    view.willneed = record_willneed;
    const std::size_t batch = ListHints<decltype(view)>::kBatch, count = 3 * batch + 5;
    std::vector<u32> seq(count);
    for (std::size_t j = 0; j < count; ++j) seq[j] = u32((j * 37) % g.n);  // any order
    ListHints hints(view, false);
    ASSERT_TRUE(hints.active());
    auto expect = [&](std::size_t from, std::size_t to) {
        std::vector<std::pair<const void*, std::size_t>> want;
        for (std::size_t j = from; j < std::min(to, count); ++j) {
            const u64 a = off[seq[j]], b = off[seq[j] + 1];
            if (a < b) want.emplace_back(nbr.data() + a, (b - a) * sizeof(u32));
        }
        return want;
    };
    for (std::size_t i = 0; i < count; ++i) {
        g_willneed.clear();
        hints.at(i, count, [&](std::size_t j) { return seq[j]; });
        if (i == 0) EXPECT_EQ(g_willneed, expect(0, 2 * batch)) << i;
        else if (i % batch == 0) EXPECT_EQ(g_willneed, expect(i + batch, i + 2 * batch)) << i;
        else EXPECT_TRUE(g_willneed.empty()) << i;
    }
}

TEST(GraphHints, PagedArraysPrefetchTheListsAhead) {
    const Csr g = graph_of(Shape::kronecker, 12);
    const u32 root = hub(g);
    physmem::BlockPool pool = small_pool();
    physmem::PagingOptions o;
    o.budget = 16 * 4096;  // 16 leaves of the 64 the neighbours take: they page
    o.direct = false;
    o.io = physmem::PagingIo::sync;
    physmem::PagedArray<u64> offs(g.offsets.size(), pool, {.budget = 1 << 20, .direct = false});
    physmem::PagedArray<u32> nbrs(g.neighbours.size(), pool, o), wts(g.weights.size(), pool, o);
    copy_in(offs, std::span<const u64>(g.offsets));
    copy_in(nbrs, std::span<const u32>(g.neighbours));
    copy_in(wts, std::span<const u32>(g.weights));
    const auto view = make_view(offs, nbrs, wts);
    SpanKind span;
    auto parent = span.make<u32>(g.n), queue = span.make<u32>(g.n);
    auto front = span.make<u64>(bitmap_words(g.n)), next = span.make<u64>(bitmap_words(g.n));
    auto dist = span.make<u64>(g.n);
    bfs(view, root, parent, queue, front, next);
    EXPECT_EQ(validate_bfs(g, root, to_vector(parent)), "");
    const auto after_bfs = nbrs.stats().hinted;
    EXPECT_GT(after_bfs, 0u);
    delta_stepping(view, root, dist);
    EXPECT_EQ(validate_sssp(g, root, to_vector(dist)), "");
    EXPECT_GT(nbrs.stats().hinted, after_bfs);
    EXPECT_GT(wts.stats().hinted, 0u);
}

// TEPS counts: the CSR's undirected edges in the root's component, and the input edges
// (repeats and self loops included) there, both counted here from the union-find.
TEST(GraphKernels, TraversedEdges) {
    const auto e = edges_of(Shape::kronecker, 11);
    const Csr g = build_undirected(1 << 11, e, kSeed);
    const auto comp = reference_components(g);
    for (u32 root : roots_of(g)) {
        std::vector<u32> parent(g.n), queue(g.n);
        std::vector<u64> front(bitmap_words(g.n)), next(bitmap_words(g.n));
        std::span<u32> p(parent), q(queue);
        std::span<u64> f(front), x(next);
        std::span<const u64> off(g.offsets);
        std::span<const u32> nbr(g.neighbours), w(g.weights);
        const auto view = make_view(off, nbr, w);
        bfs(view, root, p, q, f, x);
        u64 entries = 0, input = 0;
        for (u32 v = 0; v < g.n; ++v) entries += comp[v] == comp[root] ? degree(g, v) : 0;
        for (Edge ed : e) input += comp[ed.u] == comp[root];
        EXPECT_EQ(traversed_edges(view, p), entries / 2) << root;
        EXPECT_EQ(traversed_input_edges(e, p), input) << root;
    }
}

TEST(GraphKernels, DeltaDoesNotChangeDistances) {
    const Csr g = graph_of(Shape::uniform, 10);
    std::vector<u64> a(g.n), b(g.n);
    std::span<u64> sa(a), sb(b);
    std::span<const u64> off(g.offsets);
    std::span<const u32> nbr(g.neighbours), w(g.weights);
    const auto view = make_view(off, nbr, w);
    delta_stepping(view, 0, sa, 1);
    for (u32 delta : {7u, 32u, 255u, 100000u}) {
        delta_stepping(view, 0, sb, delta);
        EXPECT_EQ(a, b) << delta;
    }
}

// ---- validators reject corrupted results --------------------------------------------

struct Solved {
    Csr g = graph_of(Shape::kronecker, 10);
    u32 root = hub(g);
    Results r = run_all<SpanKind>(g, {root});
    std::vector<u32>& parent() { return r.parents[0]; }
    std::vector<u64>& dist() { return r.dists[0]; }
    std::vector<u32> levels() {
        std::vector<u32> level;
        EXPECT_EQ(lab::graph::detail::tree_levels(root, parent(), level), "");
        return level;
    }
    // The first reached vertex other than the root with a level of at least `min_level`.
    u32 reached(u32 min_level = 1) {
        const auto level = levels();
        for (u32 v = 0; v < g.n; ++v)
            if (parent()[v] != kUnreached && v != root && level[v] >= min_level) return v;
        ADD_FAILURE() << "no such vertex";
        return root;
    }
};

TEST(GraphValidate, BfsRejectsABadParent) {
    Solved s;
    ASSERT_EQ(validate_bfs(s.g, s.root, s.parent()), "");
    const u32 v = s.reached(2);
    u32 x = 0;  // a reached vertex that is not v's neighbour
    while (x == v || s.parent()[x] == kUnreached || has_edge(s.g, v, x)) ++x;
    s.parent()[v] = x;
    EXPECT_NE(validate_bfs(s.g, s.root, s.parent()).find("is not a neighbour"), std::string::npos)
        << validate_bfs(s.g, s.root, s.parent());
}

TEST(GraphValidate, BfsRejectsACycleARootAndAGap) {
    Solved s;
    const u32 v = s.reached(2), p = s.parent()[v];
    s.parent()[p] = v;  // p and v each other's parent
    EXPECT_NE(validate_bfs(s.g, s.root, s.parent()).find("cycle"), std::string::npos);
    Solved t;
    t.parent()[t.root] = t.reached();
    EXPECT_NE(validate_bfs(t.g, t.root, t.parent()).find("parent of the root"), std::string::npos);
    Solved u;
    u.parent()[u.reached(2)] = kUnreached;  // in the component, not reached
    EXPECT_NE(validate_bfs(u.g, u.root, u.parent()), "");
}

// A parent on v's own level: v's level becomes one deeper, so the edge to its old parent
// (two levels up now) breaks the level rule, though every parent is a neighbour.
TEST(GraphValidate, BfsRejectsALevelSkip) {
    Solved s;
    const auto level = s.levels();
    for (u32 v = 0; v < s.g.n; ++v) {
        if (s.parent()[v] == kUnreached || v == s.root) continue;
        for (u32 x : neighbours_of(s.g, v))
            if (level[x] == level[v] && s.parent()[x] != v) {
                s.parent()[v] = x;
                const std::string e = validate_bfs(s.g, s.root, s.parent());
                EXPECT_NE(e.find("spans levels"), std::string::npos) << e;
                return;
            }
    }
    FAIL() << "no vertex with a neighbour on its level";
}

TEST(GraphValidate, SsspRejectsWrongDistances) {
    Solved s;
    ASSERT_EQ(validate_sssp(s.g, s.root, s.dist()), "");
    const u32 v = s.reached(2);
    s.dist()[v] -= 1;
    EXPECT_NE(validate_sssp(s.g, s.root, s.dist()), "");
    s.dist()[v] += 2;
    EXPECT_NE(validate_sssp(s.g, s.root, s.dist()), "");
    s.dist()[v] -= 1;
    ASSERT_EQ(validate_sssp(s.g, s.root, s.dist()), "");
    s.dist()[v] = kInfinity;
    EXPECT_NE(validate_sssp(s.g, s.root, s.dist()).find("not reached"), std::string::npos);
    s.dist()[v] = 0;
    EXPECT_NE(validate_sssp(s.g, s.root, s.dist()), "");
}

TEST(GraphValidate, CcRejectsMergedAndSplitComponents) {
    Solved s;
    auto& labels = s.r.labels;
    ASSERT_EQ(validate_cc(s.g, labels), "");
    const u32 big = labels[s.root];
    u32 other = 0;  // a vertex of another component
    while (labels[other] == big) ++other;
    auto merged = labels;
    for (u32& l : merged)
        if (l == labels[other]) l = big;
    EXPECT_NE(validate_cc(s.g, merged).find("not connected"), std::string::npos);
    auto split = labels;
    split[s.reached()] = s.g.n + 5;
    EXPECT_NE(validate_cc(s.g, split).find("are connected"), std::string::npos);
}

TEST(GraphValidate, PagerankRejectsAPerturbedScore) {
    Solved s;
    ASSERT_EQ(validate_pagerank(s.g, s.r.scores, kIterations), "");
    EXPECT_NE(validate_pagerank(s.g, s.r.scores, kIterations + 1), "");
    auto bad = s.r.scores;
    bad[s.reached()] *= 1.01;
    EXPECT_NE(validate_pagerank(s.g, bad, kIterations), "");
    EXPECT_NE(validate_pagerank(s.g, bad, kIterations, kDamping, 0), "");  // by the sum alone
}

}  // namespace
