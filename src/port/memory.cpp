// src/port/memory.cpp — mmap, madvise, mlock (see os.hpp for the contracts).
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "port/os.hpp"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
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

int lock(void* p, std::size_t bytes) noexcept { return ::mlock(p, bytes) == 0 ? 0 : errno; }

int unlock(void* p, std::size_t bytes) noexcept {
    return ::munlock(p, bytes) == 0 ? 0 : errno;
}

void* map_reserve(std::size_t bytes, std::size_t alignment) noexcept {
    std::size_t page = base_page_size();
    if (alignment < page) alignment = page;
    std::size_t window = bytes + alignment - page;
    if (window < bytes) { errno = ENOMEM; return nullptr; }
    void* raw = ::mmap(nullptr, window, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    auto start = reinterpret_cast<std::uintptr_t>(raw);
    auto aligned = (start + alignment - 1) & ~(std::uintptr_t{alignment} - 1);
    std::uintptr_t tail = aligned + bytes, end = start + window;
    if (aligned > start) ::munmap(raw, aligned - start);
    if (end > tail) ::munmap(reinterpret_cast<void*>(tail), end - tail);
    return reinterpret_cast<void*>(aligned);
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
    static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return page;
}

}  // namespace physmem::os
