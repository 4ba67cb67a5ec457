// src/paged/read_ahead.cpp — reading ahead: along a confirmed stride after each fault, the leaf a
// scan left first to go, and the caller's hints (prefetch).
// See include/physmem/pager.hpp for the contract.
#include "physmem/pager.hpp"

#include <algorithm>

namespace physmem::detail {

// Called after each fault: when the last faults kept one stride (1 at once), reads
// ahead along it, a batch at a time (when less than half the window is left ahead). The
// window ramps: 2 leaves at a pattern's first fault, twice as many at each next, up to
// the readahead option (and half the budget).
void Pager::read_ahead_after(std::size_t k) {
    auto d = static_cast<std::ptrdiff_t>(k - last_fault_);
    bool confirmed = last_fault_ != kNone && d != 0 && (d == 1 || d == stride_);
    if (!confirmed) ahead_until_ = k, ramp_ = 0;
    stride_ = last_fault_ == kNone ? 0 : d;
    last_fault_ = k;
    if (!confirmed) return;
    ramp_ = std::min(ramp_ ? 2 * ramp_ : 2, std::max<std::size_t>(opt_.readahead, 2));
    std::size_t window = std::min({opt_.readahead, max_frames_ / 2, ramp_});
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

}  // namespace physmem::detail
