// src/pool/default_pool.cpp — the process-wide pool, configured from PHYSMEM_*.
#include <cstdlib>
#include <string>

#include "core/fatal.hpp"
#include "core/parse.hpp"
#include "physmem/options.hpp"
#include "physmem/pool.hpp"

namespace physmem {

namespace {

void describe(const BlockPool& pool) {
    PoolStats s = pool.stats();
    core::say("physmem: default pool: %zu blocks of %s on %s pages\n", s.blocks_total,
              format_size(s.block_size).c_str(), std::string(to_string(s.backing)).c_str());
    for (const std::string& note : pool.backing_notes())
        core::say("physmem:   skipped %s\n", note.c_str());
}

}  // namespace

// Never destroyed (see pool.hpp): no leak check at exit, no unmapping under a late
// destructor. The exit handler, registered once the pool exists, runs when the pool's
// destructor would have.
BlockPool& default_pool() {
    static BlockPool& pool = *new BlockPool(options_from_env());  // Options is a PoolOptions (grow on)
    static const bool ready = [] {
        std::atexit([] { default_pool().restore_huge_pages(); });
        if (options_from_env().verbose) describe(pool);
        return true;
    }();
    (void)ready;
    return pool;
}

}  // namespace physmem
