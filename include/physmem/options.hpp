// physmem/options.hpp — every run-time option of physmem, declared once.
//
// Each row of PHYSMEM_OPTIONS gives the field name, the environment variable, the kind
// of value, the default (as it would be written in the environment) and the help text.
// The Options struct, the environment parser and the help listing all come from it.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "physmem/backing.hpp"

//  X(field,          environment variable,           kind,    default, help)
#define PHYSMEM_OPTIONS(X)                                                                 \
    X(block_size, "PHYSMEM_BLOCK_SIZE", size, "64K",                                       \
      "block size of the default pool: a power of two from 4K to 1G")                      \
    X(capacity, "PHYSMEM_CAPACITY", size, "1G",                                            \
      "first region of the default pool (it grows by doubling when exhausted)")            \
    X(max_capacity, "PHYSMEM_MAX_CAPACITY", size, "0",                                     \
      "cap on the default pool's total size; 0 means no cap")                              \
    X(backing, "PHYSMEM_BACKING", backing, "best",                                         \
      "preferred page size: best (1g, 2m, thp, 4k in turn), 1g, 2m, thp or 4k")            \
    X(strict_backing, "PHYSMEM_STRICT_BACKING", flag, "0",                                 \
      "1: fail instead of falling back to a smaller page size")                            \
    X(prefault, "PHYSMEM_PREFAULT", flag, "0",                                             \
      "1: populate page tables when memory is mapped (no first-touch faults)")             \
    X(lock, "PHYSMEM_LOCK", flag, "0", "1: mlock mapped memory")                           \
    X(reserve_huge_pages, "PHYSMEM_RESERVE_HUGE_PAGES", flag, "0",                         \
      "1 (root): raise nr_hugepages as needed, restore it at exit; printed on stderr")     \
    X(verbose, "PHYSMEM_VERBOSE", flag, "0", "1: print what was mapped, on stderr")

namespace physmem {

enum class OptionKind { size, flag, backing };

struct Options {
#define PHYSMEM_FIELD_size std::size_t
#define PHYSMEM_FIELD_flag bool
#define PHYSMEM_FIELD_backing Backing
#define PHYSMEM_DECLARE_FIELD(field, env, kind, def, help) PHYSMEM_FIELD_##kind field{};
    PHYSMEM_OPTIONS(PHYSMEM_DECLARE_FIELD)
#undef PHYSMEM_DECLARE_FIELD
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
// std::invalid_argument naming the variable when a value does not parse.
Options options_from_env();

// "64K", "2M", "1G", "4096", "1T" (binary units, case-insensitive, optional "iB"/"B").
std::optional<std::size_t> parse_size(std::string_view s) noexcept;
// "1"/"0", "true"/"false", "yes"/"no", "on"/"off".
std::optional<bool> parse_flag(std::string_view s) noexcept;

// "64 KiB", "1 GiB", "3000 B" — exact binary units when they divide evenly.
std::string format_size(std::size_t bytes);

}  // namespace physmem
