// lab/protect/seeded.hpp — the protect suite's detection part (issue 24, item 5): seeded
// memory-safety bugs, each run alone in a child process under the fatal policy.
//
//   physmem_lab_protect --seeded-bug oob_element     (what the parent runs in a child)
//
// A bug is caught when its child is ended by a signal (the fatal policy aborts) and its
// output (stdout and stderr) carries physmem's report ("physmem: fatal: ..."). The "clean"
// entry is the opposite check: the same operations without the bug (scans, updates, a
// sort, compact(), migrate(), domains, a keyed pool) must exit 0 and report nothing — a false positive
// there fails it.
#pragma once

#include <string>
#include <vector>

namespace lab::protect {

// The seeded bugs' names, in the order they run, then "clean". keyed_unchecked_read (an
// unchecked read of a keyed pool's block outside its domain, caught by the CPU's protection
// keys) is listed only where the CPU and kernel have keys.
const std::vector<std::string>& seeded_bugs();

// Runs bug `name` in this process (the child's side): returns only for "clean" (0) or
// an unknown name (2, with a message); every bug ends the process in physmem's report.
int run_seeded_bug(const std::string& name);

struct Detection {
    std::string bug;
    bool expected_to_fail = true;  // false for "clean"
    bool ok = false;               // caught (a bug), or clean and silent ("clean")
    std::string status;            // how the child ended ("signal 6", "exit 0")
    std::string report;            // the first line of physmem's report, or the start of the output
};

// Runs every seeded bug and "clean" in a child of `self` (this program's executable).
std::vector<Detection> detect_all(const std::string& self);

}  // namespace lab::protect
