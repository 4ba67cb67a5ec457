// physmem/pool.hpp — the block pool: fixed-size, block-aligned blocks from huge pages.
//
// A user-space stand-in for an OS that hands out physical blocks only. One pool holds
// one or more Regions (see region.hpp) and cuts them into blocks of `block_size` bytes,
// a power of two from 4 KiB to 1 GiB chosen at run time. allocate/deallocate are O(1)
// and thread-safe (one mutex; a block is a large unit, so the lock is not the cost).
//
//   physmem::BlockPool pool({.block_size = 32 << 10, .capacity = 1ull << 30});
//   void* b = pool.allocate();   // 32 KiB-aligned, 32 KiB long
//   pool.deallocate(b);
//
// Giving back and moving blocks. Blocks are placed fullest page first (the give-back
// unit: the backing's huge page, 2 MiB for a 4 KiB pool, or the block when larger); a
// page without a live block is given back (MADV_DONTNEED) give_back_delay_ms after it
// emptied — by the process's background thread when no call comes (one thread for all
// pools, started at the first page that waits, asleep while none does; see
// PoolOptions::background_give_back) — or at once by release()/compact(). Blocks allocated with an owner
// (block_owner.hpp) can move: relocate(p), compact(), maintain().
//
// The concurrency contract of relocate(), compact() and maintain(): they take the pool's
// lock, so other threads may call allocate, deallocate and stats at the same time, and
// may use pinned blocks (allocated without an owner) and any block of another pool
// freely. No thread may read or write a movable block — nor use the structure that owns
// it (a TreeArray on this pool, a PagedArray made movable) — while one of them runs: the owner's relocate() is
// called under the lock and the structure is not locked. Afterwards pointers into moved
// blocks are stale (a TreeArray's indexes stay valid; see tree_array.hpp). Tested by
// Concurrency.* in tests/test_give_back.cpp.
#pragma once

#include <cstddef>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <span>
#include <vector>

#include "physmem/backing.hpp"
#include "physmem/block_owner.hpp"
#include "physmem/region.hpp"

namespace physmem {

struct PoolOptions {
    std::size_t block_size = 64 << 10;      // bytes; power of two in [4 KiB, 1 GiB]
    std::size_t capacity = std::size_t{1} << 30;  // bytes in the first region
    Backing backing = Backing::best;        // preferred rung (see backing.hpp)
    bool strict_backing = false;            // true: that rung or backing_unavailable
    bool prefault = false;                  // populate page tables up front
    bool lock = false;                      // mlock the regions
    bool reserve_huge_pages = false;        // root: raise nr_hugepages, restored at the end
    bool grow = false;                      // on exhaustion, map a region twice the last
    std::size_t max_capacity = 0;           // with grow: total bytes cap (0 = no cap)
    std::uint64_t give_back_delay_ms = 100; // an empty page waits this long, then is
                                            // given back (0: at once); the malloc's
                                            // purge delay has the same default and
                                            // meaning (src/core/give_back.hpp; this
                                            // copy is checked against it at build time)
    double compact_threshold = 0.25;        // maintain() compacts when free blocks in
                                            // partly used resident pages exceed this
                                            // share of resident bytes (0: never)
    bool leak_check = true;                 // destroying the pool with live blocks aborts
                                            // (false: their regions stay mapped; ~BlockPool)
    bool background_give_back = true;       // the process's give-back thread returns empty
                                            // pages when due, without a call to the pool
                                            // (false, or PHYSMEM_BACKGROUND_GIVE_BACK=0 for
                                            // every pool: at the pool's next call after it)
    bool tags = false;                      // keep a tag per block (BlockTag: protection
                                            // domain, generation), 8 bytes a block out of
                                            // band; off: no table, no cost (capability.hpp)
    std::uint32_t domain = 0;               // the protection domain (domain.hpp) of every
                                            // block at allocation, 0..63; nonzero needs tags
    bool protection_keys = false;           // also enforce `domain` in hardware: the pool's
                                            // memory under the domain's protection key, so
                                            // unchecked code faults without a DomainScope;
                                            // where keys are unavailable, the software
                                            // checks only (key_enforcement() says why).
                                            // Needs a domain from 1 to 63
};
// Accepted ranges, checked by BlockPool's constructor (std::invalid_argument naming the
// field, "PoolOptions::capacity = 4096: smaller than one block (block_size = 64 KiB)"):
//   block_size          a power of two from 4 KiB to 1 GiB
//   capacity            from one block to 2^32 blocks (16 TiB of 4 KiB blocks, 256 TiB of
//                       64 KiB); rounded up to whole blocks
//   max_capacity        0 (no cap) or at least capacity
//   backing             one of the Backing enumerators
//   give_back_delay_ms  at most 86'400'000 (one day)
//   compact_threshold   from 0 to 1, not NaN
//   domain              0 to 63; nonzero only with tags
//   protection_keys     only with a nonzero domain

struct PoolStats {
    std::size_t block_size = 0;
    std::size_t blocks_total = 0;   // blocks in all regions
    std::size_t blocks_in_use = 0;
    std::size_t regions = 0;
    std::size_t bytes_mapped = 0;
    std::size_t bytes_prefaulted = 0;
    std::size_t huge_pages_reserved = 0;  // nr_hugepages raised by this pool
    Backing backing = Backing::page_4k;   // rung of the first region
    bool locked = false;
    std::size_t page_size = 0;            // give-back unit, bytes (see above)
    std::size_t resident_bytes = 0;       // pages prefaulted or touched, and not given back
    std::size_t free_resident_bytes = 0;  // free blocks inside resident pages
    std::size_t given_back_bytes = 0;     // total given back (madvise + unmapped), ever
    std::size_t regions_unmapped = 0;     // regions returned whole by release(), ever
    std::size_t blocks_moved = 0;         // by relocate() and compact(), ever
    std::size_t bytes_moved = 0;
};

// A block's tag (PoolOptions::tags): its protection domain (0..63, 0 at allocation; see
// capability.hpp) and a generation bumped when the block is freed or moved away, under
// the pool's lock and before the block can be handed out again. Packed in one 64-bit
// atomic word: domain in the low 6 bits, generation above.
struct BlockTag {
    std::uint32_t domain = 0;
    std::uint64_t generation = 0;

