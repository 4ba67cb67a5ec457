// lab/experiments/giveback.cpp — the giveback suite's first program: allocate many arrays,
// free a random 70% of them, and read what stays resident after the allocator gave back
// what it would.
//
//   physmem_lab_giveback --variant tree-index-thp --size 256M --param compact=on
//   physmem_lab_giveback --variant malloc-4k --size 256M --param alloc=jemalloc
//
// --size: total bytes of the arrays (std::uint64_t elements), cut into --param arrays
// equal arrays (default 256), allocated in order and filled. Then a random 70% (seeded)
// are freed, and:
//   malloc-B   std::vector<std::uint64_t> under alloc= glibc | jemalloc | tcmalloc |
//              mimalloc | physmem (lab/common/preload.*; physmem's on backing B); with
//              trim=on glibc's malloc_trim(0) runs after the frees (glibc only);
//   tree-index-B   physmem::TreeArray on a BlockPool strictly on B; the pool's release()
//              runs after the frees, and with compact=on its compact() (which releases);
//              with idle=on nothing calls the pool for 1 s after the last free (its
//              background thread gives the due pages back), then the heap is read.
//   paged-B    one physmem::PagedArray of --size on a pool strictly on B, its budget the
//              whole array (all in memory, filled); instead of freeing 70% of the arrays
//              its budget is cut to 30% (set_budget: dirty leaves written, frames back
//              to the pool), then release(), or with compact=on its blocks (movable)
//              are compacted, or with idle=on nothing calls the pool for 1 s. Live bytes: the budget kept. Timed: a scan of the whole
//              array (read from its file past the budget); its file in $TMPDIR or /var/tmp.
// The record's "giveback" field: live bytes (the survivors' elements), the heap after
// give-back (/proc/self/smaps_rollup: anonymous + hugetlb bytes, the THP and hugetlb
// share), its ratio to the live bytes, and for pools their own stats. Timed: one scan of
// the survivors (their sum, the checksum), so the record has the usual timing fields.
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "context.hpp"
#include "kernels/alloc_procfs.hpp"
#include "kernels/tree_sizing.hpp"
#include "physmem/paged_array.hpp"
#include "physmem/segments.hpp"
#include "physmem/tree_array.hpp"
#include "preload.hpp"

namespace {

namespace P = lab::alloc::procfs;

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_giveback",
    .experiment = "giveback",
    .unit = "element",
    .kinds = {lab::Kind::malloc, lab::Kind::tree_index, lab::Kind::paged},
    .default_block_size = 64 << 10,
    .params = {{"alloc", "glibc", {"glibc", "physmem", "jemalloc", "tcmalloc", "mimalloc"}, "malloc-B: which malloc"},
               {"trim", "off", {"off", "on"}, "malloc-B, glibc: malloc_trim(0) after the frees"},
               {"compact", "off", {"off", "on"}, "tree-index-B, paged-B: pool.compact() after the frees"},
               {"idle", "off", {"off", "on"}, "tree-index-B: no call to the pool for 1 s after the frees "
                                              "(the background give-back alone)"},
               {"arrays", "256", {}, "how many equal arrays the size is cut into"}},
};

lab::Json heap_json(const P::Heap& h) {
    return {{"anon_bytes", h.anon}, {"thp_bytes", h.thp}, {"hugetlb_bytes", h.hugetlb},
            {"huge_share", h.huge_share()}};
}

// Which arrays survive: 30% of them, chosen by a seeded shuffle.
std::vector<bool> survivors(std::size_t arrays, std::uint64_t seed) {
    std::vector<std::size_t> order(arrays);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
    std::vector<bool> keep(arrays, false);
    for (std::size_t k = 0; k < (arrays * 3 + 9) / 10; ++k) keep[order[k]] = true;
    return keep;
}

template <class Array>
std::uint64_t sum_all(const std::vector<Array>& as) {
    std::uint64_t s = 0;
    for (const Array& a : as)
        if constexpr (requires { a.leaf_count(); })
            physmem::for_each_segment(a, [&](auto seg) { s = std::accumulate(seg.begin(), seg.end(), s); });
        else
            s = std::accumulate(a.begin(), a.end(), s);
    return s;
}

