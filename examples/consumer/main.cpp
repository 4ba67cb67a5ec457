// examples/consumer/main.cpp — uses an installed physmem (the pool, a TreeArray and a
// PagedArray larger than its budget); exits 0 when it works. Built by the test command
// with find_package(physmem) and with `pkg-config --cflags --libs physmem`.
#include <physmem/paged_array.hpp>
#include <physmem/pool.hpp>
#include <physmem/segments.hpp>
#include <physmem/tree_array.hpp>

#include <cstdint>
#include <cstdio>
#include <numeric>
#include <utility>

int main() {
    physmem::BlockPool pool({.block_size = 16 << 10, .capacity = 16 << 20});
    physmem::TreeArray<long> a(100000, pool);
    std::iota(a.begin(), a.end(), 1L);
    long sum = 0;
    physmem::for_each_segment(a, [&](std::span<const long> s) { sum = std::accumulate(s.begin(), s.end(), sum); });
    bool tree_ok = sum == 100000L * 100001L / 2 && a.depth() == 2;

    // 4 MiB of elements with 256 KiB in memory: leaves go to a file and come back.
    physmem::PagedArray<std::uint64_t> p(std::size_t{1} << 19, pool, {.budget = 256 << 10});
    for (std::size_t i = 0; i < p.size(); i += 1000) p.set(i, i * 3);
    std::uint64_t paged_sum = 0;
    for (std::size_t i = 0; i < p.size(); i += 1000) paged_sum += p.get(i);
    std::uint64_t want = 0;
    for (std::size_t i = 0; i < p.size(); i += 1000) want += i * 3;
    bool paged_ok = paged_sum == want && p.stats().evictions > 0;

    bool ok = tree_ok && paged_ok;
    std::printf("consumer: tree depth %u, sum %ld; paged %s (%zu evictions): %s\n", a.depth(), sum,
                paged_ok ? "read back" : "WRONG", static_cast<std::size_t>(p.stats().evictions),
                ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
