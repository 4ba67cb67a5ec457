// lab/kernels/low12.hpp — where an allocator puts equal buffers inside a 4 KiB page
// (seed 002: buffers whose addresses share their low 12 bits 4K-alias when one is read
// while the other is written).
//
// probe(size, live): allocates `live` buffers of `size` bytes, all live at once, writes
// their first and last byte, reads the low 12 bits of each address, then frees them.
// `pair_shares` is whether the first two share their low 12 bits (the seed's pair);
// `distinct` how many different low-12 values the `live` buffers have. The allocation
// functions are parameters so tests can check the bookkeeping with a known allocator.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <vector>

namespace lab::low12 {

struct Allocator {
    void* (*allocate)(std::size_t);
    void (*release)(void*);
};
inline const Allocator kMalloc{&std::malloc, &std::free};

struct Result {
    std::size_t size = 0;
    std::vector<unsigned> low12;     // one per live buffer, in allocation order
    bool pair_shares = false;
    std::size_t distinct = 0;
    bool ok = true;                  // every buffer non-null, writable end to end, no overlap
};

inline unsigned bits(const void* p) { return static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(p) & 0xfff); }

// True when no two of `ptrs` (each `size` bytes) overlap.
inline bool disjoint(std::vector<const std::byte*> ptrs, std::size_t size) {
    std::sort(ptrs.begin(), ptrs.end());
    for (std::size_t i = 1; i < ptrs.size(); ++i)
        if (ptrs[i - 1] + size > ptrs[i]) return false;
    return true;
}

// pre: size >= 1, live >= 2.
inline Result probe(std::size_t size, std::size_t live, const Allocator& a = kMalloc) {
    Result r;
    r.size = size;
    std::vector<std::byte*> got;
    for (std::size_t i = 0; i < live; ++i) {
        auto* p = static_cast<std::byte*>(a.allocate(size));
        if (!p) { r.ok = false; break; }
        p[0] = std::byte{0x5a}, p[size - 1] = std::byte{0xa5};
        got.push_back(p);
        r.low12.push_back(bits(p));
    }
    for (std::byte* p : got) r.ok = r.ok && p[0] == std::byte{0x5a} && p[size - 1] == std::byte{0xa5};
    r.ok = r.ok && disjoint({got.begin(), got.end()}, size);
    for (auto it = got.rbegin(); it != got.rend(); ++it) a.release(*it);
    r.pair_shares = r.low12.size() >= 2 && r.low12[0] == r.low12[1];
    r.distinct = std::set<unsigned>(r.low12.begin(), r.low12.end()).size();
    return r;
}

// 64 B, 128 B, ... up to max (powers of two).
inline std::vector<std::size_t> sizes(std::size_t max) {
    std::vector<std::size_t> out;
    for (std::size_t s = 64; s <= max; s *= 2) out.push_back(s);
    return out;
}

}  // namespace lab::low12