// The common part: fill, free 70%, give back (how: the variant's), then measure.
template <class Array, class Make, class GiveBack>
void pattern(lab::Context& ctx, Make make, GiveBack give_back, lab::Json extra) {
    const lab::Settings& s = ctx.settings();
    std::size_t arrays = std::max<std::size_t>(s.param_size("arrays"), 1);
    std::size_t each = std::max<std::size_t>(s.size_bytes / arrays / 8, 1);
    std::vector<Array> as;
    as.reserve(arrays);
    for (std::size_t k = 0; k < arrays; ++k) {
        as.push_back(make(each));
        std::iota(as.back().begin(), as.back().end(), k * each);
    }
    P::Heap full = P::heap_now();
    std::vector<bool> keep = survivors(arrays, s.seed);
    std::vector<Array> live;
    for (std::size_t k = 0; k < arrays; ++k)
        if (keep[k]) live.push_back(std::move(as[k]));
    as.clear();
    as.shrink_to_fit();
    auto t0 = std::chrono::steady_clock::now();
    lab::Json how = give_back(live);
    double give_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    P::Heap after = P::heap_now();
    std::size_t live_bytes = live.size() * each * 8;
    std::uint64_t expect = 0;
    for (std::size_t k = 0; k < arrays; ++k)
        if (keep[k]) expect += each * (k * each) + each * (each - 1) / 2;
    ctx.set_elements(live.size() * each);
    ctx.measure(live.size() * each, [&] { return sum_all(live); });
    extra.update({{"arrays", arrays}, {"arrays_live", live.size()}, {"array_bytes", each * 8},
                  {"live_bytes", live_bytes}, {"heap_full", heap_json(full)}, {"heap_after", heap_json(after)},
                  {"rss_over_live", live_bytes ? double(after.total()) / double(live_bytes) : 0.0},
                  {"give_back_ms", give_ms}, {"give_back", how}});
    ctx.set_field("giveback", extra);
    ctx.checksum(expect);
    ctx.verify(sum_all(live) == expect, "the survivors' sum equals the closed form of their fills");
}

void run_malloc(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const std::string& a = s.param("alloc");
    if (a != "physmem" && s.backing != physmem::Backing::page_4k)
        lab::usage_error(kSpec, "--variant: " + a + " runs on its own defaults: malloc-4k only");
    if (s.param("trim") == "on" && a != "glibc") lab::usage_error(kSpec, "--param trim=on: glibc only");
    if (a == "physmem") ::setenv("PHYSMEM_MALLOC_BACKING", std::string(physmem::to_string(s.backing)).c_str(), 1);
    lab::preload::ensure(a);
    bool trim = s.param("trim") == "on";
    pattern<std::vector<std::uint64_t>>(
        ctx, [](std::size_t n) { return std::vector<std::uint64_t>(n); },
        [&](auto&) {
            if (trim) ::malloc_trim(0);
            return lab::Json{{"trim", trim}};
        },
        {{"allocator", a}, {"active", lab::preload::active()}});
}

// The pool's side of the give-back: release() or compact(), or 1 s without a call (idle),
// and its figures (stats() reads; it gives nothing back).
lab::Json pool_give_back(physmem::BlockPool& pool, bool compact, bool idle = false) {
    lab::Json j{{"compact", compact}, {"idle", idle}};
    if (idle) {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        j["idle_ms"] = 1000;
    } else if (compact) {
        physmem::CompactResult r = pool.compact();
        j.update({{"bytes_moved", r.bytes_moved}, {"bytes_given_back", r.bytes_given_back}});
    } else {
        j["bytes_given_back"] = pool.release();
    }
    physmem::PoolStats st = pool.stats();
    j.update({{"pool_resident_bytes", st.resident_bytes}, {"pool_page_bytes", st.page_size},
              {"pool_in_use_bytes", st.blocks_in_use * st.block_size}});
    return j;
}

