// src/paged/table.cpp — the leaf table: inner blocks bottom-up, each leaf's entry with its tags,
// and the pool's relocation of a table block or a frame.
// See include/physmem/pager.hpp for the contract.
#include "physmem/pager.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace physmem::detail {

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
        std::memset(b, 0, block_bytes_);
        return b;
    };
    level_start_.assign(1, 0);
    for (std::size_t i = 0; i < count; ++i) {
        level.push_back(take());
        auto* e = static_cast<std::uintptr_t*>(level.back());
        std::fill(e, e + (block_bytes_ / sizeof(void*)), kAbsent);  // no leaf present
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
    if (depth_ == 1) {
        const std::size_t n = std::max<std::size_t>(leaves_, 1);
        reads_ = std::make_unique<void*[]>(n);
        std::fill(reads_.get(), reads_.get() + n, reinterpret_cast<void*>(kAbsent));
    }
}

void Pager::free_table() noexcept {
    for (void* b : inner_) pool_->deallocate(b);
    inner_.clear();
    root_ = nullptr;
    reads_.reset();
}

// The pool moves one of our blocks (its lock held; nobody uses the array: the pool's
// contract). I/O in flight finishes first, since the kernel may still be reading into or
// writing from the frame. A frame block's leaf entries follow it with their tags; an inner block's
// parent slot (or the root) is rewritten. Iterators revalidate (epoch).
bool Pager::relocate(std::uintptr_t cookie, void* from, void* to) noexcept {
    drain();
    std::size_t i = cookie >> 1;
    if (cookie & 1) {  // frame block i: its frames follow it
        if (i >= frame_blocks_.size() || frame_blocks_[i] != from) return false;
        std::memcpy(to, from, block_bytes_);
        frame_blocks_[i] = to;
        for (std::size_t f = i * per_block_; f < std::min(frames_.size(), (i + 1) * per_block_); ++f) {
            frames_[f].data = static_cast<char*>(to) + (f % per_block_) * leaf_bytes_;
            std::size_t k = frames_[f].leaf;
            if (k != kNone && lookup(k)) sync_tags(k);
        }
    } else {
        if (i >= inner_.size() || inner_[i] != from) return false;
        std::memcpy(to, from, block_bytes_);
        inner_[i] = to;
        unsigned level = 1;  // inner_[i] is in level `level` (1: points at leaves)
        while (i >= level_start_[level]) ++level;
        std::size_t at = i - level_start_[level - 1];
        if (level == depth_) {
            root_ = static_cast<void**>(to);
            if (root_home_) *root_home_ = fixed_root();
        }
        else static_cast<void**>(inner_[level_start_[level] + (at >> fan_shift_)])[at & fan_mask_] = to;
    }
    bump_epoch();
    return true;
}

// Cached leaf pointers are stale from here on. The fence orders the new epoch before any
// later store (a victim's frame reused, its block freed): a lock-free reader that saw
// such a store sees the new epoch after its own acquire fence.
void Pager::bump_epoch() noexcept {
    Epoch next = std::uint64_t{epoch_} + 1;
    __atomic_store(&epoch_, &next, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

void*& Pager::entry(std::size_t k) noexcept { return *const_cast<void**>(slot(k)); }

void Pager::link(std::size_t k, std::uint32_t f) noexcept {
    frame_[k] = f;
    frames_[f].leaf = k;
    state_[k] |= kInFrame | kRef;
    sync_tags(k);
}

// Leaf k's entry from its frame (less k strides) and its reference and dirty bits
// (kCold, kClean), and its read entry (read_root: no kClean). The stores are relaxed
// atomics: peek() may read beside us.
void Pager::sync_tags(std::size_t k) noexcept {
    std::uintptr_t e = entry_of(k, frames_[frame_[k]].data) | (state_[k] & kRef ? 0 : kCold);
    if (reads_) __atomic_store_n(&reads_[k], reinterpret_cast<void*>(e), __ATOMIC_RELAXED);
    e |= state_[k] & kDirty ? 0 : kClean;
    __atomic_store_n(&entry(k), reinterpret_cast<void*>(e), __ATOMIC_RELAXED);
}

void Pager::unlink(std::size_t k) noexcept {
    if (reads_) __atomic_store_n(&reads_[k], reinterpret_cast<void*>(kAbsent), __ATOMIC_RELAXED);
    __atomic_store_n(&entry(k), reinterpret_cast<void*>(kAbsent), __ATOMIC_RELAXED);
}

}  // namespace physmem::detail
