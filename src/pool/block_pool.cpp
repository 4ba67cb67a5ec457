// src/pool/block_pool.cpp — blocks cut from regions; a LIFO free list; a bitmap per
// region that catches double frees and foreign pointers.
#include "physmem/pool.hpp"

#include <cstdio>
#include <new>
#include <stdexcept>
#include <string>

#include "core/fatal.hpp"
#include "core/parse.hpp"
#include "port/os.hpp"

namespace physmem {

struct BlockPool::Slab {
    Region region;            // may be larger than asked: rounded up to its page size
    std::size_t blocks;       // asked bytes / block_size: capacity is honoured exactly
    std::size_t bumped = 0;   // blocks [0, bumped) have been handed out at least once
    std::vector<std::uint64_t> in_use;  // one bit per block

    Slab(const RegionOptions& o, std::size_t block_size)
        : region(o), blocks(o.bytes / block_size), in_use((blocks + 63) / 64) {}

    std::size_t index_of(const void* p, unsigned shift) const noexcept {
        return static_cast<std::size_t>(static_cast<const std::byte*>(p) - region.data()) >> shift;
    }
    bool test(std::size_t i) const noexcept { return in_use[i / 64] >> (i % 64) & 1; }
    void flip(std::size_t i) noexcept { in_use[i / 64] ^= std::uint64_t{1} << (i % 64); }
};

namespace {

void check_options(const PoolOptions& o) {
    std::size_t b = o.block_size;
    if (b < (4u << 10) || b > (std::size_t{1} << 30) || (b & (b - 1)))
        throw std::invalid_argument("physmem::BlockPool: block_size " + std::to_string(b) +
                                    " is not a power of two from 4 KiB to 1 GiB");
    if (o.capacity < b)
        throw std::invalid_argument("physmem::BlockPool: capacity " + format_size(o.capacity) +
                                    " is smaller than one block (" + format_size(b) + ")");
}

RegionOptions region_options(const PoolOptions& o, std::size_t bytes) {
    return RegionOptions{.bytes = bytes, .alignment = o.block_size, .backing = o.backing,
                         .strict_backing = o.strict_backing, .prefault = o.prefault,
                         .lock = o.lock, .reserve_huge_pages = o.reserve_huge_pages};
}

}  // namespace

BlockPool::BlockPool(const PoolOptions& options)
    : options_(options), block_size_(options.block_size) {
    check_options(options);
    block_shift_ = static_cast<unsigned>(__builtin_ctzll(block_size_));
    std::size_t bytes = (options.capacity + block_size_ - 1) / block_size_ * block_size_;
    add_region(bytes);
}

BlockPool::~BlockPool() {
    for (Slab* s : slabs_) delete s;
}

void BlockPool::add_region(std::size_t bytes) {
    auto slab = std::make_unique<Slab>(region_options(options_, bytes), block_size_);
    free_.reserve(total_ + slab->blocks);  // deallocate never reallocates
    slabs_.reserve(slabs_.size() + 1);
    total_ += slab->blocks;
    mapped_ += slab->region.size();
    slabs_.push_back(slab.release());
}

bool BlockPool::grow_locked() noexcept {
    if (!options_.grow || slabs_.empty()) return false;
    std::size_t next = slabs_.back()->blocks * block_size_ * 2;
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

void* BlockPool::pop_locked() noexcept {
    void* p = nullptr;
    Slab* s = nullptr;
    if (!free_.empty()) {
        p = free_.back();
        free_.pop_back();
        s = find_slab(p);
    } else if (!slabs_.empty() && slabs_.back()->bumped < slabs_.back()->blocks) {
        s = slabs_.back();
        p = s->region.data() + (s->bumped++ << block_shift_);
    } else {
        return nullptr;
    }
    s->flip(s->index_of(p, block_shift_));
    ++in_use_;
    return p;
}

void* BlockPool::try_allocate() noexcept {
    std::lock_guard<std::mutex> guard(mutex_);
    void* p = pop_locked();
    if (!p && grow_locked()) p = pop_locked();
    return p;
}

void* BlockPool::allocate() {
    void* p = try_allocate();
    if (!p) throw std::bad_alloc();
    return p;
}

void BlockPool::deallocate(void* p) noexcept {
    if (!p) return;
    std::lock_guard<std::mutex> guard(mutex_);
    Slab* s = find_slab(p);
    if (!s) core::fatal("BlockPool::deallocate(%p): pointer not from this pool", p);
    std::size_t i = s->index_of(p, block_shift_);
    if (p != s->region.data() + (i << block_shift_))
        core::fatal("BlockPool::deallocate(%p): not the start of a block", p);
    if (!s->test(i)) core::fatal("BlockPool::deallocate(%p): double free", p);
    s->flip(i);
    --in_use_;
    free_.push_back(p);
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
    for (const Slab* s : slabs_) {
        st.bytes_prefaulted += s->region.prefaulted_bytes();
        st.huge_pages_reserved += s->region.reserved_huge_pages();
    }
    return st;
}

std::vector<BackingReport> BlockPool::verify_backing() const {
    std::lock_guard<std::mutex> guard(mutex_);
    std::vector<BackingReport> out;
    for (const Slab* s : slabs_) out.push_back(s->region.verify());
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
