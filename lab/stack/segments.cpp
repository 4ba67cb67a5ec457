// lab/stack/segments.cpp — the link-time wrappers of libgcc's syscall and getpagesize
// calls (segments.hpp). Compiled without -fsplit-stack: they run inside __morestack.
#include "stack/segments.hpp"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdlib>
#include <stdexcept>
#include <string>

extern "C" {
long __real_syscall(long number, ...);
int __real_getpagesize(void);
void __splitstack_block_signals(int* new_value, int* old_value);
void __splitstack_getcontext(void* context[10]);
}

namespace lab::stack::segments {

namespace {

std::atomic<std::uint64_t> g_mapped{0}, g_mapped_bytes{0}, g_served{0}, g_served_bytes{0}, g_unmapped{0}, g_largest{0};

// The served blocks: a stack of pointers (one thread, see the header).
void** g_blocks = nullptr;
std::size_t g_free = 0, g_block_bytes = 0;
std::uintptr_t g_lo = 0, g_hi = 0;  // address range of the served blocks

// libgcc's segment mapping: mmap(NULL, n, PROT_READ|PROT_WRITE, MAP_ANONYMOUS|MAP_PRIVATE, -1, 0).
// prot, flags and fd are ints in registers: only their low 32 bits are defined.
bool is_segment_map(const long* a) noexcept {
    return a[0] == 0 && a[1] > 0 && static_cast<int>(a[2]) == (PROT_READ | PROT_WRITE) &&
           static_cast<int>(a[3]) == (MAP_ANONYMOUS | MAP_PRIVATE) && static_cast<int>(a[4]) == -1;
}

void note_largest(std::uint64_t n) noexcept {
    std::uint64_t cur = g_largest.load(std::memory_order_relaxed);
    while (n > cur && !g_largest.compare_exchange_weak(cur, n, std::memory_order_relaxed)) {}
}

long map_segment(const long* a) noexcept {
    const auto bytes = static_cast<std::uint64_t>(a[1]);
    note_largest(bytes);
    if (g_free > 0 && bytes <= g_block_bytes) {
        g_served.fetch_add(1, std::memory_order_relaxed);
        g_served_bytes.fetch_add(bytes, std::memory_order_relaxed);
        return reinterpret_cast<long>(g_blocks[--g_free]);
    }
    long r = __real_syscall(SYS_mmap, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (r != -1) g_mapped.fetch_add(1, std::memory_order_relaxed), g_mapped_bytes.fetch_add(bytes, std::memory_order_relaxed);
    return r;
}

long unmap_segment(const long* a) noexcept {
    const auto p = static_cast<std::uintptr_t>(a[0]);
    if (a[1] > 0) g_unmapped.fetch_add(1, std::memory_order_relaxed);
    if (g_blocks && p >= g_lo && p < g_hi) {  // one of ours: back on the list, never unmapped
        g_blocks[g_free++] = reinterpret_cast<void*>(p);
        return 0;
    }
    return __real_syscall(SYS_munmap, a[0], a[1], a[2], a[3], a[4], a[5]);
}

}  // namespace

Counts counts() noexcept {
    return {g_mapped.load(), g_mapped_bytes.load(), g_served.load(), g_served_bytes.load(), g_unmapped.load(),
            g_largest.load()};
}

void reset() noexcept {
    for (auto* c : {&g_mapped, &g_mapped_bytes, &g_served, &g_served_bytes, &g_unmapped, &g_largest}) c->store(0);
}

std::size_t requested_minimum() {
    const char* v = std::getenv(kSegmentEnv);
    if (!v || !*v) return 0;
    char* end = nullptr;
    unsigned long long n = std::strtoull(v, &end, 10);
    if (*end != '\0' || n < 4096 || n > (1ull << 30) || (n & (n - 1)) != 0)
        throw std::invalid_argument(std::string(kSegmentEnv) + "='" + v + "' is not a power of two in [4096, 2^30]");
    return static_cast<std::size_t>(n);
}

void serve_from(std::span<void*> blocks, std::size_t block_bytes) noexcept {
    g_blocks = blocks.empty() ? nullptr : blocks.data();
    g_free = blocks.size();
    g_block_bytes = block_bytes;
    g_lo = ~std::uintptr_t{0}, g_hi = 0;
    for (void* b : blocks) {
        auto p = reinterpret_cast<std::uintptr_t>(b);
        g_lo = p < g_lo ? p : g_lo;
        g_hi = p + block_bytes > g_hi ? p + block_bytes : g_hi;
    }
}

std::size_t blocks_free() noexcept { return g_free; }

void set_block_signals(bool on) noexcept {
    int v = on ? 1 : 0;
    __splitstack_block_signals(&v, nullptr);
}

ListWalk walk_list() noexcept {
    // libgcc's struct stack_segment begins {prev, next, size}; `size` excludes the header.
    struct Header {
        Header* prev;
        Header* next;
        std::size_t size;
        void* rest[4];
    };
    void* ctx[10];
    __splitstack_getcontext(ctx);
    ListWalk w;
    for (auto* s = static_cast<Header*>(ctx[0]); s; s = s->next) ++w.segments, w.bytes += s->size + sizeof(Header);
    return w;
}

}  // namespace lab::stack::segments

extern "C" {

// Every syscall() made by an object of this link (libgcc's segment allocator included).
long __wrap_syscall(long number, ...) {
    va_list ap;
    va_start(ap, number);
    long a[6];
    for (long& x : a) x = va_arg(ap, long);  // syscall() passes at most six words
    va_end(ap);
    namespace s = lab::stack::segments;
    if (number == SYS_mmap && s::is_segment_map(a)) return s::map_segment(a);
    if (number == SYS_munmap) return s::unmap_segment(a);
    return __real_syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

// libgcc reads the page size once, at start-up, as its minimum segment size.
static int getpagesize_override() noexcept {
    const char* v = std::getenv(lab::stack::segments::kSegmentEnv);
    if (!v) return 0;
    unsigned long long n = std::strtoull(v, nullptr, 10);
    return n >= 4096 && n <= (1ull << 30) && (n & (n - 1)) == 0 ? static_cast<int>(n) : 0;
}

int __wrap_getpagesize(void) {
    int n = getpagesize_override();
    return n ? n : __real_getpagesize();
}
}
