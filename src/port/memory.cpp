// src/port/memory.cpp — mmap, madvise, mlock (see os.hpp for the contracts).
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

#include "port/os.hpp"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace physmem::os {

namespace {
int log2_of(std::size_t x) noexcept { return __builtin_ctzll(x); }
}  // namespace

void* map_hugetlb(std::size_t bytes, std::size_t page_size, std::size_t alignment) noexcept {
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | (log2_of(page_size) << MAP_HUGE_SHIFT);
    if (alignment <= page_size) {
        void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
        return p == MAP_FAILED ? nullptr : p;
    }
    // Larger alignment: hold an aligned window with an inaccessible mapping, then
    // place the hugetlb mapping over it (MAP_FIXED replaces the window atomically).
    std::size_t window = bytes + alignment;
    void* raw = ::mmap(nullptr, window, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    auto start = reinterpret_cast<std::uintptr_t>(raw);
    auto aligned = (start + alignment - 1) & ~(std::uintptr_t{alignment} - 1);
    void* p = ::mmap(reinterpret_cast<void*>(aligned), bytes, PROT_READ | PROT_WRITE,
                     flags | MAP_FIXED, -1, 0);
    int err = errno;
    if (aligned > start) ::munmap(raw, aligned - start);
    std::uintptr_t tail = aligned + bytes, end = start + window;
    if (p == MAP_FAILED) ::munmap(reinterpret_cast<void*>(aligned), bytes);
    if (end > tail) ::munmap(reinterpret_cast<void*>(tail), end - tail);
    errno = err;
    return p == MAP_FAILED ? nullptr : p;
}

void* map_aligned(std::size_t bytes, std::size_t alignment) noexcept {
    std::size_t page = base_page_size();
    if (alignment < page) alignment = page;
    std::size_t extra = alignment - page + 2 * page;  // slack for alignment, two guards
    if (bytes + extra < bytes) { errno = ENOMEM; return nullptr; }
    void* raw = ::mmap(nullptr, bytes + extra, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    auto start = reinterpret_cast<std::uintptr_t>(raw);
    auto aligned = (start + page + alignment - 1) & ~(std::uintptr_t{alignment} - 1);
    std::uintptr_t lo = aligned - page, hi = aligned + bytes + page, end = start + bytes + extra;
    if (lo > start) ::munmap(raw, lo - start);
    if (end > hi) ::munmap(reinterpret_cast<void*>(hi), end - hi);
    ::mprotect(reinterpret_cast<void*>(lo), page, PROT_NONE);
    ::mprotect(reinterpret_cast<void*>(aligned + bytes), page, PROT_NONE);
    return reinterpret_cast<void*>(aligned);
}

int unmap_aligned(void* p, std::size_t bytes) noexcept {
    std::size_t page = base_page_size();
    return unmap(static_cast<char*>(p) - page, bytes + 2 * page);
}

int unmap(void* p, std::size_t bytes) noexcept {
    return ::munmap(p, bytes) == 0 ? 0 : errno;
}

int advise_huge(void* p, std::size_t bytes, bool huge) noexcept {
    return ::madvise(p, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) == 0 ? 0 : errno;
}

int collapse_huge(void* p, std::size_t bytes) noexcept {
#ifndef MADV_COLLAPSE
    constexpr int MADV_COLLAPSE = 25;
#endif
    return ::madvise(p, bytes, MADV_COLLAPSE) == 0 ? 0 : errno;
}

int populate_write(void* p, std::size_t bytes, std::size_t page_size) noexcept {
    if (::madvise(p, bytes, MADV_POPULATE_WRITE) == 0) return 0;
    if (errno != EINVAL) return errno;  // EINVAL: kernel older than 5.14
    auto* b = static_cast<volatile unsigned char*>(p);
    for (std::size_t off = 0; off < bytes; off += page_size) b[off] = 0;
    return 0;
}

int discard(void* p, std::size_t bytes) noexcept {
    return ::madvise(p, bytes, MADV_DONTNEED) == 0 ? 0 : errno;
}

std::size_t resident_pages(const void* p, std::size_t bytes) noexcept {
    constexpr std::size_t kChunk = 512;  // pages per call: the vector stays on the stack
    unsigned char vec[kChunk];
    auto* b = static_cast<const unsigned char*>(p);
    std::size_t pages = (bytes + 4095) / 4096, resident = 0;
    for (std::size_t done = 0; done < pages; done += kChunk) {
        std::size_t n = pages - done < kChunk ? pages - done : kChunk;
        if (::mincore(const_cast<unsigned char*>(b + done * 4096), n * 4096, vec) != 0) return SIZE_MAX;
        for (std::size_t i = 0; i < n; ++i) resident += vec[i] & 1;
    }
    return resident;
}

int lock(void* p, std::size_t bytes) noexcept { return ::mlock(p, bytes) == 0 ? 0 : errno; }

int unlock(void* p, std::size_t bytes) noexcept {
    return ::munlock(p, bytes) == 0 ? 0 : errno;
}

namespace {

constexpr int kAnon = MAP_PRIVATE | MAP_ANONYMOUS;

// mmap of exactly [hint, hint + bytes) if that range is free, else nullptr (nothing mapped).
void* map_exactly_at(std::uintptr_t hint, std::size_t bytes, int prot, int flags) noexcept {
    if (hint == 0) return nullptr;
    void* p = ::mmap(reinterpret_cast<void*>(hint), bytes, prot, flags | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    if (reinterpret_cast<std::uintptr_t>(p) == hint) return p;
    ::munmap(p, bytes);  // a kernel before 4.17 takes the flag as a hint only
    return nullptr;
}

// An aligned mapping of `bytes` that never holds more than `bytes` of address space when
// it can help it (an RLIMIT_AS, ulimit -v, counts every byte of a window): first where the
// kernel puts it, if aligned; then at the aligned address just above that spot and at up
// to 16 below it; only then through a window of bytes + alignment, trimmed.
void* map_aligned_lean(std::size_t bytes, std::size_t alignment, int prot, int flags) noexcept {
    void* p = ::mmap(nullptr, bytes, prot, flags, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    auto start = reinterpret_cast<std::uintptr_t>(p);
    if ((start & (alignment - 1)) == 0) return p;
    ::munmap(p, bytes);
    std::uintptr_t below = start & ~(std::uintptr_t{alignment} - 1);
    if (void* q = map_exactly_at(below + alignment, bytes, prot, flags)) return q;
    for (unsigned k = 0; k < 16 && below >= k * alignment; ++k)  // downwards, as mmap grows
        if (void* q = map_exactly_at(below - k * alignment, bytes, prot, flags)) return q;
    std::size_t window = bytes + alignment - base_page_size();
    if (window < bytes) { errno = ENOMEM; return nullptr; }
    void* raw = ::mmap(nullptr, window, prot, flags, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    start = reinterpret_cast<std::uintptr_t>(raw);
    auto aligned = (start + alignment - 1) & ~(std::uintptr_t{alignment} - 1);
    std::uintptr_t tail = aligned + bytes, end = start + window;
    if (aligned > start) ::munmap(raw, aligned - start);
    if (end > tail) ::munmap(reinterpret_cast<void*>(tail), end - tail);
    return reinterpret_cast<void*>(aligned);
}

}  // namespace

void* map_reserve(std::size_t bytes, std::size_t alignment) noexcept {
    std::size_t page = base_page_size();
    if (alignment < page) alignment = page;
    return map_aligned_lean(bytes, alignment, PROT_READ | PROT_WRITE, kAnon | MAP_NORESERVE);
}

void* map_committed(std::size_t bytes, std::size_t alignment) noexcept {
    std::size_t page = base_page_size();
    if (alignment < page) alignment = page;
    return map_aligned_lean(bytes, alignment, PROT_READ | PROT_WRITE, kAnon);
}

int remap(void* p, std::size_t old_bytes, std::size_t new_bytes, void* target) noexcept {
    void* q = target ? ::mremap(p, old_bytes, new_bytes, MREMAP_MAYMOVE | MREMAP_FIXED, target)
                     : ::mremap(p, old_bytes, new_bytes, 0);
    return q == MAP_FAILED ? errno : 0;
}

namespace {
// One resource limit in bytes; 0 when unlimited (or unreadable).
std::size_t rlimit_bytes(int resource) noexcept {
    struct rlimit r;
    if (::getrlimit(resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return 0;
    return static_cast<std::size_t>(r.rlim_cur);
}
}  // namespace

std::size_t address_space_limit() noexcept {
    std::size_t as = rlimit_bytes(RLIMIT_AS), data = rlimit_bytes(RLIMIT_DATA);
    if (as == 0 || data == 0) return as | data;
    return as < data ? as : data;
}

std::size_t memlock_limit() noexcept {
    struct rlimit r;
    if (::getrlimit(RLIMIT_MEMLOCK, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return SIZE_MAX;
    return static_cast<std::size_t>(r.rlim_cur);
}

std::uint64_t monotonic_ns() noexcept {
    struct timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

void yield() noexcept { ::sched_yield(); }

void write_stderr(const char* s, std::size_t n) noexcept {
    while (n > 0) {
        ssize_t w = ::write(2, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        s += w;
        n -= static_cast<std::size_t>(w);
    }
}

std::size_t base_page_size() noexcept {
    // Cached without a guarded static (no C++ runtime in the drop-in allocator); a race
    // only stores the same value twice.
    static constinit std::atomic<std::size_t> page{0};
    std::size_t v = page.load(std::memory_order_relaxed);
    if (v == 0) page.store(v = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)), std::memory_order_relaxed);
    return v;
}

}  // namespace physmem::os
