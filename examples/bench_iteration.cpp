// examples/bench_iteration.cpp — the loops people write over an array, on std::vector,
// TreeArray and PagedArray (budget: everything fits), side by side in one process (issue 22).
// A benchmark, not a test: built twice, physmem_bench_iteration_O2 and _O3.
//
//   build/examples/physmem_bench_iteration_O3 [MiB = 128] [repetitions = 15]
//
// The vector uses physmem::prefault_allocator (huge pages, as the pool's blocks).
// Each repetition times every kernel on the vector, then the tree, then the paged array; a
// row prints the vector's best time and, for the others, the ratio to the vector of the
// best times and the median [min, max] of the repetitions' ratios. uint64 elements,
// 64 KiB blocks.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "physmem/algorithm.hpp"
#include "physmem/paged_array.hpp"
#include "physmem/prefault_allocator.hpp"
#include "physmem/segments.hpp"
#include "physmem/tree_array.hpp"

namespace {

using u64 = std::uint64_t;
// The same backing as the pool's blocks: the best huge-page rung, prefaulted.
using Vec = std::vector<u64, physmem::prefault_allocator<u64>>;
volatile u64 sink;

template <class C>
[[gnu::noinline]] u64 range_for(const C& a) {
    u64 s = 0;
    for (u64 x : a) s += x;
    return s;
}
template <class C>
[[gnu::noinline]] u64 iterator_loop(const C& a) {
    u64 s = 0;
    for (auto it = a.begin(), e = a.end(); it != e; ++it) s += *it;
    return s;
}
template <class C>
[[gnu::noinline]] u64 index_loop(const C& a) {
    u64 s = 0;
    for (std::size_t i = 0, n = a.size(); i < n; ++i) s += a[i];
    return s;
}
template <class C>
[[gnu::noinline]] u64 std_accumulate(const C& a) {
    return std::accumulate(a.begin(), a.end(), u64{0});
}
template <class C>
[[gnu::noinline]] u64 pm_accumulate(const C& a) {
    return physmem::accumulate(a.begin(), a.end(), u64{0});
}
template <class C>
[[gnu::noinline]] u64 segment_sum(const C& a) {
    u64 s = 0;
    physmem::for_each_segment(a, [&](auto span) {
        for (u64 x : span) s += x;
    });
    return s;
}
[[gnu::noinline]] u64 segment_sum(const Vec& a) {
    u64 s = 0;
    for (u64 x : a) s += x;
    return s;
}
template <class C>
[[gnu::noinline]] u64 pm_count(const C& a) {
    return static_cast<u64>(physmem::count(a.begin(), a.end(), u64{3}));
}
template <class C>
[[gnu::noinline]] u64 pm_find(const C& a) {
    return static_cast<u64>(physmem::find(a.begin(), a.end(), ~u64{0}) - a.begin());
}
template <class C>
[[gnu::noinline]] u64 pm_fill(C& a) {
    physmem::fill(a.begin(), a.end(), u64{1});
    return 0;
}
template <class C>
[[gnu::noinline]] u64 pm_copy_out(const C& a, Vec& out) {
    physmem::copy(a.begin(), a.end(), out.begin());
    return out[7];
}
template <class C>
[[gnu::noinline]] u64 pm_transform(C& a) {
    physmem::transform(a.begin(), a.end(), a.begin(), [](u64 x) { return x * 3 + 1; });
    return 0;
}

double seconds(const std::function<u64()>& f) {
    auto t0 = std::chrono::steady_clock::now();
    sink = f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Row {
    std::string name;
    std::function<u64()> vec, tree, paged;  // paged may be empty
    std::vector<double> tv, tt, tp;  // seconds per repetition
};

double best(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

// "best-ratio  median [min, max]" of x / base, repetition by repetition.
std::string summary(const std::vector<double>& x, const std::vector<double>& base) {
    std::vector<double> r;
    for (std::size_t i = 0; i < x.size(); ++i) r.push_back(x[i] / base[i]);
    std::sort(r.begin(), r.end());
    char buf[96];
    std::snprintf(buf, sizeof buf, "%5.2fx %5.2fx [%4.2f, %4.2f]", best(x) / best(base), r[r.size() / 2], r.front(),
                  r.back());
    return buf;
}

}  // namespace

int main(int argc, char** argv) {
    std::size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 128;
    int reps = argc > 2 ? std::atoi(argv[2]) : 15;
    std::size_t n = (mib << 20) / sizeof(u64);
    physmem::BlockPool pool({.block_size = 64 << 10, .capacity = (mib << 21) + (64 << 20)});
    Vec v(n), out(n);
    physmem::TreeArray<u64> t(n, pool);
    physmem::PagingOptions po;
    po.budget = (mib << 20) + (1 << 20);  // everything fits
    physmem::PagedArray<u64> p(n, pool, po);
    for (std::size_t i = 0; i < n; ++i) v[i] = t[i] = i * 7 % 1000;
    physmem::copy(v.begin(), v.end(), p.begin());
    const auto& cv = v;
    const auto& ct = t;
    const auto& cp = p;

    std::vector<Row> rows;
    auto add = [&](std::string name, auto fv, auto ft, auto fp) { rows.push_back({std::move(name), fv, ft, fp, {}, {}, {}}); };
    add("range-for sum", [&] { return range_for(cv); }, [&] { return range_for(ct); }, [&] { return range_for(cp); });
    add("iterator sum", [&] { return iterator_loop(cv); }, [&] { return iterator_loop(ct); }, [&] { return iterator_loop(cp); });
    add("a[i] sum", [&] { return index_loop(cv); }, [&] { return index_loop(ct); }, [&] { return index_loop(cp); });
    add("std::accumulate", [&] { return std_accumulate(cv); }, [&] { return std_accumulate(ct); }, [&] { return std_accumulate(cp); });
    add("for_each_segment sum", [&] { return segment_sum(cv); }, [&] { return segment_sum(ct); }, [&] { return segment_sum(cp); });
    add("physmem::accumulate", [&] { return pm_accumulate(cv); }, [&] { return pm_accumulate(ct); }, [&] { return pm_accumulate(cp); });
    add("physmem::count", [&] { return pm_count(cv); }, [&] { return pm_count(ct); }, [&] { return pm_count(cp); });
    add("physmem::find (absent)", [&] { return pm_find(cv); }, [&] { return pm_find(ct); }, [&] { return pm_find(cp); });
    add("physmem::fill", [&] { return pm_fill(v); }, [&] { return pm_fill(t); }, [&] { return pm_fill(p); });
    add("physmem::copy -> vector", [&] { return pm_copy_out(cv, out); }, [&] { return pm_copy_out(ct, out); },
        [&] { return pm_copy_out(cp, out); });
    add("physmem::transform in place", [&] { return pm_transform(v); }, [&] { return pm_transform(t); },
        [&] { return pm_transform(p); });

    for (int r = 0; r < reps; ++r)
        for (Row& row : rows) {
            row.tv.push_back(seconds(row.vec));
            row.tt.push_back(seconds(row.tree));
            row.tp.push_back(seconds(row.paged));
        }
    std::printf("%zu MiB of uint64, %d repetitions. Ratio to std::vector: of the best times, then the median\n"
                "[min, max] of the repetitions' ratios (the spread; the machine is shared)\n", mib, reps);
    std::printf("%-28s %9s  %-28s %-28s\n", "kernel", "vector ms", "TreeArray", "PagedArray (fits)");
    for (const Row& row : rows) std::printf("%-28s %9.2f  %-28s %-28s\n", row.name.c_str(), best(row.tv) * 1e3,
                                            summary(row.tt, row.tv).c_str(), summary(row.tp, row.tv).c_str());
    return 0;
}
