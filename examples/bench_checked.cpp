// examples/bench_checked.cpp — the cost of checked mode (CheckedTreeArray, issue 24): the same
// kernels on a TreeArray and a CheckedTreeArray of the same size in one tagged pool, side by
// side in one process. A benchmark, not a test.
//
//   build/examples/physmem_bench_checked [MiB, a power of two = 256] [repetitions = 11]
//
// Each repetition times every kernel both ways (which goes first alternates); a row prints the unchecked
// best time, then checked / unchecked: the ratio of the best times and the median [min,
// max] of the repetitions' ratios (the spread; the machine may be shared). uint64 elements,
// 64 KiB blocks. GUPS: size/4 random read-xor-writes (xorshift indexes, % size), one at a
// time; lab GUPS: lab/kernels/gups.hpp's pass (size a power of two). std::sort: copy in
// and sort 4 Mi elements (at most the size) on the iterators.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "kernels/gups.hpp"  // the lab's GUPS (lab/kernels): 128 streams, walk + prefetch, then update
#include "protect/kernels.hpp"  // the protect suite's scans: segments, iterator, index
#include "physmem/algorithm.hpp"
#include "physmem/checked_tree_array.hpp"
#include "physmem/segments.hpp"
#include "physmem/tree_array.hpp"

namespace {

using u64 = std::uint64_t;
volatile u64 sink;

template <class C>
[[gnu::noinline]] u64 pm_accumulate(const C& a) {
    return physmem::accumulate(a.begin(), a.end(), u64{0});
}
template <class C>
[[gnu::noinline]] u64 gups(C& a) {
    u64 x = 88172645463325252ull, n = a.size();
    for (u64 k = n / 4; k; --k) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        a[x % n] ^= x;
    }
    return a[0];
}

// The lab's GUPS pass: size/4 updates, the slots found (and checked) first, then updated.
template <class C>
[[gnu::noinline]] u64 lab_gups(C& a, const lab::gups::Plan& plan) {
    return lab::gups::update_pass<true>(a, plan, a.size() - 1);
}
template <class C>
[[gnu::noinline]] u64 sort_copy(C& a, const std::vector<u64>& src) {
    std::copy(src.begin(), src.end(), a.begin());
    std::sort(a.begin(), a.end());
    return a[a.size() / 2];
}

double seconds(const std::function<u64()>& f) {
    auto t0 = std::chrono::steady_clock::now();
    sink = f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Row {
    std::string name;
    std::function<u64()> plain, checked;
    std::vector<double> tp, tc;
};

double best(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

}  // namespace

int main(int argc, char** argv) {
    std::size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256;
    int reps = argc > 2 ? std::atoi(argv[2]) : 11;
    std::size_t n = (mib << 20) / sizeof(u64);
    if (mib == 0 || (mib & (mib - 1)) || reps < 1) {
        std::fprintf(stderr, "usage: physmem_bench_checked [MiB, a power of two = 256] [repetitions >= 1 = 11]\n");
        return 2;
    }
    physmem::BlockPool pool({.block_size = 64 << 10, .capacity = (mib << 21) + (64 << 20), .tags = true});
    {
        physmem::CheckedTreeArray<u64> c(n, pool);
        physmem::TreeArray<u64>& t = c.unchecked();
        for (std::size_t i = 0; i < n; ++i) t[i] = i * 7 % 1000;
        const auto& ct = t;
        const auto& cc = c;
        std::vector<Row> rows;
        auto add = [&](std::string name, auto fp, auto fc) { rows.push_back({std::move(name), fp, fc, {}, {}}); };
        add("for_each_segment sum", [&] { return lab::protect::segments(ct); }, [&] { return lab::protect::segments(cc); });
        add("physmem::accumulate", [&] { return pm_accumulate(ct); }, [&] { return pm_accumulate(cc); });
        add("iterator sum", [&] { return lab::protect::iterator(ct); }, [&] { return lab::protect::iterator(cc); });
        add("a[i] sum", [&] { return lab::protect::index(ct); }, [&] { return lab::protect::index(cc); });
        add("GUPS (size/4 updates)", [&] { return gups(t); }, [&] { return gups(c); });
        const lab::gups::Plan plan = lab::gups::make_plan(lab::gups::round_updates(n / 4));
        add("lab GUPS (prefetch)", [&] { return lab_gups(t, plan); }, [&] { return lab_gups(c, plan); });
        std::vector<u64> src(std::min<std::size_t>(n, std::size_t{1} << 22));
        for (std::size_t i = 0; i < src.size(); ++i) src[i] = (i * 2654435761u) % 1000003;
        physmem::BlockPool small({.block_size = 64 << 10, .capacity = 128 << 20, .tags = true});
        physmem::CheckedTreeArray<u64> s(src.size(), small);
        add("std::sort (32 MiB)", [&] { return sort_copy(s.unchecked(), src); }, [&] { return sort_copy(s, src); });
        for (int r = 0; r < reps; ++r)
            for (Row& row : rows) {
                if (r % 2) row.tc.push_back(seconds(row.checked));
                row.tp.push_back(seconds(row.plain));
                if (r % 2 == 0) row.tc.push_back(seconds(row.checked));
            }
        std::printf("%zu MiB of uint64, 64 KiB blocks, %d repetitions; checked / unchecked: ratio of the best\n"
                    "times, then the median [min, max] of the repetitions' ratios\n", mib, reps);
        std::printf("%-24s %12s  %s\n", "kernel", "unchecked ms", "checked / unchecked");
        for (const Row& row : rows) {
            std::vector<double> q;
            for (std::size_t i = 0; i < row.tp.size(); ++i) q.push_back(row.tc[i] / row.tp[i]);
            std::sort(q.begin(), q.end());
            std::printf("%-24s %12.2f  %5.3fx  %5.3fx [%5.3f, %5.3f]\n", row.name.c_str(), best(row.tp) * 1e3,
                        best(row.tc) / best(row.tp), q[q.size() / 2], q.front(), q.back());
        }
        std::printf("metadata: pool tags %zu bytes, checked array's table %zu bytes, for %zu bytes of elements\n",
                    pool.tag_bytes(), c.metadata_bytes(), n * sizeof(u64));
    }
    return 0;
}
