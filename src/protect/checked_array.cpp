// src/protect/checked_array.cpp — the out-of-line parts of checked arrays
// (checked_tree_array.hpp): refreshing a leaf's table entry after a move, the report, and
// the report of a fault through a poisoned entry.
#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "core/fatal.hpp"
#include "physmem/checked_tree_array.hpp"
#include "port/os.hpp"

namespace physmem::detail {

void checked_violation(Violation v, const CheckedAccess& a) {
    char msg[480];
    char size[32] = "?";
    if (a.size != ~std::size_t{0}) std::snprintf(size, sizeof size, "%zu", a.size);
    std::snprintf(msg, sizeof msg,
                  "checked array %s (%p): %s: %s at index %zu (size %s), leaf %zu, block %p (generation seen %" PRIu64
                  ", now %" PRIu64 "; domain %u; thread holds %#" PRIx64 ")",
                  a.name ? a.name : "iterator", a.array, to_string(v), a.access, a.index, size, a.leaf, a.block,
                  a.seen >> BlockTag::kDomainBits, a.now >> BlockTag::kDomainBits,
                  static_cast<unsigned>(a.now & BlockTag::kDomainMask), held_domains());
    if (a.policy == Policy::throw_error) throw ProtectionError(v, msg);
    core::fatal("%s", msg);
}

void refresh_leaf(const BlockPool& pool, const void* leaf, LeafTag& t, CheckedAccess a) {
    a.seen = std::atomic_ref(t.seen).load(std::memory_order_relaxed);
    std::byte* start = nullptr;
    const std::atomic<std::uint64_t>* w = pool.tag_word(leaf, &start);
    if (!w || start != leaf || a.seen == kLostSeen) {  // freed behind the array's back
        a.now = std::atomic_ref(t.word).load(std::memory_order_relaxed)->load(std::memory_order_acquire);
        checked_violation(Violation::stale, a);
    }
    a.now = w->load(std::memory_order_acquire);
    if (!domain_held(a.now)) checked_violation(Violation::domain, a);
    std::atomic_ref(t.word).store(w, std::memory_order_relaxed);
    std::atomic_ref(t.seen).store(a.now, std::memory_order_relaxed);
}

bool try_refresh(const BlockPool& pool, const void* leaf, LeafTag& t, std::uint64_t& w) {
    if (std::atomic_ref(t.seen).load(std::memory_order_relaxed) == kLostSeen) return false;
    std::byte* start = nullptr;
    const std::atomic<std::uint64_t>* word = pool.tag_word(leaf, &start);
    if (!word || start != leaf) return false;
    w = word->load(std::memory_order_acquire);
    std::atomic_ref(t.word).store(word, std::memory_order_relaxed);
    std::atomic_ref(t.seen).store(w, std::memory_order_relaxed);
    return true;
}

namespace {

// The leaves poisoned so far (note_poisoned), the last kKept of them named in a report.
struct Poisoned {
    char name[64];
    const void* array;
    std::size_t leaf;
    const void* block;
};
constexpr std::size_t kKept = 4;
Poisoned g_poisoned[kKept];
std::atomic<std::size_t> g_poisoned_count{0};

// The fault hook (os::on_other_fault): a fault at a null address (x86-64's report of a
// non-canonical one) or at or above 2^63, once some entry was poisoned, is an access
// through one. Formats with snprintf (no allocation for these conversions) and writes
// with write(2).
bool report_poisoned_fault(const void* addr) {
    const std::size_t n = g_poisoned_count.load(std::memory_order_acquire);
    if (n == 0 || (addr && reinterpret_cast<std::uintptr_t>(addr) < kPoisonBase)) return false;
    const Poisoned& p = g_poisoned[(n - 1) % kKept];
    char msg[512];
    int len = std::snprintf(msg, sizeof msg,
                            "physmem: fatal: checked array %s (%p): use after free: operator[] faulted on leaf %zu's "
                            "poisoned entry (block %p freed behind the array's back, while a loop on this thread held the "
                            "array's bound; %zu leaf entries poisoned in this process)\n",
                            p.name, p.array, p.leaf, p.block, n);
    if (len > 0) os::write_stderr(msg, std::min(static_cast<std::size_t>(len), sizeof msg - 1));
    return true;
}

}  // namespace

void note_poisoned(const char* name, const void* array, std::size_t k, const void* block) noexcept {
    const std::size_t n = g_poisoned_count.load(std::memory_order_relaxed);
    Poisoned& p = g_poisoned[n % kKept];
    std::snprintf(p.name, sizeof p.name, "%s", name ? name : "?");
    p.array = array, p.leaf = k, p.block = block;
    g_poisoned_count.store(n + 1, std::memory_order_release);
    static const bool hooked = os::on_other_fault(report_poisoned_fault) == 0;
    (void)hooked;
}

}  // namespace physmem::detail
