// src/paged/pager.cpp — the paged array's engine: its life (the backing file, the I/O queue, the
// table and the first frame made up front; everything returned at the end), its errors and
// its counters. The other concepts: table.cpp, fault.cpp, frames.cpp, write_back.cpp,
// transfers.cpp, read_ahead.cpp, budget.cpp.
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

std::string default_dir() {
    const char* t = std::getenv("TMPDIR");
    return t && *t ? t : "/var/tmp";
}

// Room for one more element, grown geometrically (reserve(size() + 1) would reallocate and
// copy on every call).
template <class V>
void reserve_one_more(V& v) {
    if (v.size() == v.capacity()) v.reserve(std::max<std::size_t>(16, 2 * v.size()));
}

}  // namespace

std::size_t Pager::leaf_bytes_for(const BlockPool& pool, const PagingOptions& o) {
    const std::size_t block = pool.block_size(), leaf = o.leaf_bytes ? o.leaf_bytes : block;
    if (!std::has_single_bit(leaf) || leaf < 4096 || leaf > block)  // a pool's block is at least 4 KiB
        throw std::invalid_argument("physmem::PagedArray: leaf_bytes " + std::to_string(leaf) +
                                    ": a power of two from 4096 up to the pool's block size (" +
                                    std::to_string(block) + "), or 0 for the block size");
    return leaf;
}

Pager::Pager(BlockPool& pool, std::size_t leaves, std::size_t entry_stride, InitFn init, const PagingOptions& o)
    : pool_(&pool), init_(init), opt_(o), leaves_(leaves), leaf_bytes_(leaf_bytes_for(pool, o)),
      entry_stride_(entry_stride), block_bytes_(pool.block_size()), per_block_(block_bytes_ / leaf_bytes_) {
    if (entry_stride_ % 4 || entry_stride_ > leaf_bytes_)
        throw std::invalid_argument("physmem::PagedArray: a leaf's elements take " + std::to_string(entry_stride_) +
                                    " bytes, not a multiple of 4 up to the leaf's " + std::to_string(leaf_bytes_) +
                                    " (choose larger leaves, or pad the element to a multiple of 4 bytes)");
    fan_shift_ = static_cast<unsigned>(std::bit_width(block_bytes_ / sizeof(void*)) - 1);
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
        for (void* b : frame_blocks_) pool_->deallocate(b);
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
    for (void* b : frame_blocks_) pool_->deallocate(b);
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
    add_frame(false);
    free_frames_.push_back(0);  // reserved by reserve_scratch: no throw
}

// Frame frames_.size(), free (no leaf), in the next slice of the last frame block or in a
// new block (false when the pool is full and `may_fail`, else std::bad_alloc).
bool Pager::add_frame(bool may_fail) {
    const std::size_t f = frames_.size(), b = f / per_block_;
    reserve_one_more(frames_);  // the allocations first: a throw leaves nothing half made
    if (b == frame_blocks_.size()) {
        reserve_one_more(frame_blocks_);
        void* p = new_block(b << 1 | 1, may_fail);
        if (!p) return false;
        frame_blocks_.push_back(p);
    }
    frames_.push_back({static_cast<char*>(frame_blocks_[b]) + (f % per_block_) * leaf_bytes_, kNone, 0});
    return true;
}

// A block of this pager: movable when asked for, else pinned. Cookies: inner block i of
// inner_ is i << 1, frame block b is b << 1 | 1 (relocate below). nullptr when the pool is full
// (a frame: `may_fail`), else std::bad_alloc.
void* Pager::new_block(std::uintptr_t cookie, bool may_fail) {
    if (may_fail) return opt_.movable ? pool_->try_allocate(this, cookie) : pool_->try_allocate();
    return opt_.movable ? pool_->allocate(this, cookie) : pool_->allocate();
}

void Pager::fail(const char* op, std::size_t k, int error) const {
    throw PagingError(std::string("physmem::PagedArray: ") + op + " of leaf " + std::to_string(k) + " (bytes " +
                          std::to_string(k * leaf_bytes_) + ".." + std::to_string((k + 1) * leaf_bytes_) + ") in " +
                          file_ + " failed: " + std::strerror(error),
                      error);
}

std::vector<void*> Pager::blocks() const {
    std::lock_guard lock(mutex_);
    std::vector<void*> out(inner_);
    out.insert(out.end(), frame_blocks_.begin(), frame_blocks_.end());
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
