// lab/experiments/graph.cpp — graph analytics over compressed sparse rows (Graph500 and the
// GAP Benchmark Suite's kernels): the graph and every kernel's working arrays as contiguous
// arrays vs as TreeArrays, the same kernel code on both (lab/kernels/graph/).
//
//   physmem_lab_graph --variant tree-1g --size 256M [--param graph=kronecker|uniform]
//                     [--param edge-factor=16] [--param roots=4] [--param iterations=10]
//   physmem_lab_graph --variant paged-thp --size 256M --block-size 64K --param ratio=2
//
// --size bounds the bytes of all the arrays: the scale (n = 2^scale vertices) is the
// largest whose arrays fit it when every generated edge survives (params.scale; the
// record's "graph" field gives the bytes each array really took). The graph is generated
// (Graph500's Kronecker generator or uniform endpoints, edge factor 16, seeded by --seed),
// built into a CSR on the heap (symmetric, no self loops, no duplicates; weights in
// [1, 255]) and copied into the variant's arrays, none of it timed.
//
// Timed, all on the variant's arrays (unit "edge": an undirected edge of the searched
// component, Graph500's TEPS numerator over this CSR, for BFS and SSSP; a directed entry
// read for PageRank (per iteration) and CC):
//   main timing  bfs       direction-optimising BFS from each of `roots` sources
//   phase        pagerank  `iterations` pull iterations
//   phase        cc        connected components (hooking and pointer jumping)
//   phase        sssp      delta-stepping (delta 1) from each root
// Roots: seeded draws among the vertices with an edge (Graph500 draws them the same way).
//
// Verified (lab/kernels/graph/validate.hpp), every result read back from the variant's
// arrays: each root's BFS tree by Graph500's rules and its SSSP distances edge by edge
// (before the timing), the components against a union-find and the PageRank scores
// against a reference computation or their sum (after it). A failure is an unverified
// record, never a data point.
//
// Variants: array-B (one mapping on B holding every array, each 64-byte aligned), tree-B
// (a physmem::TreeArray per array on one BlockPool strictly on B; default blocks of 2 MiB:
// depth 2 up to 512 GiB of uint32) and paged-B (a physmem::PagedArray per array, frames and
// tables in one pool strictly on B, files in --param dir; --param leaf sets the leaf of
// the edge arrays (neighbours, weights), by default the block). Each kernel's budget
// (PagedPlan): the edge arrays it reads their leaves / --param ratio, the vertex arrays
// it reads (offsets among them) all their leaves, those it does not read 2 leaves — set between
// kernels (set_budget), so ratio 1 holds everything and 2 each kernel's edges at twice
// their budget. The record's "paging" field sums the arrays' largest budgets and their
// I/O, "phases_paging" gives each kernel's budget. mapped-4k (the kernel's paging, the
// paged arrays' peer): every array carved, as array-B's are, out of one file in --param
// dir mapped MAP_SHARED, the process in a memory cgroup (cgroup v1, root) whose limit
// leaves the file's page cache the paged variant's budget for the kernel running (the
// same plan; the limit changed between kernels after an msync, lab/common/memcg.hpp)
// plus an allowance for the process's own new pages; the graph is copied in inside the
// limit, as the paged arrays copy it in within their budgets. Hints: the vertex arrays
// MADV_RANDOM, the graph's arrays per kernel (advice_for); and both variants get the
// kernels' look-ahead (view.hpp: the lists of the next frontier or bucket vertices and
// the sweeps' next entries), as prefetch() batches or MADV_WILLNEED (willneed). The record's "mapped" field
// gives the largest limit and what the group was charged, "phases_paging" each kernel's
// budget, limit and hint.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "context.hpp"
#include "kernels/graph/kernels.hpp"
#include "kernels/random.hpp"
#include "kernels/tree_sizing.hpp"
#include "memcg.hpp"
#include "physmem/tree_array.hpp"

namespace {

using namespace lab::graph;
using lab::Kind;
using u32 = std::uint32_t;
using u64 = std::uint64_t;

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_graph",
    .experiment = "graph",
    .unit = "edge",
    .kinds = {Kind::array, Kind::tree, Kind::paged, Kind::mapped},
    .default_block_size = 2 << 20,
    .params = {{"graph", "kronecker", {"kronecker", "uniform"},
                "generator: Graph500's Kronecker (A, B, C = 0.57, 0.19, 0.19) or uniform endpoints"},
               {"edge-factor", "16", {}, "edges generated per vertex (Graph500 and GAP: 16)"},
               {"roots", "4", {}, "BFS and SSSP sources a pass"},
               {"iterations", "10", {}, "PageRank iterations a pass"},
               {"ratio", "1", {}, "paged, mapped: each array's data / its budget (1: everything fits)"},
               {"dir", "", {}, "paged, mapped: directory of the files (default $TMPDIR, else /var/tmp)"},
               {"leaf", "0", {}, "paged, mapped: bytes of a leaf of the edge arrays, a power of two from 4K to the block (0: the block; the mapping's budget is rounded to it)"},
               {"pair", "off", {"off", "on"}, "tree, paged at ratio 1: also every array contiguous on the variant's "
                                             "backing, each kernel timed in turn on both (phases <kernel>@array)"}},
    .only_backings = {{Kind::mapped, {physmem::Backing::page_4k}}},
};

