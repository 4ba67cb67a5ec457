// lab/alias/spawn.hpp — running a child process with an environment built by the caller
// and reading what it prints (the alias programs' only process-level OS calls besides
// lab/common/process.hpp's).
#pragma once

#include <string>
#include <vector>

namespace lab::alias {

// The executable of this process (readlink /proc/self/exe). Throws std::runtime_error.
std::string self_exe();

// Runs `path` with exactly `argv` and `env` (nothing inherited but the personality,
// which exec keeps), waits for it and returns its stdout. Throws std::runtime_error
// naming the child's exit status (and the start of its stdout) unless it exits 0.
std::string run_capture(const std::string& path, const std::vector<std::string>& argv,
                        const std::vector<std::string>& env);

}  // namespace lab::alias
