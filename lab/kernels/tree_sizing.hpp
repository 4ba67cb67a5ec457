// lab/kernels/tree_sizing.hpp — how many pool bytes a TreeArray of n elements needs.
#pragma once

#include <cstddef>

#include "physmem/tree_shape.hpp"

namespace lab {

// Bytes of pool blocks a TreeArray<T> of n elements occupies with `block_size` blocks:
// its leaves plus every inner level up to one root (at least one block).
template <class T>
std::size_t tree_bytes(std::size_t block_size, std::size_t n) {
    return physmem::TreeShape::make(block_size, sizeof(T)).blocks_for(n) * block_size;
}

}  // namespace lab