constexpr unsigned kMaxScale = 31;  // vertex numbers are uint32, kUnreached excluded

// ---------------------------------------------------------------- sizes

// Bytes of every array for 2^scale vertices when all edge_factor * n generated edges
// survive in both directions (an upper bound: self loops and duplicates are dropped).
u64 bytes_for(unsigned scale, u64 edge_factor) {
    const u64 n = u64{1} << scale, entries = 2 * edge_factor * n;
    const u64 per_vertex = sizeof(u64)     // offsets
                           + 2 * sizeof(u32)   // parent, queue
                           + 2 * sizeof(double)  // scores, contrib
                           + sizeof(u32)       // labels
                           + sizeof(u64);      // dist
    return n * per_vertex + 2 * 8 * bitmap_words(n) + entries * 2 * sizeof(u32) + sizeof(u64);
}

// The largest scale whose arrays fit `bytes`; 0 when not even scale 1 does.
unsigned choose_scale(u64 bytes, u64 edge_factor) {
    unsigned s = 0;
    while (s < kMaxScale && bytes_for(s + 1, edge_factor) <= bytes) ++s;
    return s;
}

// ---------------------------------------------------------------- the arrays

// Every array the kernels touch, of one container template.
template <template <class> class Arr>
struct Arrays {
    Arr<u64> offsets;
    Arr<u32> neighbours, weights, parent, queue;
    Arr<u64> front, next;
    Arr<double> scores, contrib;
    Arr<u32> labels;
    Arr<u64> dist;
};

template <class T>
using Span = std::span<T>;
template <class T>
using Tree = physmem::TreeArray<T>;
template <class T>
using Paged = physmem::PagedArray<T>;

// Element counts of the arrays, in Arrays' order.
struct Counts {
    u64 n, entries;
    u64 words() const { return bitmap_words(n); }
};

// Carves 64-byte-aligned spans out of one mapping on the variant's backing (one 1 GiB
// page serves every array of a small graph, as one allocation would).
class Carver {
  public:
    Carver(lab::Context& ctx, u64 bytes) : base_(ctx.array<std::byte>("graph", bytes).data()) {}
    explicit Carver(std::byte* base) : base_(base) {}
    template <class T>
    std::span<T> get(u64 n) {
        T* p = reinterpret_cast<T*>(base_ + used_);
        used_ += (n * sizeof(T) + 63) / 64 * 64;
        return {p, n};
    }
    // The graph's arrays' bytes (offsets, neighbours, weights: carved first).
    static u64 graph_bytes(const Counts& c) {
        auto r = [](u64 b) { return (b + 63) / 64 * 64; };
        return r(8 * (c.n + 1)) + 2 * r(4 * c.entries);
    }
    static u64 bytes(const Counts& c) {
        auto r = [](u64 b) { return (b + 63) / 64 * 64; };
        return graph_bytes(c) + 2 * r(4 * c.n) + 2 * r(8 * c.words()) + 2 * r(8 * c.n) +
               r(4 * c.n) + r(8 * c.n);
    }

  private:
    std::byte* base_;
    u64 used_ = 0;
};

Arrays<Span> carve(Carver k, const Counts& c) {
    return {k.get<u64>(c.n + 1), k.get<u32>(c.entries), k.get<u32>(c.entries), k.get<u32>(c.n), k.get<u32>(c.n),
            k.get<u64>(c.words()), k.get<u64>(c.words()), k.get<double>(c.n), k.get<double>(c.n),
            k.get<u32>(c.n), k.get<u64>(c.n)};
}

u64 pool_bytes(std::size_t block, const Counts& c) {
    using lab::tree_bytes;
    return tree_bytes<u64>(block, c.n + 1) + 2 * tree_bytes<u32>(block, c.entries) + 2 * tree_bytes<u32>(block, c.n) +
           2 * tree_bytes<u64>(block, c.words()) + 2 * tree_bytes<double>(block, c.n) + tree_bytes<u32>(block, c.n) +
           tree_bytes<u64>(block, c.n);
}

