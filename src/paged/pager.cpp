// src/paged/pager.cpp — the paged array's engine: the leaf table, frames, CLOCK, I/O.
// See include/physmem/pager.hpp for the contract.
#include "physmem/pager.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>

#include "paged/io_queue.hpp"
#include "paged/scratch.hpp"
#include "port/os.hpp"

namespace physmem::detail {
namespace {

constexpr std::uint64_t kWriteTag = 1;  // tag = leaf << 1 | write

std::string default_dir() {
    const char* t = std::getenv("TMPDIR");
    return t && *t ? t : "/var/tmp";
}

}  // namespace

Pager::Pager(BlockPool& pool, std::size_t leaves, InitFn init, const PagingOptions& o)
    : pool_(&pool), init_(init), opt_(o), leaves_(leaves), leaf_bytes_(pool.block_size()) {
    fan_shift_ = static_cast<unsigned>(std::bit_width(leaf_bytes_ / sizeof(void*)) - 1);
    fan_mask_ = (std::size_t{1} << fan_shift_) - 1;
    max_frames_ = std::clamp<std::size_t>(o.budget / leaf_bytes_, 1, std::max<std::size_t>(leaves, 1));
    if (max_frames_ > UINT32_MAX) throw std::invalid_argument("physmem::PagedArray: budget of more than 2^32 leaves");
    std::string dir = o.dir.empty() ? default_dir() : o.dir;
    int fd = os::open_backing_file(o.path.c_str(), dir.c_str(), o.direct, &direct_);
    file_ = o.path.empty() ? "an unnamed file in " + dir : o.path;
    if (fd < 0)
        throw PagingError("physmem::PagedArray: cannot create the backing file " + file_ + ": " + std::strerror(-fd),
                          -fd);
    fd_ = fd;
    unlink_path_ = o.path;
    try {
        io_ = std::make_unique<IoQueue>(fd_, o.io, o.queue_depth, file_);
        state_ = std::make_unique<Bits[]>(leaves);
        frame_ = std::make_unique<std::uint32_t[]>(leaves);
        build_table();
        reserve_scratch();
        take_first_frame();
    } catch (...) {
        for (Frame& f : frames_) pool_->deallocate(f.data);
        free_table();
        io_.reset();
        os::close_file(fd_);
        if (!unlink_path_.empty()) os::remove_file(unlink_path_.c_str());
        throw;
    }
    stats_.leaves = leaves;
    stats_.io = io_->name();
    stats_.direct = direct_;
}

Pager::~Pager() {
    drain();
    for (Frame& f : frames_) pool_->deallocate(f.data);
    free_table();
    io_.reset();
    os::close_file(fd_);
    if (!unlink_path_.empty()) os::remove_file(unlink_path_.c_str());
}

// The slow paths' scratch, sized for the budget, so that paging allocates no heap
// memory and takes no page fault in the steady state.
void Pager::reserve_scratch() {
    std::size_t batch = std::min<std::size_t>(max_frames_, 4096) + opt_.readahead + 64;
    for (auto* v : {&todo_, &held_, &next_}) reserve_touched(*v, batch);
    for (auto* v : {&chosen_, &dirty_, &taken_}) reserve_touched(*v, batch);
    reserve_touched(done_, std::max<std::size_t>(opt_.queue_depth, 1) + batch);
    reserve_touched(behind_, std::min<std::size_t>(2 * max_frames_, 8192));
    reserve_touched(free_frames_, max_frames_ < 65536 ? max_frames_ : 65536);
}

// One frame from the start, free: a pool that cannot hold the table and one leaf fails
// the constructor with std::bad_alloc (the contract), not the first access.
void Pager::take_first_frame() {
    void* p = new_block(1, false);  // frame 0's cookie
    try {
        frames_.push_back({p, kNone, 0});
    } catch (...) {
        pool_->deallocate(p);
        throw;
    }
    free_frames_.push_back(0);  // reserved by reserve_scratch: no throw
}

// A block of this pager: movable when asked for, else pinned. Cookies: inner block i of
// inner_ is i << 1, frame f is f << 1 | 1 (relocate below). nullptr when the pool is full
// (a frame: `may_fail`), else std::bad_alloc.
void* Pager::new_block(std::uintptr_t cookie, bool may_fail) {
    if (may_fail) return opt_.movable ? pool_->try_allocate(this, cookie) : pool_->try_allocate();
    return opt_.movable ? pool_->allocate(this, cookie) : pool_->allocate();
}

// Inner blocks bottom-up: level 1 points at leaves, each level above at the one below.
void Pager::build_table() {
    std::vector<void*> level;
    std::size_t count = std::max<std::size_t>(1, (leaves_ + fan_mask_) >> fan_shift_);
    auto take = [this] {
        void* b = new_block(inner_.size() << 1, false);
        try {
            inner_.push_back(b);
        } catch (...) {
            pool_->deallocate(b);
            throw;
        }
        std::memset(b, 0, leaf_bytes_);
        return b;
    };
    level_start_.assign(1, 0);
    for (std::size_t i = 0; i < count; ++i) {
        level.push_back(take());
        auto* e = static_cast<std::uintptr_t*>(level.back());
        std::fill(e, e + (leaf_bytes_ / sizeof(void*)), kAbsent);  // no leaf present
    }
    depth_ = 1;
    while (level.size() > 1) {
        level_start_.push_back(inner_.size());
        std::vector<void*> up((level.size() + fan_mask_) >> fan_shift_);
        for (void*& b : up) b = take();
        for (std::size_t i = 0; i < level.size(); ++i) static_cast<void**>(up[i >> fan_shift_])[i & fan_mask_] = level[i];
        level.swap(up);
        ++depth_;
    }
    level_start_.push_back(inner_.size());
    root_ = static_cast<void**>(level[0]);
}

void Pager::free_table() noexcept {
    for (void* b : inner_) pool_->deallocate(b);
    inner_.clear();
    root_ = nullptr;
}

// The pool moves one of our blocks (its lock held; nobody uses the array: the pool's
// contract). I/O in flight finishes first, since the kernel may still be reading into or
// writing from the frame. A frame's leaf entry follows it with its tags; an inner block's
// parent slot (or the root) is rewritten. Iterators revalidate (epoch).
bool Pager::relocate(std::uintptr_t cookie, void* from, void* to) noexcept {
    drain();
    std::size_t i = cookie >> 1;
    if (cookie & 1) {
        if (i >= frames_.size() || frames_[i].data != from) return false;
        std::memcpy(to, from, leaf_bytes_);
        frames_[i].data = to;
        std::size_t k = frames_[i].leaf;
        if (k != kNone && lookup(k)) sync_tags(k);
    } else {
        if (i >= inner_.size() || inner_[i] != from) return false;
        std::memcpy(to, from, leaf_bytes_);
        inner_[i] = to;
        unsigned level = 1;  // inner_[i] is in level `level` (1: points at leaves)
        while (i >= level_start_[level]) ++level;
        std::size_t at = i - level_start_[level - 1];
        if (level == depth_) root_ = static_cast<void**>(to);
        else static_cast<void**>(inner_[level_start_[level] + (at >> fan_shift_)])[at & fan_mask_] = to;
    }
    ++epoch_;
    return true;
}

void*& Pager::entry(std::size_t k) noexcept { return *const_cast<void**>(slot(k)); }

void Pager::fail(const char* op, std::size_t k, int error) const {
    throw PagingError(std::string("physmem::PagedArray: ") + op + " of leaf " + std::to_string(k) + " (bytes " +
                          std::to_string(k * leaf_bytes_) + ".." + std::to_string((k + 1) * leaf_bytes_) + ") in " +
                          file_ + " failed: " + std::strerror(error),
                      error);
}

// --- the slow path ----------------------------------------------------------------------

void* Pager::access(std::size_t k, bool write) {
    std::lock_guard lock(mutex_);
    void* p = lookup(k);
    if (!p) p = fault_locked(k);
    touch(k, write);
    return p;
}

void Pager::touch(std::size_t k, bool write) noexcept {
    Bits want = write ? (kRef | kDirty) : kRef;
    if ((state_[k] & want) == want) return;
    state_[k] |= want;
    sync_tags(k);
}

void* Pager::fault_locked(std::size_t k) {
    if (void* p = lookup(k)) return p;  // another reader loaded it meanwhile
    ++stats_.faults;
    if (state_[k] & kLoading) wait_for(k);
    if (state_[k] & kInFrame) {  // read ahead or hinted, now arrived
        if (state_[k] & kAhead) ++stats_.readahead_hits;
        state_[k] &= static_cast<Bits>(~kAhead);
        link(k, frame_[k]);
    } else {
        std::uint32_t f;
        take_frames(1, &f);
        if (state_[k] & kOnFile) read_now(k, f);
        else init_(frames_[f].data, leaf_bytes_);
        link(k, f);
    }
    read_ahead_after(k);
    return frames_[frame_[k]].data;
}

void* Pager::pin(std::size_t k, bool write) {
    std::lock_guard lock(mutex_);
    return pin_locked(k, write);
}

void* Pager::pin_locked(std::size_t k, bool write) {
    void* p = lookup(k);
    if (!p) p = fault_locked(k);
    ++frames_[frame_[k]].pins;
    touch(k, write);
    return p;
}

void Pager::unpin(std::size_t k) noexcept {
    std::lock_guard lock(mutex_);
    unpin_locked(k);
}

void Pager::unpin_locked(std::size_t k) noexcept { --frames_[frame_[k]].pins; }

void Pager::link(std::size_t k, std::uint32_t f) noexcept {
    frame_[k] = f;
    frames_[f].leaf = k;
    state_[k] |= kInFrame | kRef;
    sync_tags(k);
}

// Leaf k's entry from its frame and its reference and dirty bits (kCold, kClean). The
// stores are relaxed atomics: peek() may read beside us.
void Pager::sync_tags(std::size_t k) noexcept {
    auto data = reinterpret_cast<std::uintptr_t>(frames_[frame_[k]].data);
    std::uintptr_t e = data | (state_[k] & kRef ? 0 : kCold) | (state_[k] & kDirty ? 0 : kClean);
    __atomic_store_n(&entry(k), reinterpret_cast<void*>(e), __ATOMIC_RELAXED);
}

void Pager::unlink(std::size_t k) noexcept {
    __atomic_store_n(&entry(k), reinterpret_cast<void*>(kAbsent), __ATOMIC_RELAXED);
}

// A fault's own read: synchronous. On failure the frame goes back to the free list and
// the leaf stays out.
void Pager::read_now(std::size_t k, std::uint32_t f) {
    long r = os::read_at(fd_, frames_[f].data, leaf_bytes_, k * leaf_bytes_);
    if (r != static_cast<long>(leaf_bytes_)) {
        free_frames_.push_back(f);
        fail(r < 0 ? "read" : "short read", k, r < 0 ? static_cast<int>(-r) : EIO);
    }
    ++stats_.loads;
    stats_.bytes_read += leaf_bytes_;
}

// --- frames and eviction ----------------------------------------------------------------

// Up to `want` frames: free ones, new ones from the pool (up to the budget), then
// victims. At least one, or throws (PagingError when a dirty victim cannot be written,
// std::runtime_error when every frame is pinned).
std::size_t Pager::take_frames(std::size_t want, std::uint32_t* out) {
    std::size_t got = 0;
    while (got < want && !free_frames_.empty()) {
        out[got++] = free_frames_.back();
        free_frames_.pop_back();
    }
    while (got < want && frames_.size() < max_frames_) {
        void* p = new_block(frames_.size() << 1 | 1, true);
        if (!p) break;
        try {
            frames_.push_back({p, kNone, 0});
        } catch (...) {
            pool_->deallocate(p);
            throw;
        }
        out[got++] = static_cast<std::uint32_t>(frames_.size() - 1);
    }
    while (got < want) {
        std::size_t more;
        try {
            more = choose_victims(want - got, out + got);
        } catch (...) {
            free_frames_.insert(free_frames_.end(), out, out + got);  // nothing taken is lost
            throw;
        }
        got += more;
        if (got) break;
        if (io_->in_flight()) {  // every frame is loading or being written: wait for one
            pump(1);
            continue;
        }
        throw_all_pinned();
    }
    return got;
}

// No frame to take: every one is pinned (segment callbacks, a batch being read).
void Pager::throw_all_pinned() const {
    std::size_t pins = 0;
    for (const Frame& f : frames_) pins += f.pins;
    throw std::runtime_error("physmem::PagedArray: every one of its " + std::to_string(frames_.size()) +
                             " frames is pinned (" + std::to_string(pins) + " pins; the budget is " +
                             std::to_string(max_frames_) + " leaves, " + std::to_string(max_frames_ * leaf_bytes_) +
                             " bytes): the budget is too small for the leaves in use");
}

// Whether CLOCK may take the frame now: a leaf, not pinned, no I/O in flight.
bool Pager::evictable(const Frame& fr) const noexcept {
    return fr.leaf != kNone && !fr.pins && !(state_[fr.leaf] & (kLoading | kWriting));
}

// CLOCK: evictable frames whose reference bit is clear (a set bit is cleared and the
// frame passed over once); leaves a scan has passed first. Dirty victims are written
// together before any frame is reused.
std::size_t Pager::choose_victims(std::size_t want, std::uint32_t* out) {
    chosen_.clear();
    dirty_.clear();
    auto choose = [this](std::uint32_t f) {
        ++frames_[f].pins;  // chosen: not again in this sweep
        chosen_.push_back(f);
        if (state_[frames_[f].leaf] & kDirty) dirty_.push_back(f);
    };
    while (!behind_.empty() && chosen_.size() < want) {  // last passed first
        std::size_t k = behind_.back();
        behind_.pop_back();
        if ((state_[k] & (kInFrame | kRef)) == kInFrame && evictable(frames_[frame_[k]])) choose(frame_[k]);
    }
    for (std::size_t step = 0, n = frames_.size(); step < 2 * n && chosen_.size() < want; ++step) {
        auto f = static_cast<std::uint32_t>(hand_);
        hand_ = hand_ + 1 == n ? 0 : hand_ + 1;
        if (!evictable(frames_[f])) continue;
        std::size_t k = frames_[f].leaf;
        if (state_[k] & kRef) {
            state_[k] &= static_cast<Bits>(~kRef);
            if (lookup(k)) sync_tags(k);  // the next access sets it again (slow path once)
        } else {
            choose(f);
        }
    }
    int error = 0;
    try {
        write_back(dirty_);
    } catch (const PagingError& e) {
        error = e.code();
    }
    std::size_t got = 0, failed_leaf = 0;
    for (std::uint32_t f : chosen_) {
        Frame& fr = frames_[f];
        --fr.pins;
        Bits& s = state_[fr.leaf];
        if (s & kDirty) {  // its write failed: it stays
            failed_leaf = fr.leaf;
            continue;
        }
        unlink(fr.leaf);
        s &= static_cast<Bits>(~(kInFrame | kRef | kAhead));
        fr.leaf = kNone;
        ++stats_.evictions;
        out[got++] = f;
    }
    if (got) ++epoch_;
    if (error) {
        free_frames_.insert(free_frames_.end(), out, out + got);
        fail("write", failed_leaf, error);
    }
    return got;
}

// Starts writing one dirty leaf. Its dirty bit clears now: an access during the write
// sets it again (touch), so the leaf is written again before it can be dropped.
void Pager::start_write(std::uint32_t f) {
    std::size_t k = frames_[f].leaf;
    state_[k] = static_cast<Bits>((state_[k] & ~kDirty) | kWriting);
    if (lookup(k)) sync_tags(k);  // clean again: the next write takes the slow path
    ++epoch_;  // iterators that cached this leaf mark it dirty again when they next write
    io_->queue(true, frames_[f].data, leaf_bytes_, k * leaf_bytes_, k << 1 | kWriteTag);
}

// Writes the leaves in these frames (batched) and waits for them (and for writes already
// in flight: a flush means everything). A leaf whose write failed stays dirty; the
// first failure is thrown once all have finished.
void Pager::write_back(std::span<const std::uint32_t> frames) {
    if (frames.empty()) return;
    write_error_ = 0;
    for (std::uint32_t f : frames) start_write(f);
    for (std::uint32_t f : frames)
        while (state_[frames_[f].leaf] & kWriting) pump(1);
    if (write_error_) fail("write", write_failed_, write_error_);
}

// Write-behind: starts writing up to `n` dirty frames that CLOCK reaches next, without
// waiting, so that later evictions find clean
// victims instead of writing while a reader waits. Failures are kept for the eviction.
void Pager::clean_ahead(std::size_t n) {
    std::size_t started = 0;
    for (std::size_t step = 0, i = hand_, m = frames_.size(); step < m && started < n; ++step) {
        const Frame& fr = frames_[i];
        if (evictable(fr) && (state_[fr.leaf] & kDirty)) {
            start_write(static_cast<std::uint32_t>(i));
            ++started;
        }
        i = i + 1 == m ? 0 : i + 1;
    }
}

// --- reading ahead ----------------------------------------------------------------------

// Starts reading the leaves that are on file and not in memory; `ahead` marks them as
// read ahead (else hinted). Stops early when no frame is free to take. Then cleans as
// many frames ahead of the CLOCK hand as it read.
void Pager::start_reads(std::span<const std::size_t> leaves, bool ahead) {
    todo_.clear();
    held_.clear();
    for (std::size_t k : leaves)
        if ((state_[k] & (kInFrame | kOnFile)) == kOnFile && std::find(todo_.begin(), todo_.end(), k) == todo_.end())
            todo_.push_back(k);
    if (todo_.empty()) return;
    for (std::size_t k : leaves)
        if ((state_[k] & (kInFrame | kLoading)) == kInFrame) {  // already here: keep it for the batch
            ++frames_[frame_[k]].pins;
            held_.push_back(k);
        }
    taken_.resize(todo_.size());
    std::size_t got = 0;
    try {
        got = take_frames(todo_.size(), taken_.data());
    } catch (const std::exception&) {
        // a hint: the fault that needs the leaf will report the error
    }
    for (std::size_t k : held_) --frames_[frame_[k]].pins;
    for (std::size_t i = 0; i < got; ++i) {
        std::size_t k = todo_[i];
        frame_[k] = taken_[i];
        frames_[taken_[i]].leaf = k;
        state_[k] |= kInFrame | kLoading | kRef | kAhead;
        io_->queue(false, frames_[taken_[i]].data, leaf_bytes_, k * leaf_bytes_, k << 1);
    }
    (ahead ? stats_.readahead_issued : stats_.hinted) += got;
    clean_ahead(got);
    pump(0);  // submits
}

// Collects finished transfers (at least `min`, fewer when fewer are in flight) and
// applies them (complete).
void Pager::pump(std::size_t min) {
    done_.clear();
    io_->collect(min, done_);
    for (const os::IoDone& d : done_) complete(d.tag, d.result);
}

// A transfer finished. A read that failed frees its frame and the leaf stays out (the
// fault that needs it reads it again and reports); a write that failed leaves the leaf
// dirty and records the error for write_back.
void Pager::complete(std::uint64_t tag, long result) noexcept {
    std::size_t k = tag >> 1;
    bool ok = result == static_cast<long>(leaf_bytes_);
    if (tag & kWriteTag) {
        state_[k] &= static_cast<Bits>(~kWriting);
        if (ok) {
            state_[k] |= kOnFile;
            ++stats_.writebacks;
            stats_.bytes_written += leaf_bytes_;
        } else {
            state_[k] |= kDirty;
            if (lookup(k)) sync_tags(k);
            if (!write_error_) {
                write_error_ = result < 0 ? static_cast<int>(-result) : EIO;
                write_failed_ = k;
            }
        }
        return;
    }
    state_[k] &= static_cast<Bits>(~kLoading);
    if (ok) {
        ++stats_.loads;
        stats_.bytes_read += leaf_bytes_;
        return;
    }
    std::uint32_t f = frame_[k];
    frames_[f].leaf = kNone;
    free_frames_.push_back(f);
    state_[k] &= static_cast<Bits>(~(kInFrame | kAhead));
}

void Pager::wait_for(std::size_t k) {
    while (state_[k] & kLoading) pump(1);
}

void Pager::drain() noexcept {
    while (io_ && io_->in_flight()) {
        done_.clear();
        io_->collect(io_->in_flight(), done_);
        for (const os::IoDone& d : done_) complete(d.tag, d.result);
    }
}

// Called after each fault: when the last faults kept one stride (1 at once), reads
// ahead along it, a batch at a time (when less than half the window is left ahead).
void Pager::read_ahead_after(std::size_t k) {
    std::size_t window = std::min(opt_.readahead, max_frames_ / 2);
    auto d = static_cast<std::ptrdiff_t>(k - last_fault_);
    bool confirmed = last_fault_ != kNone && d != 0 && (d == 1 || d == stride_);
    if (!confirmed) ahead_until_ = k;
    stride_ = last_fault_ == kNone ? 0 : d;
    last_fault_ = k;
    if (!confirmed) return;
    pass_behind(k - d);
    if (window == 0) return;
    auto ahead = static_cast<std::ptrdiff_t>(ahead_until_ - k) / d;
    if (ahead > static_cast<std::ptrdiff_t>(window / 2)) return;
    std::uint32_t f = frame_[k];
    ++frames_[f].pins;  // the leaf just loaded must not make room for its own read-ahead
    next_.clear();
    auto from = std::max<std::ptrdiff_t>(ahead, 0) + 1;
    for (auto i = from; i <= static_cast<std::ptrdiff_t>(window); ++i) {
        auto j = static_cast<std::ptrdiff_t>(k) + i * d;
        if (j < 0 || j >= static_cast<std::ptrdiff_t>(leaves_)) break;
        next_.push_back(static_cast<std::size_t>(j));
        ahead_until_ = static_cast<std::size_t>(j);
    }
    start_reads(next_, true);
    --frames_[f].pins;
}

// The leaf a scan just left is the first to go (most recently used first): of a
// cyclic scan larger than the budget, the leaves loaded first then stay in memory and
// each pass reads only the rest, where LRU (or CLOCK) would read everything every pass.
void Pager::pass_behind(std::size_t k) noexcept {
    if (k >= leaves_ || !(state_[k] & kInFrame)) return;
    state_[k] &= static_cast<Bits>(~kRef);
    if (lookup(k)) sync_tags(k);
    if (behind_.size() == behind_.capacity()) behind_.erase(behind_.begin(), behind_.begin() + behind_.size() / 2);
    behind_.push_back(k);
}

void Pager::prefetch(std::span<const std::size_t> leaves) {
    std::lock_guard lock(mutex_);
    std::size_t limit = max_frames_ / 2;
    start_reads(leaves.subspan(0, std::min(leaves.size(), limit)), false);
}

void Pager::flush() {
    std::lock_guard lock(mutex_);
    while (io_->in_flight()) pump(1);  // write-behind in flight finishes first
    dirty_.clear();
    for (std::uint32_t f = 0; f < frames_.size(); ++f)
        if (frames_[f].leaf != kNone && (state_[frames_[f].leaf] & kDirty)) dirty_.push_back(f);
    ++epoch_;
    write_back(dirty_);
}

void Pager::set_budget(std::size_t bytes) {
    std::size_t want = std::clamp<std::size_t>(bytes / leaf_bytes_, 1, std::max<std::size_t>(leaves_, 1));
    if (want > UINT32_MAX) throw std::invalid_argument("physmem::PagedArray: budget of more than 2^32 leaves");
    std::lock_guard lock(mutex_);
    std::size_t before = max_frames_;
    max_frames_ = want;  // take no new frames beyond it
    try {
        if (want < frames_.size()) shrink_frames(want);
        reserve_scratch();
    } catch (...) {
        max_frames_ = before;
        throw;
    }
}

// Evicts until at most `keep` frames hold leaves, moves the leaves of frames at index
// `keep` and above into free frames below it (the bookkeeping only: the data stays where
// it is, the block changes index), and gives the frames from `keep` on back to the pool.
void Pager::shrink_frames(std::size_t keep) {
    while (io_->in_flight()) pump(1);  // write-behind and read-ahead finish first
    free_frames_.reserve(frames_.size());  // the allocations first: a throw changes nothing
    std::vector<std::uint32_t> low;        // free frames below `keep`
    low.reserve(keep);
    // Victims in rounds no larger than the slow path's reserved scratch (choose_victims
    // and write_back must not allocate between marking frames and finishing them).
    const std::size_t round = std::min<std::size_t>(taken_.capacity(), 4096);
    for (std::size_t held = frames_.size() - free_frames_.size(); held > keep;) {
        taken_.resize(std::min(held - keep, round));
        std::size_t got = choose_victims(taken_.size(), taken_.data());
        if (!got)
            throw std::runtime_error("physmem::PagedArray: cannot shrink the budget to " + std::to_string(keep) +
                                     " leaves: the leaves in memory are pinned");
        free_frames_.insert(free_frames_.end(), taken_.begin(), taken_.begin() + static_cast<std::ptrdiff_t>(got));
        held -= got;
    }
    for (std::uint32_t f : free_frames_)
        if (f < keep) low.push_back(f);
    for (std::size_t f = keep; f < frames_.size(); ++f) {
        if (frames_[f].leaf == kNone) continue;
        std::uint32_t g = low.back();
        low.pop_back();
        std::swap(frames_[g], frames_[f]);
        frame_[frames_[g].leaf] = g;
        if (opt_.movable) pool_->set_owner(frames_[g].data, this, std::uintptr_t{g} << 1 | 1);
    }
    for (std::size_t f = keep; f < frames_.size(); ++f) pool_->deallocate(frames_[f].data);
    frames_.resize(keep);
    free_frames_.swap(low);
    if (hand_ >= keep) hand_ = 0;
    ++epoch_;
}

std::vector<void*> Pager::blocks() const {
    std::lock_guard lock(mutex_);
    std::vector<void*> out(inner_);
    for (const Frame& f : frames_) out.push_back(f.data);
    return out;
}

PagingStats Pager::stats() const {
    std::lock_guard lock(mutex_);
    PagingStats s = stats_;
    s.frames = max_frames_;
    s.resident = frames_.size() - free_frames_.size();
    return s;
}

}  // namespace physmem::detail
