// examples/demo.cpp — builds a pool and a tree array and says what it got.
//
//   physmem_demo [--block-size 64K] [--capacity 1G] [--backing best|1g|2m|thp|4k]
//                [--elements N] [--prefault] [--reserve-huge-pages]
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>

#include "port/counters.hpp"
#include "core/parse.hpp"
#include "physmem/options.hpp"
#include "physmem/pool.hpp"
#include "physmem/segments.hpp"
#include "physmem/tree_array.hpp"

namespace {

struct Args {
    physmem::PoolOptions pool{.block_size = 64 << 10, .capacity = std::size_t{256} << 20};
    std::size_t elements = 16 << 20;
};

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr, "physmem_demo: %s\nusage: physmem_demo [--block-size SIZE] [--capacity SIZE] "
                 "[--backing best|1g|2m|thp|4k] [--elements N] [--prefault] [--reserve-huge-pages]\n", why);
    std::exit(2);
}

std::size_t size_arg(const char* v) {
    auto s = physmem::parse_size(v ? v : "");
    if (!s) usage("bad size");
    return *s;
}

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        std::string k = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (k == "--block-size") a.pool.block_size = size_arg(v), ++i;
        else if (k == "--capacity") a.pool.capacity = size_arg(v), ++i;
        else if (k == "--elements") a.elements = size_arg(v), ++i;
        else if (k == "--backing") {
            auto b = physmem::parse_backing(v ? v : "");
            if (!b) usage("bad backing");
            a.pool.backing = *b, ++i;
        } else if (k == "--prefault") a.pool.prefault = true;
        else if (k == "--reserve-huge-pages") a.pool.reserve_huge_pages = true;
        else usage(("unknown argument " + k).c_str());
    }
    return a;
}

void print_pool(const physmem::BlockPool& pool) {
    physmem::PoolStats s = pool.stats();
    std::printf("pool: %zu blocks of %s, %s mapped on %s pages, %s prefaulted, %zu huge pages reserved\n",
                s.blocks_total, physmem::format_size(s.block_size).c_str(),
                physmem::format_size(s.bytes_mapped).c_str(), std::string(to_string(s.backing)).c_str(),
                physmem::format_size(s.bytes_prefaulted).c_str(), s.huge_pages_reserved);
    for (const auto& note : pool.backing_notes()) std::printf("  skipped %s\n", note.c_str());
}

void print_verified(const physmem::BlockPool& pool) {
    for (const auto& r : pool.verify_backing())
        std::printf("verified (smaps): kernel page %s, %s on huge pages, %s resident -> %s%s\n",
                    physmem::format_size(r.kernel_page_size).c_str(), physmem::format_size(r.huge_bytes).c_str(),
                    physmem::format_size(r.resident_bytes).c_str(), std::string(to_string(r.backing)).c_str(),
                    r.verified ? "" : " (differs from the rung requested)");
}

}  // namespace

int main(int argc, char** argv) {
    Args args = parse(argc, argv);
    physmem::BlockPool pool(args.pool);
    print_pool(pool);
    physmem::PageFaultCounter faults;
    std::uint64_t f0 = faults.read();
    physmem::TreeArray<std::uint32_t> a(args.elements, pool);
    std::iota(a.begin(), a.end(), 0u);
    std::uint64_t sum = 0;
    physmem::for_each_segment(a, [&](std::span<const std::uint32_t> s) {
        for (std::uint32_t x : s) sum += x;
    });
    std::uint64_t n = a.size(), expect = n * (n - 1) / 2;
    std::printf("tree: %zu x uint32 in %zu leaves of %zu elements, depth %u; sum %s (%llu)\n", a.size(),
                a.leaf_count(), a.leaf_length(), a.depth(), sum == expect ? "correct" : "WRONG",
                static_cast<unsigned long long>(sum));
    std::printf("page faults while building and filling: %llu (%s)\n",
                static_cast<unsigned long long>(faults.read() - f0), std::string(faults.source()).c_str());
    print_verified(pool);
    if (auto pa = physmem::BlockPool::physical_address(&a[0]))
        std::printf("physical address of a[0]: 0x%llx\n", static_cast<unsigned long long>(*pa));
    else
        std::printf("physical address of a[0]: unavailable (needs root)\n");
    return sum == expect ? 0 : 1;
}
