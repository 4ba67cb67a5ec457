// src/pool/default_pool.cpp — the process-wide pool, configured from PHYSMEM_*.
#include <cstdio>

#include "physmem/options.hpp"
#include "physmem/pool.hpp"

namespace physmem {

namespace {

PoolOptions default_pool_options() {
    Options o = options_from_env();
    return PoolOptions{.block_size = o.block_size, .capacity = o.capacity, .backing = o.backing,
                       .strict_backing = o.strict_backing, .prefault = o.prefault, .lock = o.lock,
                       .reserve_huge_pages = o.reserve_huge_pages, .grow = true,
                       .max_capacity = o.max_capacity};
}

void describe(const BlockPool& pool) {
    PoolStats s = pool.stats();
    std::fprintf(stderr, "physmem: default pool: %zu blocks of %s on %s pages\n", s.blocks_total,
                 format_size(s.block_size).c_str(), std::string(to_string(s.backing)).c_str());
    for (const std::string& note : pool.backing_notes())
        std::fprintf(stderr, "physmem:   skipped %s\n", note.c_str());
}

}  // namespace

BlockPool& default_pool() {
    static BlockPool pool(default_pool_options());
    static const bool described = [] {
        if (options_from_env().verbose) describe(pool);
        return true;
    }();
    (void)described;
    return pool;
}

}  // namespace physmem
