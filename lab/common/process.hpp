// lab/common/process.hpp — the lab's process-level OS calls: its own command line,
// replacing the process image, running a child and reading its output, the
// address-space randomisation flag, the environment, loading shared objects by path.
//
// Every re-exec in the lab (layout controls, running under another malloc) goes through
// reexec_self(), which keeps argv and the current environment (setenv/unsetenv changes
// made before the call included) and the personality flags, which exec inherits.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace lab::process {

// argv of this process, read back from /proc/self/cmdline.
std::vector<std::string> own_argv();

// Replaces this process with a fresh run of its own executable, same argv and current
// environment. Returns only on failure, throwing std::runtime_error naming `why`.
[[noreturn]] void reexec_self(const std::string& why);

// This process's own executable as a path exec can take even after the file was replaced
// or deleted (a rebuild while a sweep runs): the magic link, resolved in the child.
inline constexpr const char* kSelfExe = "/proc/self/exe";

// How a child ended: its exit code (-1 when a signal ended it), that in words, and its
// stdout (with its stderr when asked to merge them).
struct ChildResult {
    int exit_code = -1;
    std::string status;
    std::string out;
};
// Runs `path` with exactly `argv` and `env` (as run_capture) and waits for it, whatever
// its exit. merge_stderr: the child's stderr goes into `out` too. Like spawn()'s, the
// child is killed by the kernel when this process dies first (a load generator left
// spinning after a killed run held a CPU until found). Throws std::runtime_error only
// when it cannot be started.
ChildResult run_child(const std::string& path, const std::vector<std::string>& argv,
                      const std::vector<std::string>& env, bool merge_stderr = false);

// A child left running (a server the program measures): started by spawn() with its
// stdout and stderr appended to `log_path`, ended by stop(); killed by the kernel when
// this process dies first (PR_SET_PDEATHSIG), so nothing outlives a killed program.
// Returns the pid; throws std::runtime_error when the child cannot be started.
int spawn(const std::string& path, const std::vector<std::string>& argv,
          const std::vector<std::string>& env, const std::string& log_path);
// Whether the spawned child `pid` still runs; when it has ended, reaps it and sets *how
// ("exit N", "signal N"). A child reaped already reads as ended ("gone").
bool running(int pid, std::string* how);
// Ends the spawned child `pid`: sends `sig`, waits up to `grace_s`, then SIGKILL. Returns
// how it ended ("exit 0", "signal 9", ...; "gone" when it was reaped already).
std::string stop(int pid, int sig, double grace_s);

// Runs `path` with exactly `argv` and `env` (nothing inherited but the personality,
// which exec keeps), waits for it and returns its stdout. Throws std::runtime_error
// naming the child's exit status (and the start of its stdout) unless it exits 0.
std::string run_capture(const std::string& path, const std::vector<std::string>& argv,
                        const std::vector<std::string>& env);

// The executable `name` in a directory of $PATH (/usr/bin when PATH is unset), "" when
// there is none: the lab's programs that drive installed tools (redis, fio) find them so.
std::string find_on_path(const std::string& name);

// The first line `exe --version` prints ("" when it prints nothing).
std::string version_of(const std::string& exe);

// Whether the kernel randomises this process's layout (ASLR): false when the personality
// has ADDR_NO_RANDOMIZE or /proc/sys/kernel/randomize_va_space is 0.
bool aslr_active();

// Sets or clears ADDR_NO_RANDOMIZE for the next exec. False (errno kept) on failure.
bool set_no_randomize(bool on);

// This process's environment as "NAME=value" strings (a child's env that inherits it).
std::vector<std::string> own_env();

// Bytes of the environment strings as the kernel copies them to the new stack:
// the sum of strlen + 1 over environ.
std::size_t env_bytes();

// Symbol `name` of the shared object at `path` (dlopen RTLD_NOW | RTLD_LOCAL; the object
// stays loaded). Null with *why set when the object or the symbol cannot be had.
void* library_symbol(const std::string& path, const char* name, std::string* why);

// The file of the loaded object that contains address p ("" if none): dladdr.
std::string object_of(const void* p);

// Low 12 bits of an address (its offset inside a 4 KiB page).
inline unsigned low12(const void* p) { return static_cast<unsigned>(reinterpret_cast<std::size_t>(p) & 0xfff); }

}  // namespace lab::process
