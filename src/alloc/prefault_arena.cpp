// src/alloc/prefault_arena.cpp — the memory behind physmem::prefault_allocator.
//
// Large requests: one prefaulted Region each, found again on free through a map.
// Small requests: size classes (16-byte steps to 256 B, then powers of two to 32 KiB)
// with intrusive free lists, carved by a bump pointer from 2 MiB prefaulted chunks.
#include <bit>
#include <map>
#include <mutex>
#include <new>
#include <vector>

#include "core/fatal.hpp"
#include "physmem/prefault_allocator.hpp"
#include "physmem/region.hpp"

namespace physmem {

namespace {

constexpr std::size_t kLargeThreshold = 64 << 10;  // bytes; from here on, own mapping
constexpr std::size_t kHugeThreshold = 2 << 20;    // own mappings this big try huge pages
constexpr std::size_t kChunkBytes = 2 << 20;
constexpr std::size_t kMinAlign = 16;
constexpr unsigned kClasses = 16 + 8;  // 16..256 by 16, then 512..32K doubling (+1 spare)

unsigned class_of(std::size_t bytes) noexcept {
    if (bytes <= 256) return static_cast<unsigned>((bytes + 15) / 16 - 1);  // 0..15
    return 16 + static_cast<unsigned>(std::bit_width(bytes - 1) - 9);       // 512 -> 16
}

std::size_t class_bytes(unsigned c) noexcept {
    return c < 16 ? (c + 1) * 16 : std::size_t{512} << (c - 16);
}

class Arena {
  public:
    void* allocate(std::size_t bytes, std::size_t alignment) {
        std::lock_guard<std::mutex> guard(mutex_);
        if (bytes >= kLargeThreshold || alignment > kMinAlign) return allocate_large(bytes, alignment);
        unsigned c = class_of(bytes);
        if (FreeNode* n = free_[c]) {
            free_[c] = n->next;
            return n;
        }
        return bump(class_bytes(c));
    }

    void deallocate(void* p, std::size_t bytes, std::size_t alignment) noexcept {
        std::lock_guard<std::mutex> guard(mutex_);
        if (bytes >= kLargeThreshold || alignment > kMinAlign) return deallocate_large(p);
        unsigned c = class_of(bytes);
        free_[c] = ::new (p) FreeNode{free_[c]};
    }

    void reserve(std::size_t bytes) {
        std::lock_guard<std::mutex> guard(mutex_);
        std::size_t spare = static_cast<std::size_t>(end_ - cursor_);
        for (std::size_t i = current_ + 1; i < chunks_.size(); ++i) spare += chunks_[i].size();
        while (spare < bytes) {
            add_chunk();
            spare += chunks_.back().size();
        }
    }

    PrefaultArenaStats stats() {
        std::lock_guard<std::mutex> guard(mutex_);
        PrefaultArenaStats s{chunks_.size(), large_.size(), 0};
        for (auto& r : chunks_) s.bytes_prefaulted += r.prefaulted_bytes();
        for (auto& [p, r] : large_) s.bytes_prefaulted += r.prefaulted_bytes();
        return s;
    }

  private:
    struct FreeNode {
        FreeNode* next;
    };

    void* allocate_large(std::size_t bytes, std::size_t alignment) {
        Backing rung = bytes >= kHugeThreshold ? Backing::page_2m : Backing::page_4k;
        Region r(RegionOptions{.bytes = bytes, .alignment = std::max<std::size_t>(alignment, 4096),
                               .backing = rung, .prefault = true});
        void* p = r.data();
        large_.emplace(p, std::move(r));
        return p;
    }

    void deallocate_large(void* p) noexcept {
        auto it = large_.find(p);
        if (it == large_.end()) core::fatal("prefault_allocator: free of %p, which it did not allocate", p);
        large_.erase(it);
    }

    void* bump(std::size_t bytes) {
        while (static_cast<std::size_t>(end_ - cursor_) < bytes) {
            if (current_ + 1 >= chunks_.size()) add_chunk();
            ++current_;
            cursor_ = chunks_[current_].data();
            end_ = cursor_ + chunks_[current_].size();
        }
        void* p = cursor_;
        cursor_ += bytes;
        return p;
    }

    void add_chunk() {
        chunks_.emplace_back(RegionOptions{.bytes = kChunkBytes, .alignment = kChunkBytes,
                                           .backing = Backing::page_2m, .prefault = true});
    }

    std::mutex mutex_;
    FreeNode* free_[kClasses] = {};
    std::vector<Region> chunks_;
    std::size_t current_ = static_cast<std::size_t>(-1);  // chunk the cursor is in
    std::byte* cursor_ = nullptr;
    std::byte* end_ = nullptr;
    std::map<void*, Region> large_;
};

// Never destroyed: containers with static storage may free into it during exit.
Arena& arena() {
    static Arena* a = new Arena;
    return *a;
}

}  // namespace

namespace detail {
void* prefault_allocate(std::size_t bytes, std::size_t alignment) { return arena().allocate(bytes, alignment); }
void prefault_deallocate(void* p, std::size_t bytes, std::size_t alignment) noexcept {
    arena().deallocate(p, bytes, alignment);
}
}  // namespace detail

void prefault_reserve(std::size_t bytes) { arena().reserve(bytes); }

PrefaultArenaStats prefault_stats() { return arena().stats(); }

}  // namespace physmem
