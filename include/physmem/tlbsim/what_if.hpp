// physmem/tlbsim/what_if.hpp — hypothetical hardware: paging with any power-of-two page
// size B from 4 KiB to 1 GiB, and, beside it, a tree over blocks of size B (the seeds'
// physically addressed alternative), both for one trace.
//
// Paging with pages of B (with_page_size): the assumption, stated once. The machine is the
// preset with one page size, B:
//   - TLBs: every array that holds 4 KiB pages holds B-byte pages instead, same entries and
//     ways (the preset's 4 KiB geometry); arrays for 2 MiB / 1 GiB pages only are unused.
//     A real part built for B might have other geometry; keeping it fixed makes a curve over
//     B show what the page size alone changes.
//   - Walk: a radix tree of 512-entry tables (9 bits a level, as x86-64 and ARMv8's 4 KiB
//     granule; on a 16 or 64 KiB granule preset its 2048- or 8192-entry tables, 11 or 13
//     bits) over the address width (48 bits with 4 levels, 57 with 5: LA57), with the
//     leaf entry mapping B: walk_levels(B) = ceil((width - log2 B) / 9) levels, the root
//     indexed by what is left. The tree is the hardware's with its lowest levels dropped
//     (its root is the hardware's root level): at B = 4 KiB, 2 MiB and 1 GiB the walk,
//     its page-walk caches and its entries' cache lines are exactly the hardware's
//     (4, 3 and 2 references with 4 levels). Page-walk caches: the preset's, by level.
// A tree over blocks of B (BlockTree): physmem's TreeArray shape (tree_shape.hpp): leaves
// of B bytes, inner blocks of B/8 pointers, over the traced footprint; run on the preset
// without translation (without_translation), so its only translation cost is its own loads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "physmem/tlbsim/config.hpp"
#include "physmem/tlbsim/simulator.hpp"

namespace physmem::tlbsim {

inline constexpr unsigned kMinPageShift = 12;  // 4 KiB
inline constexpr unsigned kMaxPageShift = 30;  // 1 GiB

// "4096", "64K", "64k", "64KiB", "2M", "1G" -> bytes. Throws std::invalid_argument naming
// the text when it is not a size; range and power of two are with_page_size's to check.
std::uint64_t parse_size(std::string_view text);
// "4k", "64k", "2m", "1g" (a power of two of at least 1 KiB).
std::string size_name(std::uint64_t bytes);

// The preset `m` as hypothetical hardware with pages of `bytes` (contract above): sets
// what_if_shift, names it "<name>@<size>". Throws std::invalid_argument ("... is not a power
// of two", "... is outside 4 KiB..1 GiB") for any other size.
MachineConfig with_page_size(MachineConfig m, std::uint64_t bytes);

// The address width the walk covers: 48 bits with 4 levels, 57 with 5.
constexpr unsigned address_bits(unsigned levels) noexcept { return levels == 5 ? 57 : 48; }
// Page-table levels a walk reads for pages of 2^shift bytes (contract above).
constexpr unsigned walk_levels(unsigned shift, unsigned levels) noexcept {
    return (address_bits(levels) - shift + 8) / 9;
}
// The same on m's granule (config.hpp): tables of 2^(granule_shift - 3) entries over
// address_bits(m); walk_levels(shift, levels) for the 4 KiB granule.
unsigned walk_levels(const MachineConfig& m, unsigned shift) noexcept;

// A tree over blocks of 2^shift bytes covering [lo, lo + bytes): the software walk a
// physically addressed program makes. A data reference into a block other than the
// previous reference's (one remembered leaf, as a TreeArray iterator keeps) first loads one
// slot per inner level, root first (Ref::sw_walk); references outside the range and
// references to the same block go straight to the simulator. Slots get synthetic addresses
// (each level's inner blocks laid out as one array, levels apart above bit 59), so slots of
// neighbouring blocks share cache lines as in a real tree.
class BlockTree {
  public:
    // pre: 12 <= shift <= 30 (fan-out 2^(shift-3) >= 512).
    BlockTree(std::uint64_t lo, std::uint64_t bytes, unsigned shift);

    // Inner levels (the tree's depth - 1): 0 when the range fits one block.
    unsigned inner_levels() const noexcept { return inner_; }
    // Walks made so far (blocks entered).
    std::uint64_t walks() const noexcept { return walks_; }

    void access(Simulator& sim, std::uint64_t addr, PageSize size) noexcept;

  private:
    std::uint64_t lo_, bytes_;
    unsigned shift_, fan_shift_, inner_ = 0;
    std::uint64_t last_block_ = ~std::uint64_t{0};
    std::uint64_t walks_ = 0;
};

}  // namespace physmem::tlbsim
