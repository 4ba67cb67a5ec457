// lab/experiments/compact.cpp — the giveback suite's compaction program: a fragmented pool
// (many arrays grown leaf by leaf in turn, then half their blocks freed at random by
// dropping some arrays and shrinking the others), the resident memory before and after
// BlockPool::compact(), its time against doing the same work by hand, and the share still
// on huge pages.
//
//   physmem_lab_compact --variant tree-index-thp --size 256M [--param trials=3]
//
// --size: bytes of elements (std::uint64_t) before the frees, over --param arrays arrays.
// "before" is measured after pool.release() (the empty pages already given back: what a
// pool without compaction achieves); "after" after compact(). recovered = (before -
// after) / (before - in use), the share of the free resident memory compaction gave back.
// Timed: a scan of every array after the last trial's compaction (sum).
//
// Compaction is one-shot, so the program repeats it: --param trials times (default 3) the
// pool is emptied and given back, the arrays built and fragmented again (the same seed:
// the same shape) and compacted. Each trial times, one after the other in this process:
//   compact_ms    pool.compact(): choosing pages, one owner call (a memcpy) per block,
//                 and giving back the emptied pages;
//   memcpy_ms     blocks_moved block-sized memcpys between touched blocks of the same
//                 pool (borrowed after compact(), up to 2 x blocks_moved; fewer pairs are
//                 reused in turn), as compaction copies from live blocks into holes;
//   give_back_ms  giving back bytes_given_back by hand: a second pool of the same backing
//                 and block size, twice that many pages touched, every other page's blocks
//                 freed, then release() — the same bytes in the same page units, one call
//                 per page (none adjacent). On 4 KiB pages the kernel's unmapping costs
//                 about as much per byte as the copy, and compaction gives back more bytes
//                 than it moves: memcpy alone is not the work compaction does.
// Before compact() and before the memcpys, --param evict bytes (default 64M; the suite
// passes twice the last-level cache) are written elsewhere: both copy from memory, not
// from what the caches kept of the fill or of the baseline's memset.
// bandwidth_vs_by_hand = (memcpy_ms + give_back_ms) / compact_ms and bandwidth_vs_memcpy =
// memcpy_ms / compact_ms: the medians over trials, with their ranges (min/max).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "context.hpp"
#include "kernels/alloc_procfs.hpp"
#include "physmem/segments.hpp"
#include "physmem/tree_array.hpp"

namespace {

using Tree = physmem::TreeArray<std::uint64_t>;

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_compact",
    .experiment = "compact",
    .unit = "element",
    .kinds = {lab::Kind::tree_index},
    .default_block_size = 64 << 10,
    .params = {{"arrays", "64", {}, "how many arrays share the pool"},
               {"trials", "3", {}, "compactions, each of a freshly fragmented pool"},
               {"evict", "64M", {}, "bytes written before each timed copy, so neither side starts with its "
                                    "data in the caches (at least twice the last-level cache)"}},
};

