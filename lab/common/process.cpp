// lab/common/process.cpp — see process.hpp. The lab's only exec, spawn, fork, personality and
// dlopen calls.
#include "process.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <utility>

extern char** environ;

namespace lab::process {

namespace {

[[noreturn]] void fail(const std::string& what, int err) {
    throw std::runtime_error(what + ": " + std::strerror(err));
}

std::vector<char*> c_strings(const std::vector<std::string>& v) {
    std::vector<char*> out;
    for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
    out.push_back(nullptr);
    return out;
}

std::string read_all(int fd) {
    std::string out;
    char buf[4096];
    for (;;) {
        ssize_t got = ::read(fd, buf, sizeof buf);
        if (got > 0) out.append(buf, static_cast<std::size_t>(got));
        else if (got == 0 || errno != EINTR) break;
    }
    return out;
}

// Forks a child that dies with this process (PR_SET_PDEATHSIG: even when this one is
// killed, as by a point's timeout, so no server or load generator outlives it) and execs
// `path` with stdout on `out` and, when err >= 0, stderr on `err` (both opened
// O_CLOEXEC: the child keeps only these copies). Returns the pid. The child makes
// async-signal-safe calls only. Throws when `path` cannot be executed or fork fails.
// vfork, not fork: fork marks every private page of this process copy-on-write, and the
// first write to each afterwards is a page fault — a measured pass after a child (the
// paging program runs fio beside its passes) counted them (paging-4: 13 faults in a
// randread point's timed repetitions). The child shares the memory until execve and
// makes system calls only (the path and vectors are built before).
pid_t fork_exec(const std::string& path, char* const* av, char* const* ev, int out, int err) {
    if (::access(path.c_str(), X_OK) != 0) fail("exec " + path, errno);
    const pid_t parent = ::getpid();
    const char* exe = path.c_str();
    const pid_t pid = ::vfork();
    if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(127);  // the parent died before the prctl
        ::dup2(out, 1);
        if (err >= 0) ::dup2(err, 2);
        ::execve(exe, av, ev);
        ::_exit(127);
    }
    if (pid < 0) fail("fork for " + path, errno);
    return pid;
}

std::string describe(int status) {
    if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
    return "status " + std::to_string(status);
}

}  // namespace

std::vector<std::string> own_argv() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> out;
    for (std::size_t at = 0; at < all.size();) {
        std::size_t end = all.find('\0', at);
        if (end == std::string::npos) end = all.size();
        out.push_back(all.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

void reexec_self(const std::string& why) {
    std::vector<std::string> args = own_argv();
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv("/proc/self/exe", argv.data());
    throw std::runtime_error("re-exec (" + why + ") failed: " + std::strerror(errno));
}

ChildResult run_child(const std::string& path, const std::vector<std::string>& argv,
                      const std::vector<std::string>& env, bool merge_stderr) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) fail("pipe", errno);
    auto av = c_strings(argv), ev = c_strings(env);
    pid_t pid = 0;
    try {
        pid = fork_exec(path, av.data(), ev.data(), fds[1], merge_stderr ? fds[1] : -1);
    } catch (...) {
        ::close(fds[0]);
        ::close(fds[1]);
        throw;
    }
    ::close(fds[1]);
    std::string out = read_all(fds[0]);
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, describe(status), std::move(out)};
}

int spawn(const std::string& path, const std::vector<std::string>& argv,
          const std::vector<std::string>& env, const std::string& log_path) {
    auto av = c_strings(argv), ev = c_strings(env);
    int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log < 0) fail("open " + log_path, errno);
    pid_t pid = 0;
    try {
        pid = fork_exec(path, av.data(), ev.data(), log, log);
    } catch (...) {
        ::close(log);
        throw;
    }
    ::close(log);
    return pid;
}

bool running(int pid, std::string* how) {
    int status = 0;
    pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == 0) return true;
    if (how) *how = got == pid ? describe(status) : "gone";
    return false;
}

std::string stop(int pid, int sig, double grace_s) {
    std::string how;
    if (!running(pid, &how)) return how;
    ::kill(pid, sig);
    for (double waited = 0; waited < grace_s; waited += 0.01) {
        if (!running(pid, &how)) return how;
        ::usleep(10000);
    }
    ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return describe(status) + " (killed after " + std::to_string(grace_s) + " s)";
}

std::string run_capture(const std::string& path, const std::vector<std::string>& argv,
                        const std::vector<std::string>& env) {
    ChildResult r = run_child(path, argv, env);
    if (r.exit_code != 0)
        throw std::runtime_error(path + " (child) ended with " + r.status + ": " + r.out.substr(0, 200));
    return std::move(r.out);
}

std::string find_on_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::string dirs = path && *path ? path : "/usr/bin";
    for (std::size_t at = 0; at <= dirs.size();) {
        std::size_t end = std::min(dirs.find(':', at), dirs.size());
        std::string d = dirs.substr(at, end - at);
        if (!d.empty() && ::access((d + "/" + name).c_str(), X_OK) == 0) return d + "/" + name;
        at = end + 1;
    }
    return "";
}

std::string version_of(const std::string& exe) {
    std::string out = run_child(exe, {exe, "--version"}, {"PATH=/usr/bin:/bin"}).out;
    return out.substr(0, out.find('\n'));
}

bool aslr_active() {
    int persona = ::personality(0xffffffff);
    if (persona != -1 && (persona & ADDR_NO_RANDOMIZE)) return false;
    std::ifstream in("/proc/sys/kernel/randomize_va_space");
    int mode = 2;
    return !(in >> mode) || mode != 0;
}

bool set_no_randomize(bool on) {
    int persona = ::personality(0xffffffff);
    if (persona == -1) return false;
    unsigned long want = on ? (persona | ADDR_NO_RANDOMIZE) : (persona & ~ADDR_NO_RANDOMIZE);
    return ::personality(want) != -1;
}

std::vector<std::string> own_env() {
    std::vector<std::string> out;
    for (char** e = environ; e && *e; ++e) out.emplace_back(*e);
    return out;
}

std::size_t env_bytes() {
    std::size_t n = 0;
    for (char** e = environ; e && *e; ++e) n += std::strlen(*e) + 1;
    return n;
}

void* library_symbol(const std::string& path, const char* name, std::string* why) {
    void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        if (why) *why = ::dlerror();
        return nullptr;
    }
    void* sym = ::dlsym(lib, name);
    if (!sym && why) *why = path + " has no symbol " + name;
    return sym;
}

std::string object_of(const void* p) {
    Dl_info info{};
    return ::dladdr(p, &info) && info.dli_fname ? info.dli_fname : "";
}

}  // namespace lab::process