Arrays<Tree> grow(physmem::BlockPool& pool, const Counts& c) {
    return {Tree<u64>(c.n + 1, pool), Tree<u32>(c.entries, pool), Tree<u32>(c.entries, pool),
            Tree<u32>(c.n, pool), Tree<u32>(c.n, pool), Tree<u64>(c.words(), pool), Tree<u64>(c.words(), pool),
            Tree<double>(c.n, pool), Tree<double>(c.n, pool), Tree<u32>(c.n, pool), Tree<u64>(c.n, pool)};
}

// The timed kernels, in the order they run, and the arrays each reads (bit i: the i-th
// member of Arrays).
enum class Phase : unsigned { bfs, pagerank, cc, sssp };
constexpr Phase kPhases[] = {Phase::bfs, Phase::pagerank, Phase::cc, Phase::sssp};
constexpr const char* kPhaseNames[] = {"bfs", "pagerank", "cc", "sssp"};
enum : unsigned { kOffsets = 1, kNeighbours = 2, kWeights = 4, kEdges = kNeighbours | kWeights };
constexpr unsigned kReads[] = {
    kOffsets | kNeighbours | 8 | 16 | 32 | 64,  // bfs: parent, queue, front, next
    kOffsets | kNeighbours | 128 | 256,         // pagerank: scores, contrib
    kOffsets | kNeighbours | 512,               // cc: labels
    kOffsets | kEdges | 1024,                   // sssp: weights, dist
};
constexpr unsigned kAll = 2047;
constexpr unsigned reads(Phase p) { return kReads[unsigned(p)]; }

// The members of Arrays in order: element bytes and count.
struct Member {
    std::size_t elem;
    u64 n;
};
std::array<Member, 11> members(const Counts& c) {
    return {{{8, c.n + 1}, {4, c.entries}, {4, c.entries}, {4, c.n}, {4, c.n}, {8, c.words()}, {8, c.words()},
             {8, c.n}, {8, c.n}, {4, c.n}, {8, c.n}}};
}

// The paged arrays' budgets. In a phase (a kernel's passes) the edge arrays it reads
// (neighbours, weights) get their leaves / ratio (rounded up, at least 2 leaves: a
// weighted neighbour loop reads a leaf of two arrays at once, and a leaf of another may
// be needed meanwhile); the vertex arrays it reads (the offsets among them) get all their
// leaves, as out-of-core graph systems keep the vertex index and state in memory and
// stream the edges (at half the leaves each, the vertex arrays' random reads made a
// 16 MiB graph's PageRank 4.6 us an edge: a 64 KiB read for every other edge); the arrays
// it does not read 2 leaves. So each kernel's edges are `ratio` times their budget, for
// the paged arrays (set_budget between phases) and for the mapping alike (its limit
// changed between phases): the kernel's LRU would otherwise give the kernel the unread
// arrays' share (BFS does not read the weights, half the edges' bytes). At ratio 1 every
// array keeps all its leaves throughout.
struct PagedPlan {
    std::size_t block;
    u64 ratio;
    std::string dir;
    u64 leaf = 0;  // the edge arrays' leaf bytes (0: the block)
    u64 leaf_of(bool graph) const { return graph && leaf ? leaf : block; }
    // Leaves of member m.
    u64 leaves(const Member& m, bool graph) const {
        return std::max<u64>(1, (m.n * m.elem + leaf_of(graph) - 1) / leaf_of(graph));
    }
    // Bytes of member m's budget when `read` (or not) in a phase.
    u64 budget(const Member& m, bool graph, bool read) const {
        const u64 all = leaves(m, graph);
        if (ratio == 1) return all * leaf_of(graph);  // everything fits, in every phase
        const u64 want = !read ? 2 : graph ? (all + ratio - 1) / ratio : all;
        return std::min(all, std::max<u64>(2, want)) * leaf_of(graph);
    }
    // Budget of every member for a phase reading `mask`.
    std::array<u64, 11> budgets(const Counts& c, unsigned mask) const {
        std::array<u64, 11> out{};
        const std::array<Member, 11> ms = members(c);
        for (unsigned i = 0; i < ms.size(); ++i) out[i] = budget(ms[i], (kEdges >> i) & 1, (mask >> i) & 1);
        return out;
    }
    u64 budget_bytes(const Counts& c, unsigned mask = kAll) const {
        u64 sum = 0;
        for (u64 b : budgets(c, mask)) sum += b;
        return sum;
    }
    // A PagedArray's options for member m, at its largest budget (every phase's reads).
    physmem::PagingOptions options(const Member& m, bool graph) const {
        physmem::PagingOptions o;
        o.budget = budget(m, graph, true);
        o.dir = dir;
        o.leaf_bytes = leaf_of(graph);
        // The same bytes ahead whatever the leaf, at most the array's leaves.
        o.readahead = std::min<u64>(leaves(m, graph), o.readahead * block / leaf_of(graph));
        return o;
    }
    // The pool bytes the arrays take: their largest budgets in whole blocks (frames are
    // taken a block at a time) and their tables' blocks.
    u64 pool_bytes(const Counts& c) const {
        u64 sum = 0;
        const std::array<Member, 11> ms = members(c);
        for (unsigned i = 0; i < ms.size(); ++i) {
            const bool graph = (kEdges >> i) & 1;
            sum += (budget(ms[i], graph, true) + block - 1) / block * block;
            sum += (leaves(ms[i], graph) / (block / 8) + 2) * block;
        }
        return sum;
    }
};

