// lab/experiments/compact.cpp — the giveback suite's compaction program: a fragmented pool
// (many arrays grown leaf by leaf in turn, then half their blocks freed at random by
// dropping some arrays and shrinking the others), the resident memory before and after
// BlockPool::compact(), its speed per GiB moved against memcpy of the same bytes, and the
// share still on huge pages.
//
//   physmem_lab_compact --variant tree-index-thp --size 256M
//
// --size: bytes of elements (std::uint64_t) before the frees, over --param arrays arrays.
// "before" is measured after pool.release() (the empty pages already given back: what a
// pool without compaction achieves); "after" after compact(). recovered = (before -
// after) / (before - in use), the share of the free resident memory compaction gave back.
// Timed: a scan of every array after compaction (sum).
//
// The baseline, stated in the payload ("baseline"): memcpy_ms copies the same bytes the
// same way inside the same pool's memory — blocks_moved block-sized memcpys, each from
// one block of the pool to another, both touched beforehand, as compaction copies from
// live blocks into holes of resident pages. The blocks are taken from the pool after
// compact() (up to 2 x blocks_moved of them; fewer pairs are reused in turn) and freed
// again. Each side is timed once in this process, compaction first. compact_ms includes
// what compact() itself does beyond the copies: choosing pages, one owner call per block
// and the release (madvise) of the emptied pages.
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
    .params = {{"arrays", "64", {}, "how many arrays share the pool"}},
};

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// ms of `blocks` block-sized memcpys between touched blocks of `pool` (one timed run),
// the blocks borrowed from the pool and returned; the pool is released afterwards.
double memcpy_ms(physmem::BlockPool& pool, std::size_t blocks) {
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

lab::Json pool_json(const physmem::BlockPool& pool) {
    physmem::PoolStats st = pool.stats();
    std::size_t huge = 0, resident = 0;
    for (const auto& r : pool.verify_backing()) huge += r.huge_bytes, resident += r.resident_bytes;
    return {{"resident_bytes", st.resident_bytes}, {"in_use_bytes", st.blocks_in_use * st.block_size},
            {"smaps_resident_bytes", resident}, {"smaps_huge_bytes", huge},
            {"huge_share", resident ? std::min(1.0, double(huge) / double(resident)) : 0.0}};
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    std::size_t arrays = std::max<std::size_t>(s.param_size("arrays"), 1);
    physmem::TreeShape shape = physmem::TreeShape::make(s.block_size, 8);
    std::size_t leaves = std::max<std::size_t>(s.size_bytes / s.block_size / arrays, 1);
    physmem::BlockPool& pool = ctx.pool("arrays", arrays * shape.blocks_for(leaves << shape.leaf_shift) * s.block_size);
    std::vector<Tree> as;
    for (std::size_t k = 0; k < arrays; ++k) as.emplace_back(0, pool);
    for (std::size_t r = 0; r < leaves; ++r)  // leaf by leaf in turn: every page mixes arrays
        for (Tree& a : as) a.resize(a.size() + shape.leaf_len());
    for (std::size_t k = 0; k < arrays; ++k) std::iota(as[k].begin(), as[k].end(), k << 40);
    std::mt19937_64 rng(s.seed);
    for (Tree& a : as) {  // half the blocks on average: a quarter dropped, the rest cut to 1/3
        if (rng() % 4 == 0) a.clear();
        else a.resize(a.size() / 3 + rng() % (a.size() / 3 + 1));
    }
    std::uint64_t expect = sum(as);
    pool.release();
    lab::Json before = pool_json(pool);
    auto t0 = std::chrono::steady_clock::now();
    physmem::CompactResult r = pool.compact();
    double compact_ms = ms_since(t0);
    lab::Json after = pool_json(pool);
    double copy_ms = memcpy_ms(pool, r.blocks_moved);
    std::size_t rb = before["resident_bytes"], ra = after["resident_bytes"], used = after["in_use_bytes"];
    double gib = double(r.bytes_moved) / double(1u << 30);
    std::uint64_t elements = 0;
    for (const Tree& a : as) elements += a.size();
    ctx.set_elements(elements);
    ctx.set_tree(s.block_size, as.empty() ? 0 : as[0].depth(), shape.leaf_len());
    ctx.measure(std::max<std::uint64_t>(elements, 1), [&] { return sum(as); });
    ctx.set_field("compact", {{"arrays", arrays}, {"before", before}, {"after", after},
                              {"blocks_moved", r.blocks_moved}, {"bytes_moved", r.bytes_moved},
                              {"bytes_given_back", r.bytes_given_back}, {"compact_ms", compact_ms},
                              {"ms_per_gib_moved", gib > 0 ? compact_ms / gib : 0.0}, {"memcpy_ms", copy_ms},
                              {"bandwidth_vs_memcpy", compact_ms > 0 && copy_ms > 0 ? copy_ms / compact_ms : 0.0},
                              {"baseline", "blocks_moved block-sized memcpys between touched blocks of the same pool; "
                                           "one timed run each"},
                              {"recovered", rb > used ? double(rb - ra) / double(rb - used) : 1.0}});
    ctx.checksum(expect);
    ctx.verify(sum(as) == expect, "the arrays' sum after compaction equals the sum before it");
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
