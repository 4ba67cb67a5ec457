// lab/kernels/tree_sizing.hpp — how many pool bytes a TreeArray of n elements needs.
#pragma once

#include <algorithm>
#include <cstddef>

#include "physmem/tree_shape.hpp"

namespace lab {

// Bytes of pool blocks a TreeArray<T> of n elements occupies with `block_size` blocks:
// its leaves plus every inner level up to one root (at least one block).
template <class T>
std::size_t tree_bytes(std::size_t block_size, std::size_t n) {
    physmem::TreeShape s = physmem::TreeShape::make(block_size, sizeof(T));
    std::size_t level = std::max<std::size_t>(s.leaves_for(n), 1), total = level;
    while (level > 1) {
        level = (level + s.fan_mask()) >> s.fan_shift;
        total += level;
    }
    return total * block_size;
}

}  // namespace lab