Arrays<Paged> page(physmem::BlockPool& pool, const Counts& c, const PagedPlan& p) {
    const std::array<Member, 11> m = members(c);
    auto o = [&](unsigned i) { return p.options(m[i], (kEdges >> i) & 1); };
    return {Paged<u64>(m[0].n, pool, o(0)),    Paged<u32>(m[1].n, pool, o(1)),    Paged<u32>(m[2].n, pool, o(2)),
            Paged<u32>(m[3].n, pool, o(3)),    Paged<u32>(m[4].n, pool, o(4)),    Paged<u64>(m[5].n, pool, o(5)),
            Paged<u64>(m[6].n, pool, o(6)),    Paged<double>(m[7].n, pool, o(7)), Paged<double>(m[8].n, pool, o(8)),
            Paged<u32>(m[9].n, pool, o(9)),    Paged<u64>(m[10].n, pool, o(10))};
}

// Calls f(member, index) for each member of `a`, in order.
template <template <class> class Arr, class F>
void each(Arrays<Arr>& a, F f) {
    unsigned i = 0;
    f(a.offsets, i++), f(a.neighbours, i++), f(a.weights, i++), f(a.parent, i++), f(a.queue, i++);
    f(a.front, i++), f(a.next, i++), f(a.scores, i++), f(a.contrib, i++), f(a.labels, i++), f(a.dist, i++);
}

// Gives the paged arrays their budgets for `phase`: the shrinking ones first (their frames
// go back to the pool), then the growing ones take theirs.
void rebudget(Arrays<Paged>& a, const Counts& c, const PagedPlan& p, Phase phase) {
    const std::array<u64, 11> want = p.budgets(c, reads(phase));
    for (bool grow : {false, true})
        each(a, [&](auto& x, unsigned i) {
            if ((want[i] > x.budget()) == grow && want[i] != x.budget()) x.set_budget(want[i]);
        });
}

// The arrays' paging counters, summed.
lab::Json paging_stats(const Arrays<Paged>& a, u64 budget) {
    physmem::PagingStats t;
    auto add = [&t](const auto& x) {
        const physmem::PagingStats s = x.stats();
        t.leaves += s.leaves, t.frames += s.frames, t.loads += s.loads, t.evictions += s.evictions;
        t.hinted += s.hinted, t.readahead_issued += s.readahead_issued, t.readahead_hits += s.readahead_hits;
        t.writebacks += s.writebacks, t.bytes_read += s.bytes_read, t.bytes_written += s.bytes_written;
        t.io = s.io, t.direct = s.direct;
    };
    add(a.offsets), add(a.neighbours), add(a.weights), add(a.parent), add(a.queue), add(a.front), add(a.next);
    add(a.scores), add(a.contrib), add(a.labels), add(a.dist);
    return {{"budget_bytes", budget}, {"leaves", t.leaves}, {"frames", t.frames}, {"loads", t.loads},
            {"evictions", t.evictions}, {"writebacks", t.writebacks}, {"bytes_read", t.bytes_read},
            {"bytes_written", t.bytes_written}, {"hinted", t.hinted}, {"readahead_issued", t.readahead_issued},
            {"readahead_hits", t.readahead_hits}, {"io", t.io}, {"direct", t.direct}};
}

