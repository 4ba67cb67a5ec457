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

void Pager::fail(const char* op, std::size_t k, int error) const {
    throw PagingError(std::string("physmem::PagedArray: ") + op + " of leaf " + std::to_string(k) + " (bytes " +
                          std::to_string(k * leaf_bytes_) + ".." + std::to_string((k + 1) * leaf_bytes_) + ") in " +
                          file_ + " failed: " + std::strerror(error),
                      error);
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
