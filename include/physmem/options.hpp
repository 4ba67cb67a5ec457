// physmem/options.hpp — every run-time option of physmem, declared once.
//
// Each row of PHYSMEM_OPTIONS gives the field name, the environment variable, the kind
// of value, the default (as it would be written in the environment) and the help text —
// the declaration format of every physmem option table (the drop-in allocator's too,
// src/malloc/options.hpp). The pool's fields are PoolOptions' own (Options extends it
// with `verbose`; each row's type is checked against its kind), so the default pool is
// built from Options without copying; the parser and the help listing come from the table.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "physmem/backing.hpp"
#include "physmem/pool.hpp"

//  X(field,          environment variable,           kind,    default, help)
#define PHYSMEM_OPTIONS(X)                                                                 \
    X(block_size, "PHYSMEM_BLOCK_SIZE", size, "64K",                                       \
      "block size of the default pool: a power of two from 4K to 1G")                      \
    X(capacity, "PHYSMEM_CAPACITY", size, "1G",                                            \
      "first region of the default pool (it grows by doubling when exhausted): "           \
      "at least one block, at most 2^32 blocks")                                           \
    X(max_capacity, "PHYSMEM_MAX_CAPACITY", size, "0",                                     \
      "cap on the default pool's total size: 0 (no cap) or at least the capacity")         \
    X(backing, "PHYSMEM_BACKING", backing, "best",                                         \
      "preferred page size: best (1g, 2m, thp, 4k in turn), 1g, 2m, thp or 4k")            \
    X(strict_backing, "PHYSMEM_STRICT_BACKING", flag, "0",                                 \
      "1: fail instead of falling back to a smaller page size")                            \
    X(prefault, "PHYSMEM_PREFAULT", flag, "0",                                             \
      "1: populate page tables when memory is mapped (no first-touch faults)")             \
    X(lock, "PHYSMEM_LOCK", flag, "0", "1: mlock mapped memory")                           \
    X(reserve_huge_pages, "PHYSMEM_RESERVE_HUGE_PAGES", flag, "0",                         \
      "1 (root): raise nr_hugepages as needed, restore it at exit; printed on stderr")     \
    X(give_back_delay_ms, "PHYSMEM_GIVE_BACK_DELAY_MS", count, "100",                      \
      "milliseconds an empty huge page of the default pool waits before it is given back " \
      "(at most 86400000, one day)")                                                       \
    X(background_give_back, "PHYSMEM_BACKGROUND_GIVE_BACK", flag, "1",                    \
      "0: no background thread gives empty pages back, for every pool of the process "     \
      "(they go back at the pool's next call after the delay)")                             \
    X(compact_threshold, "PHYSMEM_COMPACT_THRESHOLD", fraction, "0.25",                    \
      "maintain() compacts when free blocks in partly used pages exceed this share (0: never)") \
    X(verbose, "PHYSMEM_VERBOSE", flag, "0", "1: print what was mapped, on stderr")

namespace physmem {

enum class OptionKind { size, flag, backing, count, fraction };

// The default pool's options (grow is on for it) and the one option that is not the
// pool's. Every other field is PoolOptions'.
struct Options : PoolOptions {
    bool verbose = false;
};

struct OptionInfo {
    std::string_view field;
    std::string_view env;
    OptionKind kind;
    std::string_view default_value;
    std::string_view help;
};

// The table, in declaration order.
std::span<const OptionInfo> option_table() noexcept;

// The defaults, parsed from the table.
Options default_options();

// Defaults overridden by the PHYSMEM_* variables set in the environment. Throws
// std::invalid_argument naming the variable when a value does not parse or is out of its
// field's range (see PoolOptions), e.g. `PHYSMEM_MAX_CAPACITY="1K": PoolOptions::max_capacity
// = 1024: smaller than capacity (1 GiB); 0 means no cap`.
Options options_from_env();

}  // namespace physmem