// One paged array, all in memory, its budget cut to 30% (see the header).
void run_paged(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const std::size_t n = std::max<std::size_t>(s.size_bytes / 8, 1);
    const std::size_t bytes = physmem::TreeShape::make(s.block_size, 8).leaves_for(n) * s.block_size;
    // The tree's blocks, plus one: the pager's table has a level-1 block even for one leaf.
    physmem::BlockPool& pool = ctx.pool("arrays", lab::tree_bytes<std::uint64_t>(s.block_size, n) + s.block_size);
    const bool compact = s.param("compact") == "on", idle = s.param("idle") == "on";
    if (compact && idle) lab::usage_error(kSpec, "--param idle=on: without compact=on (no call to the pool)");
    physmem::PagingOptions o;
    o.budget = bytes;
    o.movable = compact;
    physmem::PagedArray<std::uint64_t> a(n, pool, o);
    physmem::for_each_segment(a, [i = std::uint64_t{0}](std::span<std::uint64_t> seg) mutable {
        for (std::uint64_t& x : seg) x = i++;
    });
    P::Heap full = P::heap_now();
    const physmem::PagingStats before = a.stats();
    auto t0 = std::chrono::steady_clock::now();
    a.set_budget((bytes * 3 + 9) / 10);
    lab::Json how = pool_give_back(pool, compact, idle);
    double give_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    P::Heap after = P::heap_now();
    const physmem::PagingStats cut = a.stats();
    how.update({{"budget_before", before.frames * s.block_size}, {"budget_after", a.budget()},
                {"resident_after", cut.resident * s.block_size}, {"writebacks", cut.writebacks - before.writebacks},
                {"io", cut.io}});
    const std::size_t live_bytes = cut.resident * s.block_size;
    const std::uint64_t expect = n * (n - 1) / 2;
    auto sum = [&] {
        std::uint64_t t = 0;
        physmem::for_each_segment(std::as_const(a), [&](auto seg) { t = std::accumulate(seg.begin(), seg.end(), t); });
        return t;
    };
    ctx.set_elements(n);
    ctx.measure(n, sum);
    ctx.set_field("giveback", {{"allocator", "physmem-paged"}, {"active", "physmem-paged"}, {"arrays", 1},
                               {"arrays_live", 1}, {"array_bytes", n * 8}, {"live_bytes", live_bytes},
                               {"heap_full", heap_json(full)}, {"heap_after", heap_json(after)},
                               {"rss_over_live", live_bytes ? double(after.total()) / double(live_bytes) : 0.0},
                               {"give_back_ms", give_ms}, {"give_back", how}});
    ctx.checksum(expect);
    ctx.verify(sum() == expect, "the array's sum equals n(n-1)/2 after its budget was cut");
}

void run_pool(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    std::size_t arrays = std::max<std::size_t>(s.param_size("arrays"), 1);
    physmem::TreeShape shape = physmem::TreeShape::make(s.block_size, 8);
    std::size_t blocks = arrays * shape.blocks_for(std::max<std::size_t>(s.size_bytes / arrays / 8, 1));
    physmem::BlockPool& pool = ctx.pool("arrays", blocks * s.block_size);
    bool compact = s.param("compact") == "on", idle = s.param("idle") == "on";
    if (compact && idle) lab::usage_error(kSpec, "--param idle=on: without compact=on (no call to the pool)");
    pattern<physmem::TreeArray<std::uint64_t>>(
        ctx, [&](std::size_t n) { return physmem::TreeArray<std::uint64_t>(n, pool); },
        [&](auto&) { return pool_give_back(pool, compact, idle); },
        {{"allocator", "physmem-pool"}, {"active", "physmem-pool"}});
}

void body(lab::Context& ctx) {
    if (ctx.settings().kind == lab::Kind::malloc) run_malloc(ctx);
    else if (ctx.settings().kind == lab::Kind::paged) run_paged(ctx);
    else run_pool(ctx);
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
