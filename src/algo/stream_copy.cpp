// src/algo/stream_copy.cpp — large copies that store past the cache (see algorithm.hpp,
// detail::stream_copy).
//
// A segmented copy is a run of leaf-sized memmoves. For a copy much larger than the last
// level cache, glibc's memmove of the whole range stores non-temporally, but each of those
// runs is below its threshold and stores through the cache, reading every destination line
// first (a read for ownership): a third more memory traffic, and the tree's copy fell far
// behind the vector's (README, algorithms). This copy does what glibc's large path does:
// four 4 KiB streams interleaved, 16-byte non-temporal stores (SSE2, every x86-64), a
// prefetch ahead of each stream's loads, and a store fence at the end so the bytes are
// ordered before whatever the caller does next.
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "physmem/algorithm.hpp"
#include "port/os.hpp"

namespace physmem::detail {

namespace {

#if defined(__x86_64__)
constexpr std::size_t kPage = 4096, kLine = 64, kStreams = 4;

// 64 bytes from s to d (d 16-byte aligned), stored non-temporally.
[[gnu::always_inline]] inline void line(char* d, const char* s) noexcept {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), e);
}

// n bytes, d 16-byte aligned, no overlap; what is left below a line by memcpy.
void stream(char* d, const char* s, std::size_t n) noexcept {
    constexpr std::size_t block = kStreams * kPage;
    std::size_t at = 0;
    for (; at + block <= n; at += block)
        for (std::size_t i = 0; i < kPage; i += kLine)
            for (std::size_t k = 0; k < kStreams; ++k) {
                const char* from = s + at + k * kPage + i;
                _mm_prefetch(from + 4 * kLine, _MM_HINT_T0);
                line(d + at + k * kPage + i, from);
            }
    for (; at + kLine <= n; at += kLine) line(d + at, s + at);
    std::memcpy(d + at, s + at, n - at);
    _mm_sfence();
}
#endif

}  // namespace

void stream_copy(void* dst, const void* src, std::size_t n) noexcept {
    auto* d = static_cast<char*>(dst);
    const auto* s = static_cast<const char*>(src);
#if defined(__x86_64__)
    const bool apart = d + n <= s || s + n <= d;  // the streams read ahead of what they store
    if (apart && n >= kStreams * kPage) {
        const std::size_t head = (16 - (reinterpret_cast<std::uintptr_t>(d) & 15)) & 15;
        std::memcpy(d, s, head);
        stream(d + head, s + head, n - head);
        return;
    }
#endif
    std::memmove(d, s, n);
}

std::size_t stream_copy_threshold() noexcept {
    static const std::size_t bytes = os::last_level_cache_bytes() / 4 * 3;
    return bytes;
}

}  // namespace physmem::detail
