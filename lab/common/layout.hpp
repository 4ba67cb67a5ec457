// lab/common/layout.hpp — the memory-layout controls every lab program applies (seed 002:
// layout alone can bias a measurement through 4K aliasing).
//
// Before the body runs, lab::run calls layout::apply(settings):
// - ASLR off by default: without --aslr on, a process the kernel randomises sets
//   ADDR_NO_RANDOMIZE and re-executes itself once, so stacks, heaps and libraries sit at
//   the same addresses on every run. When that cannot be done (personality refused) the
//   run goes on randomised and the record says why.
// - --layout-seed S (S >= 1) perturbs the layout reproducibly: the environment is padded
//   by 16 * (h(S) mod 257) bytes (0..4 KiB, via the variable PHYSMEM_LAB_LAYOUT_PAD and
//   the same re-exec) and, after the exec, one malloc of 16 * (h'(S) mod 256) bytes is
//   kept for the life of the process, shifting the small-object heap.
// At most one re-exec happens here (a guard variable holding the pid, zero-padded to a
// fixed width, stops loops; exec keeps the pid). preload::ensure may re-exec once more;
// the padding and personality carry over.
//
// record() returns the fields every record carries: "aslr" ("on"/"off"), "env_bytes"
// (process::env_bytes() as this process image started, i.e. when apply() ran) and "layout" (seed, padding, heap offset,
// low 12 bits of a stack variable, and any note).
#pragma once

#include <nlohmann/json.hpp>

#include "settings.hpp"

namespace lab::layout {

// Applies the controls above; may replace the process image (and then not return).
void apply(const Settings& s);

// The record fields described above.
nlohmann::ordered_json record(const Settings& s);

}  // namespace lab::layout
