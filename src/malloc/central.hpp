// src/malloc/central.hpp — what central.cpp (the per-class central lists) offers the
// thread caches (thread_cache.cpp) and the misuse checks it shares with them (misuse.cpp).
// Included by central.cpp, thread_cache.cpp and misuse.cpp only; the layers: internal.hpp.
//
// Objects move between a thread cache and a central list in batches (one call and one
// class lock per batch); the per-object work (span free lists, bitmaps) stays inside
// central.cpp.
#pragma once

#include "malloc/fast.hpp"

#pragma GCC visibility push(hidden)

namespace physmem::malloc {

// The free-list successor of free object p (its first word).
inline void* next_of(void* p) noexcept { return reinterpret_cast<void*>(link_word(p)); }

// A full batch of class cls: half its thread-cache capacity (at least 1 object).
inline std::uint32_t batch_of(unsigned cls) noexcept {
    std::uint32_t b = g_classes[cls].cache_max / 2;
    return b ? b : 1;
}

// --- central.cpp (each call takes the class's lock) ---
// Up to n objects of class cls, chained through their first word, tagged free; returns
// the count (0 on ENOMEM).
std::uint32_t central_pop(unsigned cls, std::uint32_t n, void*& head) noexcept;
// Moves n objects from the top of list b (of class cls) to the class. A spill of a full
// batch (to_spans false) goes to the transfer cache while it has room.
void central_push(unsigned cls, Bin& b, std::uint32_t n, bool to_spans) noexcept;
// One object straight to the central list (a thread without an active cache).
void central_push_one(unsigned cls, void* p) noexcept;
// Empties every class's transfer cache into the spans (pm_collect).
void central_drain_transfers() noexcept;
// fork: every class lock, in class order / released in reverse / reset in the child.
void central_lock_all() noexcept;
void central_unlock_all() noexcept;
void central_reset_all() noexcept;

// --- misuse.cpp ---
// Draws the free-tag key (g_tag_key), once at initialisation.
void draw_tag_key() noexcept;
// The first n objects of a list about to enter the transfer cache, checked as a span visit
// would (each carries its free tag and appears once); returns the n-th object.
void* check_batch(unsigned cls, void* head, std::uint32_t n) noexcept;

}  // namespace physmem::malloc

#pragma GCC visibility pop
