// examples/consumer/main.cpp — uses an installed physmem; exits 0 when it works.
#include <physmem/pool.hpp>
#include <physmem/segments.hpp>
#include <physmem/tree_array.hpp>

#include <cstdio>
#include <numeric>

int main() {
    physmem::BlockPool pool({.block_size = 16 << 10, .capacity = 16 << 20});
    physmem::TreeArray<long> a(100000, pool);
    std::iota(a.begin(), a.end(), 1L);
    long sum = 0;
    physmem::for_each_segment(a, [&](std::span<const long> s) { sum = std::accumulate(s.begin(), s.end(), sum); });
    bool ok = sum == 100000L * 100001L / 2 && a.depth() == 2;
    std::printf("consumer: depth %u, sum %ld: %s\n", a.depth(), sum, ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