// The mapped variant's file: every array's bytes (Carver::bytes), created empty in `dir`,
// removed with the object.
class MappedFile {
  public:
    MappedFile(const std::string& dir, u64 bytes) : bytes_(bytes) {
        path_ = dir + "/physmem-lab-graph-" + std::to_string(::getpid());
        fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd_ < 0) throw std::runtime_error("cannot create " + path_ + ": " + std::strerror(errno));
        if (::ftruncate(fd_, static_cast<off_t>(bytes)) != 0) fail("cannot size");
    }
    ~MappedFile() {
        if (map_) ::munmap(map_, bytes_);
        ::close(fd_);
        ::unlink(path_.c_str());
    }
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    int fd() const noexcept { return fd_; }
    const std::string& path() const noexcept { return path_; }
    // The file mapped MAP_SHARED (once; unmapped with the object).
    std::byte* map() {
        void* m = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
        if (m == MAP_FAILED) fail("cannot map");
        return static_cast<std::byte*>(map_ = m);
    }

  private:
    [[noreturn]] void fail(const char* what) {
        throw std::runtime_error(std::string(what) + " " + path_ + ": " + std::strerror(errno));
    }
    std::string path_;
    int fd_ = -1;
    u64 bytes_;
    void* map_ = nullptr;
};

// ---------------------------------------------------------------- the graph

struct Input {
    Csr csr;
    u64 generated = 0;  // edges the generator made
    unsigned scale = 0;
    std::vector<u32> roots;
};

// `count` seeded draws among the vertices with an edge (repeats allowed, as Graph500's
// 64 draws allow). pre: the graph has an edge.
std::vector<u32> pick_roots(const Csr& g, unsigned count, u64 seed) {
    std::vector<u32> out;
    u64 state = seed ^ 0x524f4f5453ull;
    while (out.size() < count) {
        const u32 v = static_cast<u32>(lab::rnd::below(lab::rnd::next(state), g.n));
        if (degree(g, v) > 0) out.push_back(v);
    }
    return out;
}

Input make_input(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const u64 ef = s.param_size("edge-factor"), roots = s.param_size("roots");
    if (ef == 0 || ef > 1024) lab::usage_error(kSpec, "--param edge-factor: must be 1..1024");
    if (roots == 0 || roots > 64) lab::usage_error(kSpec, "--param roots: must be 1..64");
    Input in;
    in.scale = choose_scale(s.size_bytes, ef);
    if (in.scale == 0) lab::usage_error(kSpec, "--size: too small for a graph of 2 vertices (" + std::to_string(bytes_for(1, ef)) + " bytes)");
    const std::vector<Edge> edges = s.param("graph") == "uniform" ? uniform_edges(in.scale, unsigned(ef), s.seed)
                                                                   : kronecker_edges(in.scale, unsigned(ef), s.seed);
    in.generated = edges.size();
    in.csr = build_undirected(u32{1} << in.scale, edges, s.seed);
    if (lab::graph::edges(in.csr) == 0) throw std::invalid_argument("the generated graph has no edge");
    in.roots = pick_roots(in.csr, unsigned(roots), s.seed);
    return in;
}

template <template <class> class Arr>
void load_graph(Arrays<Arr>& a, const Csr& g) {
    copy_in(a.offsets, std::span<const u64>(g.offsets));
    copy_in(a.neighbours, std::span<const u32>(g.neighbours));
    copy_in(a.weights, std::span<const u32>(g.weights));
}

// ---------------------------------------------------------------- kernels and checks

u64 mix(u64 h, u64 x) { return lab::rnd::mix(h ^ x); }

// BFS from every root: verifies each tree (Graph500's rules) and returns the edges a pass
// traverses; `sig` gets the trees' parents.
template <class G, class A>
u64 check_bfs(const G& view, A& a, const Input& in, u64& sig, bool& ok, std::string& how) {
    u64 traversed = 0;
    for (u32 r : in.roots) {
        bfs(view, r, a.parent, a.queue, a.front, a.next);
        const std::vector<u32> parent = to_vector(a.parent);
        const std::string why = validate_bfs(in.csr, r, parent);
        if (!why.empty()) ok = false, how += "; bfs from " + std::to_string(r) + ": " + why;
        traversed += traversed_edges(view, a.parent);
        for (u32 p : parent) sig = mix(sig, p);
    }
    return traversed;
}

template <class G, class A>
void check_sssp(const G& view, A& a, const Input& in, u64& sig, bool& ok, std::string& how) {
    for (u32 r : in.roots) {
        delta_stepping(view, r, a.dist);
        const std::vector<u64> dist = to_vector(a.dist);
        const std::string why = validate_sssp(in.csr, r, dist);
        if (!why.empty()) ok = false, how += "; sssp from " + std::to_string(r) + ": " + why;
        for (u64 d : dist) sig = mix(sig, d);
    }
}

// The kernels' passes over one set of arrays (its view over the graph's), each returning
// a value to keep live.
struct Passes {
    std::function<u64()> bfs, pagerank, cc, sssp;
    const std::function<u64()>& of(Phase p) const {
        return p == Phase::bfs ? bfs : p == Phase::pagerank ? pagerank : p == Phase::cc ? cc : sssp;
    }
};