    static constexpr unsigned kDomainBits = 6;
    static constexpr std::uint64_t kDomainMask = (std::uint64_t{1} << kDomainBits) - 1;
    static BlockTag unpack(std::uint64_t w) noexcept {
        return {static_cast<std::uint32_t>(w & kDomainMask), w >> kDomainBits};
    }
};

// What one compact() did.
struct CompactResult {
    std::size_t blocks_moved = 0;
    std::size_t bytes_moved = 0;
    std::size_t pages_emptied = 0;     // pages left without a live block by the moves
    std::size_t bytes_given_back = 0;  // by the release at the end (all empty pages)
};

class BlockPool {
  public:
    // Maps the first region. Throws std::invalid_argument naming the field for an option
    // out of its range (see PoolOptions), std::bad_alloc when no memory can be mapped,
    // backing_unavailable when strict_backing cannot be met.
    explicit BlockPool(const PoolOptions& options);
    // pre: no block is live (every TreeArray, PagedArray... on the pool destroyed first).
    // With live blocks and leak_check (the default): prints "physmem: fatal: BlockPool
    // destroyed with N live blocks of <block size> ..." on stderr and aborts. With
    // leak_check false: the regions that hold live blocks are left mapped (leaked until
    // the process exits; their huge-page reservations are restored now), so the blocks'
    // memory stays readable and writable — but the pool is gone: nothing may call it
    // afterwards (deallocate, or destroying an array on it). Regions without a live block
    // are unmapped either way.
    ~BlockPool();
    BlockPool(const BlockPool&) = delete;
    BlockPool& operator=(const BlockPool&) = delete;

    // One block, aligned to block_size. Throws std::bad_alloc when exhausted (and
    // growth is off or fails); the pool stays consistent.
    void* allocate();
    // Same, but returns nullptr instead of throwing.
    void* try_allocate() noexcept;
    // pre: p came from allocate() of this pool and was not freed since. A pointer this
    // pool never gave out, or a double free, aborts with a message naming it.
    void deallocate(void* p) noexcept;

    // A movable block: as allocate(), and the pool records (owner, cookie) for it (see
    // block_owner.hpp). pre: owner != nullptr outlives the block or a set_owner().
    void* allocate(BlockOwner* owner, std::uintptr_t cookie);
    void* try_allocate(BlockOwner* owner, std::uintptr_t cookie) noexcept;
    // Changes the (owner, cookie) of live block p; a null owner pins it. Aborts like
    // deallocate on a pointer that is not a live block.
    void set_owner(void* p, BlockOwner* owner, std::uintptr_t cookie) noexcept;