// Writes `bytes` of a buffer kept for the purpose: what the caches held is pushed out, so
// compaction and its memcpy baseline both start from memory.
void evict_caches(std::size_t bytes) {
    static std::vector<std::uint64_t> scratch;
    scratch.resize(bytes / sizeof(std::uint64_t));
    for (std::size_t i = 0; i < scratch.size(); i += 8) scratch[i] += i;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// ms of `blocks` block-sized memcpys between touched blocks of `pool` (one timed run,
// after `evict` bytes written elsewhere), the blocks borrowed from the pool and returned;
// the pool is released afterwards.
double memcpy_ms(physmem::BlockPool& pool, std::size_t blocks, std::size_t evict) {
    if (blocks == 0) return 0;
    std::size_t bs = pool.block_size();
    std::vector<void*> got;
    got.reserve(2 * blocks);
    while (got.size() < 2 * blocks)
        if (void* p = pool.try_allocate()) got.push_back(p);
        else break;
    std::size_t pairs = got.size() / 2;
    double ms = 0;
    if (pairs) {
        for (void* p : got) std::memset(p, 1, bs);
        evict_caches(evict);
        auto t0 = std::chrono::steady_clock::now();
        for (std::size_t k = 0; k < blocks; ++k) {
            std::size_t j = k % pairs;
            std::memcpy(got[2 * j + 1], got[2 * j], bs);
        }
        ms = ms_since(t0);
    }
    for (void* p : got) pool.deallocate(p);
    pool.release();
    return pairs ? ms : -1;
}

std::uint64_t sum(const std::vector<Tree>& as) {
    std::uint64_t s = 0;
    for (const Tree& a : as) physmem::for_each_segment(a, [&](auto seg) { s = std::accumulate(seg.begin(), seg.end(), s); });
    return s;
}

// ms of release() giving back `bytes` in the pool's page units, one page at a time: a
// second pool like `like`, twice the pages touched, every other page's blocks freed.
// 0 when there is nothing to give back; -1 when release() gave back another amount.
double give_back_ms(const lab::Settings& s, const physmem::BlockPool& like, std::size_t bytes) {
    std::size_t page = like.stats().page_size, pages = (bytes + page - 1) / page;
    if (pages == 0) return 0;
    physmem::BlockPool hand(physmem::PoolOptions{
        .block_size = s.block_size, .capacity = 2 * pages * page, .backing = s.backing, .strict_backing = true,
        .give_back_delay_ms = 24ull * 60 * 60 * 1000, .background_give_back = false});
    std::vector<void*> got;
    while (void* p = hand.try_allocate()) got.push_back(p);
    std::sort(got.begin(), got.end());
    auto* base = static_cast<std::byte*>(got.front());
    std::vector<void*> kept;  // the blocks of the odd pages: freed after the timed release
    std::size_t freed = 0;
    for (void* p : got) {
        std::memset(p, 1, s.block_size);
        if ((static_cast<std::size_t>(static_cast<std::byte*>(p) - base) / page) % 2 == 0) hand.deallocate(p), ++freed;
        else kept.push_back(p);
    }
    auto t0 = std::chrono::steady_clock::now();
    std::size_t given = hand.release();
    double ms = ms_since(t0);
    for (void* p : kept) hand.deallocate(p);
    return given == freed * s.block_size ? ms : -1;
}

lab::Json pool_json(const physmem::BlockPool& pool) {
    physmem::PoolStats st = pool.stats();
    std::size_t huge = 0, resident = 0;
    for (const auto& r : pool.verify_backing()) huge += r.huge_bytes, resident += r.resident_bytes;
    return {{"resident_bytes", st.resident_bytes}, {"in_use_bytes", st.blocks_in_use * st.block_size},
            {"smaps_resident_bytes", resident}, {"smaps_huge_bytes", huge},
            {"huge_share", resident ? std::min(1.0, double(huge) / double(resident)) : 0.0}};
}

// `arrays` arrays grown leaf by leaf in turn on `pool` (every page mixes arrays), filled,
// then about half their blocks freed: a quarter dropped, the rest cut to 1/3..2/3.
std::vector<Tree> fragmented(physmem::BlockPool& pool, const lab::Settings& s, std::size_t arrays, std::size_t leaves) {
    physmem::TreeShape shape = physmem::TreeShape::make(s.block_size, 8);
    std::vector<Tree> as;
    for (std::size_t k = 0; k < arrays; ++k) as.emplace_back(0, pool);
    for (std::size_t r = 0; r < leaves; ++r)
        for (Tree& a : as) a.resize(a.size() + shape.leaf_len());
    for (std::size_t k = 0; k < arrays; ++k) std::iota(as[k].begin(), as[k].end(), k << 40);
    std::mt19937_64 rng(s.seed);
    for (Tree& a : as) {
        if (rng() % 4 == 0) a.clear();
        else a.resize(a.size() / 3 + rng() % (a.size() / 3 + 1));
    }
    return as;
}

struct Trial {
    physmem::CompactResult r;
    double compact_ms = 0, memcpy_ms = 0, give_back_ms = 0, recovered = 1;
    lab::Json before, after;
    double vs_memcpy() const { return compact_ms > 0 && memcpy_ms > 0 ? memcpy_ms / compact_ms : 0.0; }
    double vs_by_hand() const {
        return compact_ms > 0 && memcpy_ms >= 0 && give_back_ms >= 0 ? (memcpy_ms + give_back_ms) / compact_ms : 0.0;
    }
};

// One compaction of the fragmented arrays `as` and its two baselines (see the header).
Trial compact_once(physmem::BlockPool& pool, const lab::Settings& s) {
    Trial t;
    pool.release();
    t.before = pool_json(pool);
    evict_caches(s.param_size("evict"));
    auto t0 = std::chrono::steady_clock::now();
    t.r = pool.compact();
    t.compact_ms = ms_since(t0);
    t.after = pool_json(pool);
    t.memcpy_ms = memcpy_ms(pool, t.r.blocks_moved, s.param_size("evict"));
    t.give_back_ms = give_back_ms(s, pool, t.r.bytes_given_back);
    std::size_t rb = t.before["resident_bytes"], ra = t.after["resident_bytes"], used = t.after["in_use_bytes"];
    t.recovered = rb > used ? double(rb - ra) / double(rb - used) : 1.0;
    return t;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

lab::Json summary(const std::vector<Trial>& ts, std::size_t arrays) {
    auto of = [&](auto f) {
        std::vector<double> v;
        for (const Trial& t : ts) v.push_back(f(t));
        return v;
    };
    auto stat = [&](auto f) {
        std::vector<double> v = of(f);
        return lab::Json{{"median", median(v)}, {"min", *std::min_element(v.begin(), v.end())},
                         {"max", *std::max_element(v.begin(), v.end())}, {"trials", v}};
    };
    const Trial& last = ts.back();
    double compact_ms = median(of([](const Trial& t) { return t.compact_ms; }));
    double gib = double(last.r.bytes_moved) / double(1u << 30);
    std::vector<double> rec = of([](const Trial& t) { return t.recovered; });
    return {{"arrays", arrays}, {"trials", ts.size()}, {"before", last.before}, {"after", last.after},
            {"blocks_moved", last.r.blocks_moved}, {"bytes_moved", last.r.bytes_moved},
            {"bytes_given_back", last.r.bytes_given_back}, {"compact_ms", compact_ms},
            {"ms_per_gib_moved", gib > 0 ? compact_ms / gib : 0.0},
            {"memcpy_ms", median(of([](const Trial& t) { return t.memcpy_ms; }))},
            {"give_back_ms", median(of([](const Trial& t) { return t.give_back_ms; }))},
            {"bandwidth_vs_memcpy", median(of([](const Trial& t) { return t.vs_memcpy(); }))},
            {"bandwidth_vs_by_hand", median(of([](const Trial& t) { return t.vs_by_hand(); }))},
            {"vs_memcpy", stat([](const Trial& t) { return t.vs_memcpy(); })},
            {"vs_by_hand", stat([](const Trial& t) { return t.vs_by_hand(); })},
            {"baseline", "by hand: blocks_moved block-sized memcpys between touched blocks of the same pool, "
                         "plus release() of the same bytes in the same page units, one page per call, in a "
                         "second pool of the same backing; each trial timed once, compaction first"},
            {"recovered", *std::min_element(rec.begin(), rec.end())}};
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    std::size_t arrays = std::max<std::size_t>(s.param_size("arrays"), 1);
    std::size_t trials = std::max<std::size_t>(s.param_size("trials"), 1);
    physmem::TreeShape shape = physmem::TreeShape::make(s.block_size, 8);
    std::size_t leaves = std::max<std::size_t>(s.size_bytes / s.block_size / arrays, 1);
    physmem::BlockPool& pool = ctx.pool("arrays", arrays * shape.blocks_for(leaves << shape.leaf_shift) * s.block_size);
    std::vector<Tree> as;
    std::vector<Trial> ts;
    std::uint64_t expect = 0;
    bool intact = true;
    for (std::size_t k = 0; k < trials; ++k) {
        as.clear();  // the last trial's arrays (empty: every block back in the pool)
        as = fragmented(pool, s, arrays, leaves);
        expect = sum(as);
        ts.push_back(compact_once(pool, s));
        intact = intact && sum(as) == expect;
    }
    std::uint64_t elements = 0;
    for (const Tree& a : as) elements += a.size();
    ctx.set_elements(elements);
    ctx.set_tree(s.block_size, as.empty() ? 0 : as[0].depth(), shape.leaf_len());
    ctx.measure(std::max<std::uint64_t>(elements, 1), [&] { return sum(as); });
    ctx.set_field("compact", summary(ts, arrays));
    ctx.checksum(expect);
    ctx.verify(intact && sum(as) == expect, "every trial's arrays summed the same after compaction as before it");
    bool baselines = true;
    for (const Trial& t : ts) baselines = baselines && t.memcpy_ms >= 0 && t.give_back_ms >= 0;
    ctx.verify(baselines, "every trial's baselines ran: memcpy pairs borrowed, release() gave back what was freed");
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