// One set of arrays the kernels run on: loads the graph into `a`; check_searches() checks
// BFS and SSSP from every root and returns the edges a BFS pass traverses; passes() gives
// the timed passes; after them, check_rest() checks PageRank and CC. Problems go to ok and
// how, prefixed with `who` ("" for the variant's own arrays); results to sig.
template <template <class> class Arr>
class Side {
  public:
    Side(Arrays<Arr>& a, const Input& in, unsigned iterations, void (*willneed)(const void*, std::size_t),
         std::string who)
        : a_(a), in_(in), iterations_(iterations), who_(std::move(who)),
          v_((load_graph(a, in.csr), make_view(a.offsets, a.neighbours, a.weights))) {
        v_.willneed = willneed;
    }
    u64 check_searches(u64& sig, bool& ok, std::string& how) {
        std::string mine;
        const u64 traversed = check_bfs(v_, a_, in_, sig, ok, mine);
        check_sssp(v_, a_, in_, sig, ok, mine);
        how += prefixed(mine);
        return traversed;
    }
    Passes passes() {
        const auto& view = v_;
        Arrays<Arr>& a = a_;
        const Input& in = in_;
        const unsigned iterations = iterations_;
        return {[&view, &a, &in] {
                    u64 k = 0;
                    for (u32 r : in.roots) k += bfs(view, r, a.parent, a.queue, a.front, a.next).edges_examined;
                    return k;
                },
                [&view, &a, iterations] {
                    return std::bit_cast<u64>(pagerank(view, a.scores, a.contrib, iterations));
                },
                [&view, &a] { return u64{connected_components(view, a.labels)}; },
                [&view, &a, &in] {
                    u64 k = 0;
                    for (u32 r : in.roots) k += delta_stepping(view, r, a.dist).relaxations;
                    return k;
                }};
    }
    void check_rest(u64& sig, bool& ok, std::string& how) {
        const std::vector<double> scores = to_vector(a_.scores);
        const std::vector<u32> labels = to_vector(a_.labels);
        std::string mine;
        for (const std::string& why : {validate_pagerank(in_.csr, scores, iterations_), validate_cc(in_.csr, labels)})
            if (!why.empty()) ok = false, mine += "; " + why;
        how += prefixed(mine);
        for (double x : scores) sig = mix(sig, std::bit_cast<u64>(x));
        for (u32 l : labels) sig = mix(sig, l);
    }

  private:
    std::string prefixed(const std::string& problems) const {
        if (problems.empty() || who_.empty()) return problems;
        return "; " + who_ + ":" + problems.substr(1);
    }
    Arrays<Arr>& a_;
    const Input& in_;
    unsigned iterations_;
    std::string who_;
    decltype(make_view(std::declval<Arr<u64>&>(), std::declval<Arr<u32>&>(), std::declval<Arr<u32>&>())) v_;
};

// Loads the graph, checks BFS and SSSP, times the kernels (before(phase) called before each
// kernel's passes) and checks the other results. With `beside` (pair=on: every array
// contiguous on the same backing), each kernel is timed in turn on both sets of arrays, a
// repetition of each at a time (the contiguous arrays' timing: phase "<kernel>@array"), and
// both sets' results are checked.
template <template <class> class Arr, class Before>
void run_kernels(lab::Context& ctx, Arrays<Arr>& a, const Input& in, Before before,
                 void (*willneed)(const void*, std::size_t) = nullptr, Arrays<Span>* beside = nullptr) {
    const unsigned iterations = unsigned(ctx.settings().param_size("iterations"));
    if (iterations == 0 || iterations > 1000) lab::usage_error(kSpec, "--param iterations: must be 1..1000");
    Side<Arr> own(a, in, iterations, willneed, "");
    std::optional<Side<Span>> other;
    if (beside) other.emplace(*beside, in, iterations, nullptr, "the contiguous arrays beside");
    const u64 entries = lab::graph::edges(in.csr);
    bool ok = true;
    std::string how = "every result read back from the variant's arrays";
    u64 sig = 0;
    u64 theirs_sig = 0;  // the arrays beside: checked, kept out of the checksum (equal across variants)
    const u64 traversed = own.check_searches(sig, ok, how);
    if (other) other->check_searches(theirs_sig, ok, how);

    const Passes mine = own.passes();
    const Passes theirs = other ? other->passes() : Passes{};
    for (Phase p : kPhases) {
        before(p);
        const u64 ops = p == Phase::pagerank ? u64{iterations} * entries : p == Phase::cc ? entries : traversed;
        const std::string name = kPhaseNames[unsigned(p)], phase = p == Phase::bfs ? "" : name;
        if (other)
            ctx.measure_interleaved({{phase, {mine.of(p), ops, {}}}, {name + "@array", {theirs.of(p), ops, {}}}});
        else if (phase.empty())
            ctx.measure(ops, mine.of(p));
        else
            ctx.measure_phase(phase, ops, mine.of(p));
    }

    own.check_rest(sig, ok, how);
    if (other) other->check_rest(theirs_sig, ok, how);
    ctx.checksum(sig);
    ctx.verify(ok, how + (ok ? ": BFS trees (Graph500's rules) and SSSP distances from " +
                                   std::to_string(in.roots.size()) + " roots, components against a union-find, "
                                   "PageRank against its reference or sum all hold" +
                                   (other ? ", on the variant's arrays and on the contiguous ones beside" : "")
                             : ""));
}

