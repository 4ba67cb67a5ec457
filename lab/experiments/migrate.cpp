// lab/experiments/migrate.cpp — the giveback suite's migration program: one array moved
// from a 4 KiB-backed pool to a pool on backing B with TreeArray::migrate, timed against
// memcpy of the same bytes, and the scan and GUPS speed of the array before and after.
//
//   physmem_lab_migrate --variant tree-index-1g --size 256M
//
// --size: bytes of the array (std::uint64_t). The source pool is strictly 4 KiB (64 KiB
// blocks unless --block-size); the target is strictly on B with --block-size blocks.
// Scan: a for_each_segment sum (ns per element); GUPS: 2^20 random xor-updates through
// operator[] (ns per update), both best of 3, before and after. Timed by the harness: the
// scan after migration.
//
// The baseline, stated in the payload ("baseline"): both sides warm. The target pool is
// prefaulted (PoolOptions::prefault: its pages populated when mapped, so migrate pays no
// first-touch fault or page clearing), and memcpy copies the same bytes from a touched
// buffer on 4 KiB pages (as the source pool) into a touched buffer on B (as the target),
// in pieces of the smaller block size as migrate copies them (one memcpy of the whole
// buffer takes glibc's large-copy path with non-temporal stores: a different copy, which
// can be slower or faster than the block-sized ones, so migrate could "beat" memcpy).
// One after the other in this process: migrate first (once: it moves the array), then
// memcpy, the best of 3 runs — so a hiccup of the machine in the peer's one run cannot
// pass for a win of migrate (a run where memcpy took 93 ms once, 12 ms in the run before,
// read as migrate at 7.5x memcpy's bandwidth).
// What is left between them is migrate's own work: block by block copies, a pointer store
// per block and the pools' bookkeeping.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <numeric>

#include "context.hpp"
#include "physmem/segments.hpp"
#include "physmem/tree_array.hpp"

namespace {

using Tree = physmem::TreeArray<std::uint64_t>;

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_migrate",
    .experiment = "migrate",
    .unit = "element",
    .kinds = {lab::Kind::tree_index},
    .default_block_size = 64 << 10,
    .params = {},
};

template <class F>
double best_ms(F&& f, int times = 3) {
    double best = 1e300;
    for (int k = 0; k < times; ++k) {
        auto t0 = std::chrono::steady_clock::now();
        f();
        best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
}

std::uint64_t scan(const Tree& a) {
    std::uint64_t s = 0;
    physmem::for_each_segment(a, [&](auto seg) { s = std::accumulate(seg.begin(), seg.end(), s); });
    return s;
}

volatile std::uint64_t g_sink;

lab::Json speeds(Tree& a) {
    constexpr std::size_t kUpdates = 1 << 20;
    double scan_ms = best_ms([&] { g_sink = scan(a); });
    std::size_t mask = std::bit_floor(a.size()) - 1;
    double gups_ms = best_ms([&] {
        std::uint64_t x = 0x9e3779b97f4a7c15ull;
        for (std::size_t k = 0; k < kUpdates; ++k) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            a[x & mask] ^= x;
        }
    });
    return {{"scan_ns_per_element", scan_ms * 1e6 / double(a.size())}, {"gups_ns_per_update", gups_ms * 1e6 / kUpdates}};
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    std::size_t n = std::max<std::size_t>(s.size_bytes / 8, 1);
    physmem::TreeShape shape = physmem::TreeShape::make(64 << 10, 8);
    physmem::BlockPool from({.block_size = 64 << 10, .capacity = shape.blocks_for(n) * (64 << 10),
                             .backing = physmem::Backing::page_4k, .strict_backing = true});
    physmem::TreeShape target_shape = physmem::TreeShape::make(s.block_size, 8);
    physmem::BlockPool& to = ctx.pool("target", target_shape.blocks_for(n) * s.block_size, /*prefault=*/true);
    Tree a(n, from);
    std::iota(a.begin(), a.end(), 0);
    lab::Json before = speeds(a);  // the updates change the contents: the sum is taken after
    std::uint64_t expect = scan(a);
    auto t0 = std::chrono::steady_clock::now();
    a.migrate(to);
    double migrate_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    bool moved = &a.pool() == &to && from.stats().blocks_in_use == 0;
    std::uint64_t got = scan(a);
    lab::Json after = speeds(a);
    auto src = ctx.array<std::byte>("memcpy_src", n * 8, physmem::Backing::page_4k);
    auto dst = ctx.array<std::byte>("memcpy_dst", n * 8);
    std::memset(src.data(), 1, n * 8);
    std::memset(dst.data(), 2, n * 8);
    std::size_t piece = std::min<std::size_t>(64 << 10, s.block_size);  // what migrate copies at a time
    double copy_ms = best_ms([&] {
        for (std::size_t at = 0; at < n * 8; at += piece)
            std::memcpy(dst.data() + at, src.data() + at, std::min(piece, n * 8 - at));
    }, 3);
    double gib = double(n * 8) / double(1u << 30);
    ctx.set_elements(n);
    ctx.set_tree(s.block_size, a.depth(), a.leaf_length());
    ctx.measure(n, [&] { return scan(a); });
    ctx.set_field("migrate", {{"bytes", n * 8}, {"from_backing", "4k"}, {"migrate_ms", migrate_ms},
                              {"migrate_gib_s", gib / (migrate_ms / 1e3)}, {"memcpy_ms", copy_ms},
                              {"memcpy_gib_s", gib / (copy_ms / 1e3)},
                              {"bandwidth_vs_memcpy", copy_ms / migrate_ms},
                              {"baseline", "warm: target pool prefaulted; memcpy 4k -> B between touched buffers, in "
                                           "block-sized pieces as migrate copies; migrate timed once, memcpy the best of 3"},
                              {"before", before}, {"after", after},
                              {"scan_ratio", double(after["scan_ns_per_element"]) / double(before["scan_ns_per_element"])},
                              {"gups_ratio", double(after["gups_ns_per_update"]) / double(before["gups_ns_per_update"])}});
    ctx.checksum(expect);
    ctx.verify(moved && got == expect, "after migrate the array is on the target pool, the source pool holds no "
                                       "block, and its sum equals the sum before");
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
