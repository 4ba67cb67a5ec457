// lab/common/tracer.hpp — the memory references of a traced pass, tagged and windowed.
//
// A Tracer knows the run's buffers (a context's arrays and its pools' regions), each with
// the page size that backs it, and receives the references a traced pass makes:
// data(p) for the program's own loads and stores, walk(p) for a software walk's
// inner-block load (a TreeArray's table slot). Each reference is tagged with its buffer's
// page size — an address in no known buffer (e.g. malloc's heap) is tagged 4 KiB and
// counted as untagged — and fed to a TLB simulator and/or a trace file.
//
// Windowing (references numbered from 1 in the order recorded):
//   1 .. W            warm-up: simulated, then the simulator's counts are zeroed
//   W+1 .. W+N        the window: simulated and counted; counts snapshotted at W + N/2
//   W+N+1 ..          only counted (one increment and a compare), so a pass too long to
//                     simulate whole still says how many references it made
// The trace file receives the references 1 .. W+N (what the simulator saw).
//
// Cost: past the window, about 3 instructions a reference; inside it, a range check
// against the last buffer hit, then the simulator's access (or a buffered write).
// Not thread-safe: one tracer for one thread's pass.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "physmem/tlbsim/simulator.hpp"
#include "physmem/tlbsim/trace.hpp"

namespace lab {

// One buffer of the run: addresses [begin, end) on pages of `size`.
struct TracedBuffer {
    std::string name;
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;
    physmem::tlbsim::PageSize size = physmem::tlbsim::PageSize::k4K;
};

// Which references are simulated: W warm-up, then N counted.
struct TraceWindow {
    std::uint64_t warmup = 0;
    std::uint64_t refs = 0;
};

class Tracer {
  public:
    // sim and writer may each be null (then that consumer is skipped); both must outlive
    // the tracer. pre: sim, when given, is fresh or flushed with zeroed counts.
    Tracer(std::vector<TracedBuffer> buffers, TraceWindow window, physmem::tlbsim::Simulator* sim,
           physmem::tlbsim::TraceWriter* writer);

    // The program's load or store at p. Throws std::system_error only from the trace
    // file's writes.
    void data(const void* p) { record(p, physmem::tlbsim::Ref::data); }
    // A software walk's load of an inner block's slot at p.
    void walk(const void* p) { record(p, physmem::tlbsim::Ref::sw_walk); }

    // References recorded so far, inside the window and after it.
    std::uint64_t seen() const noexcept { return seen_; }
    const TraceWindow& window() const noexcept { return window_; }
    // Whether all W + N references have been simulated.
    bool window_full() const noexcept { return seen_ >= end_; }
    // References of 1 .. W+N tagged 4 KiB because no buffer holds them.
    std::uint64_t untagged() const noexcept { return untagged_; }
    // The simulator's counts at the window's midpoint (W + N/2); nullopt before it (or
    // without a simulator).
    const std::optional<physmem::tlbsim::Stats>& first_half() const noexcept { return half_; }

  private:
    void record(const void* p, physmem::tlbsim::Ref kind) {
        if (++seen_ > end_) return;  // past the window: counted only
        feed(reinterpret_cast<std::uintptr_t>(p), kind);
    }
    // Tags, simulates, writes; at W and W + N/2, mark(). The tag is one range check when
    // the address is in the buffer of the previous reference.
    void feed(std::uintptr_t a, physmem::tlbsim::Ref kind) {
        physmem::tlbsim::PageSize size = last_ && a - last_->begin < last_->end - last_->begin ? last_->size : lookup(a);
        physmem::tlbsim::Entry e(a, size, kind);
        if (sim_) sim_->access(e);
        if (writer_) writer_->write(e);
        if (seen_ == next_mark_) mark();
    }
    // The page size of a, from the buffers (4 KiB and counted untagged when in none).
    physmem::tlbsim::PageSize lookup(std::uintptr_t a) noexcept;
    // At W: zero the simulator's counts. At W + N/2: snapshot them.
    void mark();

    std::vector<TracedBuffer> buffers_;
    TraceWindow window_;
    physmem::tlbsim::Simulator* sim_;
    physmem::tlbsim::TraceWriter* writer_;
    std::uint64_t seen_ = 0;
    std::uint64_t end_;        // W + N
    std::uint64_t next_mark_;  // W, then W + N/2, then never
    std::uint64_t untagged_ = 0;
    const TracedBuffer* last_ = nullptr;  // the buffer of the last tagged reference
    std::optional<physmem::tlbsim::Stats> half_;
};

}  // namespace lab