    // Moves live block p to the place allocate() would choose outside p's page (never
    // maps memory). The new address, or nullptr (nothing changed) when p is pinned or
    // there is no room elsewhere. See the concurrency contract at the top.
    void* relocate(void* p);
    // Moves blocks out of sparse pages into dense ones, then gives every empty page
    // back (release()). Never allocates memory from the system; on std::bad_alloc
    // (its small work list) nothing has moved. See the concurrency contract at the top.
    CompactResult compact();
    // Gives back every empty page now — including pages of a prefaulted pool that no
    // block has used yet (resident since mapping; the timed give-back leaves those
    // alone, and a later block there faults again) — and unmaps grown regions without
    // a live block. Returns the bytes given back. Does not move blocks. A locked pool
    // gives nothing back.
    std::size_t release() noexcept;
    // The automatic policy, for a point where compact()'s contract holds: gives back
    // pages empty longer than the delay, then compacts if the free share of resident
    // bytes exceeds compact_threshold (and at least one page could be freed). Returns
    // the bytes given back. Pages of a prefaulted pool that no block has used stay.
    std::size_t maintain();

    // --- protection keys (PoolOptions::protection_keys; src/pool/keys.cpp) ----------
    // Whether every region of the pool is under its domain's protection key (on, with the
    // key), or why not (`why`: keys not asked for, unavailable on this CPU or kernel, no
    // key free, pkey_mprotect refused a region). Off means the software checks only.
    struct KeyEnforcement {
        bool on = false;
        int key = -1;
        std::string why;
    };
    KeyEnforcement key_enforcement() const;

    // --- tags (PoolOptions::tags; src/pool/tags.cpp) --------------------------------
    // The tag of the live block holding p (any byte of it), or nullopt when tags are off
    // or p is not inside a live block of this pool. Takes the lock.
    std::optional<BlockTag> tag(const void* p) const noexcept;
    // Sets the domain (< 64) of live block p (its start); aborts like deallocate on a
    // pointer that is not a live block, or when tags are off. The generation is kept;
    // relocate()/compact() carry the domain to the new place.
    void set_domain(void* p, std::uint32_t domain) noexcept;
    // The tag word of the live block holding p, for checked handles (capability.hpp):
    // nullptr when tags are off or p is not in a live block. The word stays valid until
    // the pool is destroyed (a region unmapped by release() keeps its table), so a stale
    // handle reads a bumped generation, never freed memory. *start gets the block start.
    const std::atomic<std::uint64_t>* tag_word(const void* p, std::byte** start) const noexcept;
    bool tagged() const noexcept { return options_.tags; }
    // Goes up whenever a tag changes (a block freed or moved, set_domain; tags on): a checked
    // structure that saw every tag of its blocks at epoch e knows none changed while the
    // epoch is still e (checked_tree_array.hpp). Read lock-free.
    const std::atomic<std::uint64_t>& tag_epoch() const noexcept { return tag_epoch_; }
    // A checked structure's fast-path word (checked_tree_array.hpp): while watched, every
    // tag change stores 0 in it, after the epoch has moved (seq_cst, under the lock), so a
    // structure that armed it and then reads the epoch unchanged knows no change was missed.
    // The node lives in the structure; unwatch before it goes. Pre: tagged().
    // A structure that can tell its blocks from others' by their owner also gives `changed`:
    // called (under the pool's lock, on the thread that made the change, after the epoch and
    // the word) with the block whose tag changed: freed (moved_to null), moved (its contents
    // now at moved_to, the owner's reference already re-pointed), or put in another domain
    // (domain true); owner and cookie as the block was allocated with (owner null: pinned).
    // It must not call into the pool nor throw.
    struct TagChange {
        const void* block;
        const void* moved_to;
        const BlockOwner* owner;
        std::uintptr_t cookie;
        bool domain;
    };
    struct TagWatch {
        std::size_t* word = nullptr;
        void (*changed)(TagWatch&, const TagChange&) noexcept = nullptr;
        void* context = nullptr;  // the watching structure, for `changed`
        TagWatch* prev = nullptr;
        TagWatch* next = nullptr;
    };
    void watch_tags(TagWatch& w) noexcept;
    void unwatch_tags(TagWatch& w) noexcept;
    // Bytes of tag tables (0 when tags are off): 8 per block of every region mapped.
    std::size_t tag_bytes() const noexcept;

    // true when p lies in one of this pool's regions (any byte of any block).
    bool owns(const void* p) const noexcept;

