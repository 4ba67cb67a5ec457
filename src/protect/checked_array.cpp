// src/protect/checked_array.cpp — the out-of-line parts of checked arrays
// (checked_tree_array.hpp): refreshing a leaf's table entry after a move, and the report.
#include <atomic>
#include <cinttypes>
#include <cstdio>

#include "core/fatal.hpp"
#include "physmem/checked_tree_array.hpp"

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
    if (!w || start != leaf) {  // freed behind the array's back
        a.now = std::atomic_ref(t.word).load(std::memory_order_relaxed)->load(std::memory_order_acquire);
        checked_violation(Violation::stale, a);
    }
    a.now = w->load(std::memory_order_acquire);
    if (!domain_held(a.now)) checked_violation(Violation::domain, a);
    std::atomic_ref(t.word).store(w, std::memory_order_relaxed);
    std::atomic_ref(t.seen).store(a.now, std::memory_order_relaxed);
}

bool try_refresh(const BlockPool& pool, const void* leaf, LeafTag& t, std::uint64_t& w) {
    std::byte* start = nullptr;
    const std::atomic<std::uint64_t>* word = pool.tag_word(leaf, &start);
    if (!word || start != leaf) return false;
    w = word->load(std::memory_order_acquire);
    std::atomic_ref(t.word).store(word, std::memory_order_relaxed);
    std::atomic_ref(t.seen).store(w, std::memory_order_relaxed);
    return true;
}

}  // namespace physmem::detail
