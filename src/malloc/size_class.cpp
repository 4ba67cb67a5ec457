// src/malloc/size_class.cpp — the small-object size classes and the size-to-class table.
//
// Small objects (<= 60 KiB) come in 79 classes: 16-byte steps to 128, then 8 per
// doubling (12.5% spacing). Each class carves objects from spans of whole 4 KiB pages
// (filler.cpp): at least 4 pages, more until a span holds 8 objects and wastes at most
// 1/8 of its bytes. A thread's bin holds up to 64 KiB of its class (8..512 objects:
// cache_max, thread_cache.cpp).
//
// Written once, by classes_init during the process's initialisation (api.cpp, under the
// init guard); read without a lock afterwards. No allocation, no lock.
#include "malloc/fast.hpp"

namespace physmem::malloc {

SizeClass g_classes[kMaxClasses];
unsigned g_nclasses;
std::uint8_t g_lut16[kSmallMax / 16 + 1];

namespace {

// A thread's bin holds up to this many bytes of one class (8..512 objects).
constexpr std::uint32_t kBinBytes = 64u << 10;

void add_class(std::uint32_t size) noexcept {
    std::uint32_t pages = 4;
    auto bad = [&] {
        std::uint32_t bytes = pages * kPage;
        return bytes < 8 * size || (bytes % size) * 8 > bytes;
    };
    while (bad()) ++pages;
    std::uint32_t nobj = pages * static_cast<std::uint32_t>(kPage) / size;
    std::uint32_t cap = static_cast<std::uint32_t>(kBinBytes / size);
    SizeClass& c = g_classes[++g_nclasses];
    nobj = nobj < kMaxObjects ? nobj : kMaxObjects;
    c = {size, pages, nobj, cap > 512 ? 512 : (cap < 8 ? 8 : cap), ((std::uint64_t{1} << 40) + size - 1) / size,
         0, static_cast<std::uint32_t>(__builtin_ctz(size))};
    std::uint64_t odd = size >> c.shift, inv = odd;
    for (int i = 0; i < 6; ++i) inv *= 2 - odd * inv;  // Newton: doubles the correct low bits
    c.odd_inverse = inv;
}

}  // namespace

void classes_init() noexcept {
    if (g_nclasses) return;
    for (std::uint32_t s = 16; s <= 128; s += 16) add_class(s);
    for (std::uint32_t p = 128; p < (32u << 10) * 2; p *= 2)
        for (std::uint32_t k = 1; k <= 8 && p + k * (p / 8) <= kSmallMax; ++k) add_class(p + k * (p / 8));
    unsigned c = 1;
    for (unsigned i = 0; i < sizeof g_lut16; ++i) {
        while (g_classes[c].size < i * 16) ++c;
        g_lut16[i] = static_cast<std::uint8_t>(c);
    }
}

}  // namespace physmem::malloc
