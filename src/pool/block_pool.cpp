// src/pool/block_pool.cpp — blocks cut from regions, placed fullest page first (the
// Filler), empty pages given back after a delay; a bitmap per region that catches
// double frees and foreign pointers. Moving blocks is in compact.cpp.
#include "physmem/pool.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "core/fatal.hpp"
#include "core/give_back.hpp"
#include "core/parse.hpp"
#include "give_back_thread.hpp"
#include "page_filler.hpp"
#include "port/os.hpp"
#include "slab.hpp"
#include "validate.hpp"

namespace physmem {

namespace {

RegionOptions region_options(const PoolOptions& o, std::size_t bytes) {
    return RegionOptions{.bytes = bytes, .alignment = o.block_size, .backing = o.backing,
                         .strict_backing = o.strict_backing, .prefault = o.prefault,
                         .lock = o.lock, .reserve_huge_pages = o.reserve_huge_pages};
}

}  // namespace

BlockPool::BlockPool(const PoolOptions& options)
    : options_(options), block_size_(options.block_size), filler_(new Filler) {
    try {
        validate(options);
        block_shift_ = static_cast<unsigned>(__builtin_ctzll(block_size_));
        std::size_t blocks = options.capacity / block_size_ + (options.capacity % block_size_ != 0);
        add_region(blocks * block_size_);  // validated: at most 2^32 blocks, no wrap
        background_ = options.background_give_back && !options.lock && background_give_back_from_env();
    } catch (...) {
        delete filler_;
        throw;
    }
}

// Forgets the pool in the give-back thread first: it may be about to visit (it waits).
BlockPool::~BlockPool() {
    if (registered_) Background::instance().forget(this);
    if (in_use_ != 0) live_blocks_at_destruction();
    for (Slab* s : slabs_) delete s;
    delete filler_;
}

// leak_check: aborts naming the live blocks. Off: the regions holding them stay mapped.
void BlockPool::live_blocks_at_destruction() noexcept {
    if (options_.leak_check) {
        char block[32], bytes[32];
        format_size(block, sizeof block, block_size_);
        format_size(bytes, sizeof bytes, in_use_ << block_shift_);
        core::fatal("BlockPool destroyed with %zu live block%s of %s (%s): free them (destroy the "
                    "arrays on the pool) first, or set PoolOptions::leak_check = false",
                    in_use_, in_use_ == 1 ? "" : "s", block, bytes);
    }
    for (Slab* s : slabs_)
        if (s->live != 0) s->region.leak();
}

void BlockPool::restore_huge_pages() noexcept {
    std::lock_guard<std::mutex> guard(mutex_);
    for (Slab* s : slabs_) s->region.restore_huge_pages();
}

void BlockPool::add_region(std::size_t bytes) {
    auto slab = std::make_unique<Slab>(region_options(options_, bytes), block_size_);
    if (options_.tags) slab->tags = std::make_unique<std::atomic<std::uint64_t>[]>(slab->blocks);
    if (options_.protection_keys) key_region(*slab);
    slabs_.reserve(slabs_.size() + 1);
    total_ += slab->blocks;
    mapped_ += slab->region.size();
    for (Page& pg : slab->pages) filler_->add_back(&pg);
    slabs_.push_back(slab.release());
}

bool BlockPool::grow_locked() noexcept {
    if (!options_.grow || slabs_.empty()) return false;
    std::size_t next = std::min(slabs_.back()->blocks * block_size_ * 2, max_region_bytes(block_size_));
    if (options_.max_capacity) {
        std::size_t have = total_ * block_size_;
        if (have >= options_.max_capacity) return false;
        next = std::min(next, options_.max_capacity - have);
        next = next / block_size_ * block_size_;
        if (next == 0) return false;
    }
    try {
        add_region(next);
        return true;
    } catch (...) {
        return false;
    }
}

// The fast path: pop the page's free stack or bump, a bit flip, two stores, and a list
// move only when the page changes bucket.
void* BlockPool::take_locked(Page* pg, BlockOwner* owner, std::uintptr_t cookie) noexcept {
    Slab& s = *pg->slab;
    std::size_t i = pg->nfree ? s.stack[pg->first + --pg->nfree] : pg->first + pg->bumped++;
    s.flip(i);
    s.owner[i] = owner;
    s.cookie[i] = cookie;
    if (options_.domain != 0) s.set_tag_domain(i, options_.domain);  // validated: tags on
    ++pg->live;
    pg->pinned += owner == nullptr;
    pg->resident = true;
    ++s.live;
    ++in_use_;
    filler_->place(pg);
    return s.block(i, block_shift_);
}

void BlockPool::put_locked(Slab& s, std::size_t i, const void* moved_to) noexcept {
    Page& pg = s.page_of(i);
    if (s.tags) {  // before the block is on the free stack: stale handles see it
        s.retire_tag(i);
        tags_changed_locked({s.block(i, block_shift_), moved_to, s.owner[i], s.cookie[i], false});
    }
    s.flip(i);
    pg.pinned -= s.owner[i] == nullptr;
    s.owner[i] = nullptr;
    s.stack[pg.first + pg.nfree++] = static_cast<std::uint32_t>(i);
    --pg.live;
    --s.live;
    --in_use_;
    if (pg.live == 0) pg.empty_since = os::monotonic_ns();
    filler_->place(&pg);
}

void* BlockPool::try_allocate(BlockOwner* owner, std::uintptr_t cookie) noexcept {
    std::lock_guard<std::mutex> guard(mutex_);
    Page* pg = filler_->best();
    if (!pg && grow_locked()) pg = filler_->best();
    return pg ? take_locked(pg, owner, cookie) : nullptr;
}

void* BlockPool::try_allocate() noexcept { return try_allocate(nullptr, 0); }

void* BlockPool::allocate(BlockOwner* owner, std::uintptr_t cookie) {
    void* p = try_allocate(owner, cookie);
    if (!p) throw std::bad_alloc();
    return p;
}

void* BlockPool::allocate() { return allocate(nullptr, 0); }

// The index of live block p in its slab (s is set); aborts naming p otherwise.
std::size_t BlockPool::index_checked(Slab*& s, const void* p, const char* who) const noexcept {
    s = find_slab(p);
    if (!s) core::fatal("BlockPool::%s(%p): pointer not from this pool", who, p);
    std::size_t i = s->index_of(p, block_shift_);
    if (p != s->block(i, block_shift_)) core::fatal("BlockPool::%s(%p): not the start of a block", who, p);
    if (!s->test(i)) core::fatal("BlockPool::%s(%p): block is not live (double free?)", who, p);
    return i;
}

void BlockPool::deallocate(void* p) noexcept {
    if (!p) return;
    std::lock_guard<std::mutex> guard(mutex_);
    Slab* s;
    std::size_t i = index_checked(s, p, "deallocate");
    put_locked(*s, i);
    release_due_locked();
    schedule_locked();
}

void BlockPool::set_owner(void* p, BlockOwner* owner, std::uintptr_t cookie) noexcept {
    std::lock_guard<std::mutex> guard(mutex_);
    Slab* s;
    std::size_t i = index_checked(s, p, "set_owner");
    Page& pg = s->page_of(i);
    pg.pinned += (owner == nullptr) - (s->owner[i] == nullptr);
    s->owner[i] = owner;
    s->cookie[i] = cookie;
}

// --- giving back -----------------------------------------------------------------------

// madvise(MADV_DONTNEED) over a run of adjacent pages: anonymous 4 KiB and THP memory,
// and hugetlb pages of a private mapping (Linux >= 5.18; the reservation comes back, so a
// later touch cannot SIGBUS). One call per run rather than per page: the kernel's cost
// per 4 KiB page stays, the calls and the TLB flushes (one per call) shrink. The run
// grows from pg both ways while `may` allows the neighbour; each page is visited once
// (given back, it moves to the unbacked list), so a release is O(pages given back).
template <class May>
bool BlockPool::give_back_run_locked(Page* pg, May may) noexcept {
    Slab& s = *pg->slab;
    std::size_t lo = static_cast<std::size_t>(pg - s.pages.data()), hi = lo + 1;
    while (lo > 0 && may(s.pages[lo - 1])) --lo;
    while (hi < s.pages.size() && may(s.pages[hi])) ++hi;
    std::byte* at = s.block(s.pages[lo].first, block_shift_);
    std::byte* end = std::min(s.block(s.pages[hi - 1].first, block_shift_) + s.page_bytes(block_shift_),
                              s.region.data() + s.region.size());
    std::size_t bytes = static_cast<std::size_t>(end - at);
    if (os::discard(at, bytes) != 0) return false;
    for (std::size_t k = lo; k < hi; ++k) {
        Page& p = s.pages[k];
        p.resident = false;
        p.bumped = p.nfree = 0;
        filler_->place(&p);
    }
    given_back_ += bytes;
    return true;
}

bool BlockPool::release_due_locked() noexcept {
    if (options_.lock) return true;
    std::uint64_t now = os::monotonic_ns();
    auto due = [&](const Page& p) {
        return p.list == Filler::kEmpty && core::empty_long_enough(p.empty_since, now, options_.give_back_delay_ms);
    };
    while (Page* pg = filler_->oldest_empty()) {
        if (!due(*pg)) return true;
        if (!give_back_run_locked(pg, due)) return false;
    }
    return true;
}

void BlockPool::schedule_locked() noexcept {
    if (!background_) return;
    Page* pg = filler_->oldest_empty();
    if (!pg) return;
    Background& bg = Background::instance();
    std::uint64_t generation = bg.generation();
    if (scheduled_ && scheduled_generation_ == generation) return;  // the usual case: one branch
    if (!registered_) registered_ = true;  // written by callers only: the thread's visits find it set
    scheduled_ = bg.schedule(this, core::give_back_due_ns(pg->empty_since, options_.give_back_delay_ms));
    scheduled_generation_ = generation;
}

// What is due goes back; the pool is scheduled again for its next empty page — also when
// that page came due during this visit (between release_due_locked's clock read and now:
// it used to be left for the pool's next call, which an idle program never makes; seen as
// BackgroundGiveBack.ForkWhilePagesWait failing in 2 of 6 runs). Not when the kernel
// refused a page: a due page scheduled again would be visited again at once, forever; the
// pool's next call tries it again.
void BlockPool::give_back_in_background() noexcept {
    std::lock_guard<std::mutex> guard(mutex_);
    scheduled_ = false;
    if (release_due_locked()) schedule_locked();
}

std::size_t BlockPool::release_locked(bool populated) noexcept {
    std::size_t before = given_back_;
    if (options_.lock) return 0;
    auto empty = [&](const Page& p) { return p.list == Filler::kEmpty || (populated && p.list == Filler::kPopulated); };
    while (Page* pg = filler_->oldest_empty())
        if (!give_back_run_locked(pg, empty)) break;
    while (Page* pg = populated ? filler_->populated() : nullptr)  // prefaulted, never used
        if (!give_back_run_locked(pg, empty)) break;
    unmap_empty_regions_locked();
    return given_back_ - before;
}

// Grown regions (not the first) without a live block are unmapped: the pool shrinks.
std::size_t BlockPool::unmap_empty_regions_locked() noexcept {
    std::size_t n = 0;
    for (std::size_t k = slabs_.size(); k-- > 1;) {
        Slab* s = slabs_[k];
        if (s->live != 0) continue;
        for (Page& pg : s->pages) {
            if (pg.resident) given_back_ += s->page_bytes(block_shift_);
            filler_->unlink(&pg);
        }
        total_ -= s->blocks;
        mapped_ -= s->region.size();
        if (s->tags) {
            retired_tag_bytes_ += s->blocks * sizeof(std::uint64_t);
            retired_tags_.push_back(std::move(s->tags));
        }
        slabs_.erase(slabs_.begin() + static_cast<std::ptrdiff_t>(k));
        delete s;
        ++unmapped_regions_;
        ++n;
    }
    return n;
}

std::size_t BlockPool::release() noexcept {
    std::lock_guard<std::mutex> guard(mutex_);
    return release_locked();
}

BlockPool::Slab* BlockPool::find_slab(const void* p) const noexcept {
    for (Slab* s : slabs_)
        if (s->region.contains(p)) return s;
    return nullptr;
}

bool BlockPool::owns(const void* p) const noexcept {
    std::lock_guard<std::mutex> guard(mutex_);
    return find_slab(p) != nullptr;
}

Backing BlockPool::backing() const noexcept {
    std::lock_guard<std::mutex> guard(mutex_);
    return slabs_.front()->region.backing();
}

PoolStats BlockPool::stats() const {
    std::lock_guard<std::mutex> guard(mutex_);
    PoolStats st;
    st.block_size = block_size_;
    st.blocks_total = total_;
    st.blocks_in_use = in_use_;
    st.regions = slabs_.size();
    st.bytes_mapped = mapped_;
    st.backing = slabs_.front()->region.backing();
    st.locked = slabs_.front()->region.locked();
    st.page_size = slabs_.front()->page_bytes(block_shift_);
    st.given_back_bytes = given_back_;
    st.regions_unmapped = unmapped_regions_;
    st.blocks_moved = moved_;
    st.bytes_moved = moved_ << block_shift_;
    for (const Slab* s : slabs_) {
        st.bytes_prefaulted += s->region.prefaulted_bytes();
        st.huge_pages_reserved += s->region.reserved_huge_pages();
        for (const Page& pg : s->pages) {
            if (!pg.resident) continue;
            st.resident_bytes += s->page_bytes(block_shift_);
            st.free_resident_bytes += std::size_t{pg.free_blocks()} << block_shift_;
        }
    }
    return st;
}

std::vector<BackingReport> BlockPool::verify_backing() const {
    std::lock_guard<std::mutex> guard(mutex_);
    std::vector<BackingReport> out;
    for (const Slab* s : slabs_) out.push_back(s->region.verify());
    return out;
}

std::vector<std::span<const std::byte>> BlockPool::regions() const {
    std::lock_guard<std::mutex> guard(mutex_);
    std::vector<std::span<const std::byte>> out;
    for (const Slab* s : slabs_) out.emplace_back(s->region.data(), s->region.size());
    return out;
}

std::vector<std::string> BlockPool::backing_notes() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return slabs_.front()->region.notes();
}

std::optional<std::uint64_t> BlockPool::physical_address(const void* p) noexcept {
    return os::physical_address(p);
}

}  // namespace physmem
