// lab/common/tracer.cpp — the tracer's slow paths: buffer lookup and the window's marks.
#include "tracer.hpp"

#include <limits>
#include <utility>

namespace lab {

namespace {
constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();
}  // namespace

Tracer::Tracer(std::vector<TracedBuffer> buffers, TraceWindow window, physmem::tlbsim::Simulator* sim,
               physmem::tlbsim::TraceWriter* writer)
    : buffers_(std::move(buffers)), window_(window), sim_(sim), writer_(writer),
      end_(window.warmup + window.refs) {
    const std::uint64_t mid = window.warmup + window.refs / 2;
    if (mid == 0 && sim_) half_ = sim_->stats();
    next_mark_ = window.warmup > 0 ? window.warmup : mid > 0 ? mid : kNever;
}

physmem::tlbsim::PageSize Tracer::lookup(std::uintptr_t a) noexcept {
    for (const TracedBuffer& b : buffers_)
        if (a - b.begin < b.end - b.begin) {
            last_ = &b;
            return b.size;
        }
    ++untagged_;
    return physmem::tlbsim::PageSize::k4K;
}

void Tracer::mark() {
    const std::uint64_t mid = window_.warmup + window_.refs / 2;
    if (seen_ == window_.warmup && sim_) sim_->reset_stats();
    if (seen_ == mid && sim_) half_ = sim_->stats();
    next_mark_ = seen_ < mid ? mid : kNever;
}

}  // namespace lab
