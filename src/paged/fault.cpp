// src/paged/fault.cpp — the slow path of an access: a leaf not in memory is faulted in (its own
// synchronous read, or a read ahead that arrived), its reference and dirty bits set; pins.
// See include/physmem/pager.hpp for the contract.
#include "physmem/pager.hpp"

#include "port/os.hpp"

namespace physmem::detail {

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
    if (state_[k] & kReading) wait_for_read(k);  // another thread's fault reads it
    if (void* p = lookup(k)) return p;
    if (state_[k] & kLoading) wait_for(k);
    const bool hinted = state_[k] & kHinted;
    if (state_[k] & kInFrame) {  // read ahead or hinted, now arrived
        if (state_[k] & kAhead) ++stats_.readahead_hits;
        state_[k] &= static_cast<Bits>(~(kAhead | kHinted));
        link(k, frame_[k]);
    } else {
        std::uint32_t f;
        take_frames(1, &f);
        if (state_[k] & kOnFile) read_now(k, f);
        else init_(frames_[f].data, leaf_bytes_);
        link(k, f);
    }
    // A hinted leaf's fault says nothing of a pattern: the caller chose it. Were it
    // counted, two random faults a leaf apart would confirm a "scan" and send the leaf
    // before them — often hinted for the next batch — out first (pass_behind).
    if (!hinted) read_ahead_after(k);
    return frames_[frame_[k]].data;
}

// Another thread's fault is reading leaf k with the lock released: wait until it is done.
void Pager::wait_for_read(std::size_t k) {
    while (state_[k] & kReading) read_done_.wait(mutex_);
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

std::size_t Pager::pin_window(std::size_t k0, std::size_t n, void** out) {
    std::lock_guard lock(mutex_);
    for (std::size_t c = 0; c < n; ++c) {
        try {
            out[c] = pin_locked(k0 + c, false);
        } catch (const PagingError&) {
            while (c) unpin_locked(k0 + --c);  // the window's pins go with it
            throw;  // a failed read is reported at once, as pin reports it
        } catch (const std::runtime_error&) {
            if (c == 0) throw;
            return c;  // every frame pinned: a shorter window
        } catch (...) {
            while (c) unpin_locked(k0 + --c);
            throw;
        }
    }
    return n;
}

void Pager::unpin_window(std::size_t k0, std::size_t m, std::size_t dirty) noexcept {
    std::lock_guard lock(mutex_);
    for (std::size_t c = 0; c < m; ++c) {
        if (c < dirty) touch(k0 + c, true);
        unpin_locked(k0 + c);
    }
}

// A fault's own read: synchronous, with the lock released meanwhile (the caller holds
// it). The frame is the leaf's, pinned and marked loading, so no eviction takes it and a
// fault of the same leaf in another thread waits (wait_for_read); the entry stays absent,
// so no lock-free reader sees the frame before it is whole. On failure the frame goes back
// to the free list and the leaf stays out.
void Pager::read_now(std::size_t k, std::uint32_t f) {
    frame_[k] = f;
    frames_[f].leaf = k;
    ++frames_[f].pins;
    state_[k] |= kInFrame | kLoading | kReading;
    mutex_.unlock();
    if (read_hook) read_hook();
    long r = os::read_at(fd_, frames_[f].data, leaf_bytes_, k * leaf_bytes_);
    mutex_.lock();
    --frames_[f].pins;
    state_[k] &= static_cast<Bits>(~(kLoading | kReading));
    read_done_.notify_all();
    if (r != static_cast<long>(leaf_bytes_)) {
        frames_[f].leaf = kNone;
        state_[k] &= static_cast<Bits>(~kInFrame);
        free_frames_.push_back(f);
        fail(r < 0 ? "read" : "short read", k, r < 0 ? static_cast<int>(-r) : EIO);
    }
    ++stats_.loads;
    stats_.bytes_read += leaf_bytes_;
}

}  // namespace physmem::detail
