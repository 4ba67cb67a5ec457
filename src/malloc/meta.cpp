// src/malloc/meta.cpp — the heap's metadata: span and arena descriptors and thread
// caches live in 2 MiB chunks mapped for them (never in the heap the allocator manages,
// never through another allocator), handed out by a bump pointer and never given back to
// the system; descriptors are recycled on free lists (new_span, free_span, free_arena_desc:
// heap.hpp).
#include "malloc/heap.hpp"

namespace physmem::malloc {

void* meta_alloc(std::size_t bytes) noexcept {
    bytes = (bytes + 63) & ~std::size_t{63};
    if (bytes > H.meta_left) {
        void* chunk = os::map_reserve(kHuge, kPage);
        if (!chunk) return nullptr;
        H.meta_cur = static_cast<char*>(chunk);
        H.meta_left = kHuge;
        H.bytes_mapped += kHuge;
    }
    void* p = H.meta_cur;
    H.meta_cur += bytes;
    H.meta_left -= bytes;
    return p;
}

Arena* new_arena_desc() noexcept {
    Arena* a = H.free_arenas;
    if (a) H.free_arenas = a->next_free;
    else a = static_cast<Arena*>(meta_alloc(sizeof(Arena)));
    if (a) std::memset(static_cast<void*>(a), 0, sizeof(Arena));
    return a;
}

void* heap_meta_alloc(std::size_t bytes) noexcept {
    LockGuard g(H.lock);
    return meta_alloc(bytes);
}

}  // namespace physmem::malloc