    std::size_t block_size() const noexcept { return block_size_; }
    Backing backing() const noexcept;
    PoolStats stats() const;
    // Backing of each region, verified from /proc/self/smaps.
    std::vector<BackingReport> verify_backing() const;
    // The address range of each region, in verify_backing()'s order (e.g. to tell which
    // page size backs an address: a TLB simulation's trace).
    std::vector<std::span<const std::byte>> regions() const;
    // Why higher rungs were skipped when the first region was mapped.
    std::vector<std::string> backing_notes() const;

    // Physical address of the byte at p, from /proc/self/pagemap: root only, and only
    // once the page is faulted in. nullopt otherwise.
    static std::optional<std::uint64_t> physical_address(const void* p) noexcept;

  private:
    friend BlockPool& default_pool();  // restores its huge pages at exit (never destroyed)
    struct Slab;  // a region plus its bookkeeping (src/pool/slab.hpp)
    struct Page;
    class Filler;
    class Background;  // the give-back thread (src/pool/give_back_thread.hpp)
    void add_region(std::size_t bytes);
    void key_region(Slab& s);  // PoolOptions::protection_keys: the region under the key
    void live_blocks_at_destruction() noexcept;
    void restore_huge_pages() noexcept;  // each region's (Region::restore_huge_pages)
    bool grow_locked() noexcept;
    void* take_locked(Page* pg, BlockOwner* owner, std::uintptr_t cookie) noexcept;
    void put_locked(Slab& s, std::size_t i, const void* moved_to = nullptr) noexcept;  // moved_to: a move's destination
    std::size_t index_checked(Slab*& s, const void* p, const char* who) const noexcept;
    void* move_locked(Slab& s, std::size_t i, Page* to) noexcept;
    std::size_t drain_locked(Page& src, std::vector<Page*>& dst, std::size_t d, std::size_t limit,
                             CompactResult& r) noexcept;
    // Gives back pg and its neighbours in the same region that `may(page)` allows, as one
    // range (one discard); false when the kernel refused (the pages stay resident).
    template <class May>
    bool give_back_run_locked(Page* pg, May may) noexcept;
    bool release_due_locked() noexcept;  // false: the kernel refused a page
    // When empty pages wait and the thread does not know yet: tells it when the oldest is due.
    void schedule_locked() noexcept;
    void give_back_in_background() noexcept;  // the thread's visit
    // populated: also the resident pages no block has used (a prefaulted pool's); the
    // automatic policy (maintain) leaves them.
    std::size_t release_locked(bool populated = true) noexcept;
    CompactResult compact_impl(bool release_populated);
    std::size_t unmap_empty_regions_locked() noexcept;
    Slab* find_slab(const void* p) const noexcept;

    const PoolOptions options_;
    const std::size_t block_size_;
    unsigned block_shift_;
    mutable std::mutex mutex_;
    std::vector<Slab*> slabs_;          // owned; few (growth doubles)
    // Tag tables of unmapped regions, kept so stale handles still read a generation.
    std::vector<std::unique_ptr<std::atomic<std::uint64_t>[]>> retired_tags_;
    std::size_t retired_tag_bytes_ = 0;
    std::atomic<std::uint64_t> tag_epoch_{0};  // tag_epoch(); written under the lock
    TagWatch* watchers_ = nullptr;             // watch_tags(); under the lock
    void tags_changed_locked(const TagChange& c) noexcept;  // the epoch up, every watched word 0, `changed`
    Filler* filler_;                    // owned; pages by fullness (page_filler.hpp)
    std::size_t in_use_ = 0;
    std::size_t total_ = 0;
    std::size_t mapped_ = 0;
    std::size_t given_back_ = 0;
    std::size_t unmapped_regions_ = 0;
    std::size_t moved_ = 0;
    KeyEnforcement keys_;               // key_enforcement(); set as regions are mapped
    bool background_ = false;           // options and environment allow the thread
    bool registered_ = false;           // scheduled at least once (~BlockPool forgets it)
    bool scheduled_ = false;            // the thread will visit (for scheduled_generation_)
    std::uint64_t scheduled_generation_ = 0;  // Background::generation() when scheduled
};

// The process-wide pool, created on first use from PHYSMEM_* environment variables
// (see options.hpp; defaults: 64 KiB blocks, 1 GiB first region, best backing, grows).
// Throws what BlockPool's constructor throws, or std::invalid_argument naming the
// variable for a bad environment value. Never destroyed: arrays may still hold its blocks
// at exit (statics, arrays a call to exit() skipped), and their destructors may run after
// ours; its memory goes back with the process. The nr_hugepages it raised
// (PHYSMEM_RESERVE_HUGE_PAGES) is restored at exit.
BlockPool& default_pool();

}  // namespace physmem