// ---------------------------------------------------------------- the record

void describe(lab::Context& ctx, const Input& in, const Counts& c, u64 bytes) {
    const lab::Settings& s = ctx.settings();
    ctx.set_elements(c.n);
    ctx.set_param("scale", in.scale);
    ctx.set_field("graph", {{"generator", s.param("graph")},
                            {"scale", in.scale},
                            {"vertices", c.n},
                            {"generated_edges", in.generated},
                            {"undirected_edges", c.entries / 2},
                            {"directed_entries", c.entries},
                            {"roots", in.roots},
                            {"array_bytes", bytes},
                            {"graph_bytes", 8 * (c.n + 1) + 8 * c.entries}});
}

// Each phase's summed budget, for the paged variant's record.
lab::Json phase_budgets(const Counts& c, const PagedPlan& plan) {
    lab::Json out = lab::Json::object();
    for (Phase p : kPhases) out[kPhaseNames[unsigned(p)]] = {{"budget", plan.budget_bytes(c, reads(p))}};
    return out;
}

// The hint a user would give the mapping's graph arrays for a phase: the kernels that read
// every list in order (PageRank, CC) MADV_SEQUENTIAL where the phase's budget holds the
// file's read-ahead in flight (memcg::paging_unfit_reason), else MADV_RANDOM; the searches
// (BFS, SSSP) MADV_RANDOM: a list they reach is a few hundred bytes, and read-around would
// read the device's whole window for it.
struct Advice {
    int advice;
    const char* name;
};
Advice advice_for(Phase p, int fd, u64 budget, u64 graph_bytes) {
    const bool streams = p == Phase::pagerank || p == Phase::cc;
    if (streams && lab::memcg::paging_unfit_reason(fd, MADV_SEQUENTIAL, budget, graph_bytes).empty())
        return {MADV_SEQUENTIAL, "sequential"};
    return {MADV_RANDOM, streams ? "random (the budget cannot hold sequential read-ahead)" : "random"};
}

// The process's own pages the mapped variant's limit allows beside the file's cache: the
// base allowance (memcg.hpp) and a word a vertex for what the untimed checks allocate
// inside (results read back as vectors, the validators' arrays; measured at scale 15: the
// group's anonymous pages 1.17 MiB, the base 1 MiB and 8 n bytes 0.25 MiB). The record's
// "mapped" field gives what the group was charged.
u64 own_allowance(const Counts& c) { return lab::memcg::kOwnAllowance + 8 * c.n; }

