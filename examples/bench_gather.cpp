// examples/bench_gather.cpp — random reads of a PagedArray that holds all its data, against a
// TreeArray on the same blocks: the graph suite's gather (lab::graph::sum_at, PageRank's
// pull: ready elements through PagedArray::element_if_ready, the rest through operator[]).
// A benchmark, not a test.
//
//   build/examples/physmem_bench_gather [repetitions = 15]
//
// 2^17 doubles on 2 MiB blocks (one leaf each side: everything fits), 2^22 random indices
// read in lists of 28 (a Kronecker graph's mean degree at edge factor 16). A repetition
// times the paged and the tree pass in turn; prints the best ns a read of each, their
// ratio, and the difference of the sums (0: both read the same values).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "kernels/graph/arrays.hpp"  // lab/kernels: sum_at
#include "physmem/paged_array.hpp"
#include "physmem/tree_array.hpp"

namespace {

template <class A>
double gather(const A& a, std::span<const std::uint32_t> at, std::size_t list) {
    double sum = 0;
    for (std::size_t j = 0; j < at.size(); j += list)
        sum = lab::graph::sum_at(a, at.subspan(j, std::min(list, at.size() - j)), sum);
    return sum;
}

double ns_since(std::chrono::steady_clock::time_point t, std::size_t n) {
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t).count() / double(n);
}

}  // namespace

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 15;
    constexpr std::size_t n = std::size_t{1} << 17, reads = std::size_t{1} << 22, list = 28;
    physmem::BlockPool pool({.block_size = 2 << 20, .capacity = 64 << 20});
    physmem::PagedArray<double> paged(n, pool, {.budget = 8 << 20});
    physmem::TreeArray<double> tree(n, pool);
    for (std::size_t i = 0; i < n; ++i) paged[i] = tree[i] = double(i % 7);
    std::vector<std::uint32_t> at(reads);
    std::mt19937 gen(1);
    for (std::uint32_t& i : at) i = static_cast<std::uint32_t>(gen() % n);
    double best_paged = 1e300, best_tree = 1e300, diff = 0;
    for (int r = 0; r < reps; ++r) {
        auto t = std::chrono::steady_clock::now();
        const double p = gather(std::as_const(paged), at, list);
        best_paged = std::min(best_paged, ns_since(t, reads));
        t = std::chrono::steady_clock::now();
        const double q = gather(std::as_const(tree), at, list);
        best_tree = std::min(best_tree, ns_since(t, reads));
        diff += p - q;
    }
    std::printf("paged %.3f ns, tree %.3f ns a read: paged / tree %.3f (sums differ by %g)\n", best_paged, best_tree,
                best_paged / best_tree, diff);
    return diff == 0 ? 0 : 1;
}
