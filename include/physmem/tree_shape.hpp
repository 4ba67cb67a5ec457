// physmem/tree_shape.hpp — the arithmetic of a page-table-like tree of blocks.
//
// A leaf block holds 2^leaf_shift elements; an inner block holds 2^fan_shift pointers.
// A tree of depth d (d >= 1) holds up to 2^(leaf_shift + fan_shift*(d-1)) elements;
// element i lives in leaf i >> leaf_shift, at slot i & leaf_mask. Both counts are
// powers of two so that a walk is shifts and masks only (no division).
#pragma once

#include <bit>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace physmem {

namespace detail {
// An integer of a container's own (a shift, a depth) that no store to its elements can
// change in the compiler's eyes: held as an enum type of its own, which GCC gives an alias
// set of its own (seen in its object code; other compilers may differ), read and written
// as a U. As a plain unsigned, every store
// to a TreeArray<std::uint32_t> (or int) made a loop of a[i] = v reload the leaf shift and
// the depth from the array, and keep them out of registers: the compiler must assume the
// element written might be them.
template <class U>
class Unaliased {
    enum class Rep : U {};
    Rep v_{};

  public:
    constexpr Unaliased() noexcept = default;
    constexpr Unaliased(U v) noexcept : v_(static_cast<Rep>(v)) {}
    constexpr operator U() const noexcept { return static_cast<U>(v_); }
    constexpr Unaliased& operator++() noexcept { return *this = U(*this) + 1; }
    constexpr Unaliased& operator--() noexcept { return *this = U(*this) - 1; }
};
}  // namespace detail

struct TreeShape {
    detail::Unaliased<unsigned> leaf_shift = 0;  // log2(elements per leaf)
    detail::Unaliased<unsigned> fan_shift = 0;   // log2(pointers per inner block)
    // 2^leaf_shift - 1, kept: a walk whose loop reloads the shape (a pager's or a check's
    // out-of-line call in it) masks with one operand instead of rebuilding the mask.
    detail::Unaliased<std::size_t> elem_mask = 0;

    // pre: block_size a power of two. Throws std::invalid_argument when one element
    // does not fit in a block. Elements per leaf is the largest power of two that fits:
    // an element of 24 bytes in a 64 KiB block gives 2048 per leaf (75% used).
    static TreeShape make(std::size_t block_size, std::size_t elem_size) {
        if (elem_size > block_size)
            throw std::invalid_argument("physmem::TreeArray: element of " + std::to_string(elem_size) +
                                        " bytes does not fit a block of " + std::to_string(block_size));
        TreeShape s;
        s.leaf_shift = static_cast<unsigned>(std::bit_width(block_size / elem_size) - 1);
        s.fan_shift = static_cast<unsigned>(std::bit_width(block_size / sizeof(void*)) - 1);
        s.elem_mask = (std::size_t{1} << s.leaf_shift) - 1;
        return s;
    }

    std::size_t leaf_len() const noexcept { return std::size_t{1} << leaf_shift; }
    // With BMI2 the mask is one instruction (bzhi) from the shift; without, three, which a
    // loaded mask saves.
#ifdef __BMI2__
    std::size_t leaf_mask() const noexcept { return leaf_len() - 1; }
#else
    std::size_t leaf_mask() const noexcept { return elem_mask; }
#endif
    std::size_t fan_mask() const noexcept { return (std::size_t{1} << fan_shift) - 1; }

    // Leaves needed for n elements.
    std::size_t leaves_for(std::size_t n) const noexcept {
        return (n >> leaf_shift) + ((n & leaf_mask()) != 0);
    }
    // Leaves a tree of depth d can address (saturates at SIZE_MAX).
    std::size_t leaf_capacity(unsigned depth) const noexcept {
        if (depth == 0) return 0;
        unsigned bits = fan_shift * (depth - 1);
        return bits >= 64 ? ~std::size_t{0} : std::size_t{1} << bits;
    }
    // Depth of a tree with `leaves` leaves: 0 for none, 1 for one, then as deep as needed.
    unsigned depth_for_leaves(std::size_t leaves) const noexcept {
        unsigned d = leaves ? 1 : 0;
        while (leaves > leaf_capacity(d)) ++d;
        return d;
    }
    unsigned depth_for(std::size_t n) const noexcept { return depth_for_leaves(leaves_for(n)); }
    // Blocks a tree of n elements occupies: its leaves plus every inner level up to one
    // root (at least one block), e.g. to size a pool for it.
    std::size_t blocks_for(std::size_t n) const noexcept {
        std::size_t level = leaves_for(n) ? leaves_for(n) : 1, total = level;
        while (level > 1) {
            level = (level + fan_mask()) >> fan_shift;
            total += level;
        }
        return total;
    }
};

}  // namespace physmem
