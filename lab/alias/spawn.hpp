// lab/alias/spawn.hpp — running a child process with an environment built by the caller
// and reading what it prints (the alias programs' only process-level OS calls besides
// lab/common/process.hpp's).
#pragma once

#include <string>
#include <vector>

namespace lab::alias {

// This process's own executable as a path exec can take even after the file was replaced
// or deleted (a rebuild while a sweep runs): the magic link, resolved in the child.
inline constexpr const char* kSelfExe = "/proc/self/exe";

// Runs `path` with exactly `argv` and `env` (nothing inherited but the personality,
// which exec keeps), waits for it and returns its stdout. Throws std::runtime_error
// naming the child's exit status (and the start of its stdout) unless it exits 0.
std::string run_capture(const std::string& path, const std::vector<std::string>& argv,
                        const std::vector<std::string>& env);

}  // namespace lab::alias
