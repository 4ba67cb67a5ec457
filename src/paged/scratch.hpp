// src/paged/scratch.hpp — scratch vectors of the paging slow path, made ready up front.
#pragma once

#include <cstddef>

namespace physmem::detail {

// Reserves n elements and writes them once, keeping v's contents, so that the heap pages
// behind them are faulted in now, not when a later batch first reaches that far (a
// kernel page fault in the middle of paging).
template <class V>
void reserve_touched(V& v, std::size_t n) {
    v.reserve(n);
    std::size_t size = v.size();
    v.resize(v.capacity());
    v.resize(size);
}

}  // namespace physmem::detail