void run_mapped(lab::Context& ctx, const Input& in, const Counts& c, const PagedPlan& plan) {
    if (std::string why = lab::memcg::unavailable_reason(); !why.empty())
        throw physmem::backing_unavailable("mapped: " + why);
    const u64 bytes = Carver::bytes(c), budget = plan.budget_bytes(c);
    describe(ctx, in, c, bytes);
    ctx.set_param("ratio", plan.ratio);
    MappedFile file(plan.dir, bytes);
    if (std::string why = lab::memcg::paging_unfit_reason(file.fd(), MADV_RANDOM, budget, bytes); !why.empty())
        throw physmem::backing_unavailable("mapped: " + why);
    const std::size_t held = lab::memcg::resident_bytes();  // not charged to the new group
    const u64 limit_bytes = budget + own_allowance(c);
    lab::memcg::Limit limit(limit_bytes);
    std::byte* base = file.map();
    ::madvise(base, bytes, MADV_RANDOM);  // vertex arrays: no read-around (most kernels read them at random)
    Arrays<Span> a = carve(Carver(base), c);
    lab::Json phases = lab::Json::object();
    run_kernels(ctx, a, in, [&](Phase phase) {
        if (::msync(base, bytes, MS_SYNC) != 0) throw std::runtime_error(std::string("msync: ") + std::strerror(errno));
        const u64 b = plan.budget_bytes(c, reads(phase));
        limit.set(b + own_allowance(c));  // reclaims down to it
        const Advice hint = advice_for(phase, file.fd(), b, Carver::graph_bytes(c));
        ::madvise(base, Carver::graph_bytes(c), hint.advice);
        phases[kPhaseNames[unsigned(phase)]] = {{"budget", b}, {"limit", b + own_allowance(c)}, {"graph_advice", hint.name}};
    }, lab::memcg::willneed);
    const lab::memcg::Limit::Usage use = limit.usage();
    ctx.set_field("mapped", {{"cgroup", limit.path()}, {"file", file.path()}, {"budget_bytes", budget},
                             {"limit_bytes", limit_bytes}, {"own_allowance_bytes", limit_bytes - budget},
                             {"held_before_bytes", held},
                             {"cgroup_usage", {{"cache_bytes", use.cache}, {"mapped_file_bytes", use.mapped_file},
                                               {"rss_bytes", use.rss}, {"kmem_bytes", use.kmem}}},
                             {"cgroup_max_usage_bytes", limit.max_usage()},
                             {"cgroup_failcnt", limit.failcnt()}});
    ctx.set_field("phases_paging", phases);
}

// Whether --param pair=on; a usage error unless the variant is a tree, or paged at ratio 1
// (everything in memory: the only ones with contiguous arrays to be timed beside).
bool paired(const lab::Settings& s) {
    if (s.param("pair") != "on") return false;
    if (s.kind != Kind::tree && !(s.kind == Kind::paged && s.param_size("ratio") == 1))
        lab::usage_error(kSpec, "--param pair=on: tree variants, and paged ones at ratio 1, only");
    return true;
}

// pair=on: every array again, contiguous on the run's backing (array "beside"), for the
// kernels to be timed in turn on both; nullopt with pair=off.
std::optional<Arrays<Span>> beside_arrays(lab::Context& ctx, const Counts& c) {
    if (!paired(ctx.settings())) return std::nullopt;
    return carve(Carver(ctx.array<std::byte>("beside", Carver::bytes(c)).data()), c);
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    (void)paired(s);  // a bad pair=on fails before the graph is built
    const Input in = make_input(ctx);
    const Counts c{in.csr.n, lab::graph::edges(in.csr)};
    if (s.kind == Kind::array) {
        describe(ctx, in, c, Carver::bytes(c));
        Arrays<Span> a = carve(Carver(ctx, Carver::bytes(c)), c);
        run_kernels(ctx, a, in, [](Phase) {});
        return;
    }
    if (s.kind == Kind::tree) {
        const u64 bytes = pool_bytes(s.block_size, c);
        describe(ctx, in, c, bytes);
        Arrays<Tree> a = grow(ctx.pool("graph", bytes), c);
        ctx.set_tree(s.block_size, a.neighbours.depth(), a.neighbours.leaf_length());
        std::optional<Arrays<Span>> b = beside_arrays(ctx, c);
        run_kernels(ctx, a, in, [](Phase) {}, nullptr, b ? &*b : nullptr);
        return;
    }
    const u64 ratio = s.param_size("ratio");
    if (ratio == 0 || ratio > 1024) lab::usage_error(kSpec, "--param ratio: must be 1..1024");
    const u64 leaf = s.param_size("leaf");
    if (leaf && (!std::has_single_bit(leaf) || leaf < 4096 || leaf > s.block_size))
        lab::usage_error(kSpec, "--param leaf: a power of two from 4K to the block size, or 0");
    const PagedPlan plan{s.block_size, ratio, lab::data_dir(s), leaf};
    if (s.kind == Kind::mapped) {
        run_mapped(ctx, in, c, plan);
        return;
    }
    const u64 bytes = plan.pool_bytes(c);
    describe(ctx, in, c, bytes);
    ctx.set_param("ratio", ratio);
    Arrays<Paged> a = page(ctx.pool("frames", bytes), c, plan);
    ctx.set_tree(s.block_size, a.neighbours.shape().depth_for(c.entries), a.neighbours.leaf_length());
    std::optional<Arrays<Span>> b = beside_arrays(ctx, c);
    run_kernels(ctx, a, in, [&](Phase phase) { rebudget(a, c, plan, phase); }, nullptr, b ? &*b : nullptr);
    ctx.set_field("paging", paging_stats(a, plan.budget_bytes(c)));
    ctx.set_field("phases_paging", phase_budgets(c, plan));
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
