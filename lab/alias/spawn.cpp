// lab/alias/spawn.cpp — posix_spawn with stdout on a pipe.
#include "spawn.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace lab::alias {

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

std::string describe(int status) {
    if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
    return "status " + std::to_string(status);
}

}  // namespace

std::string run_capture(const std::string& path, const std::vector<std::string>& argv,
                        const std::vector<std::string>& env) {
    int fds[2];
    if (::pipe(fds) != 0) fail("pipe", errno);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    auto av = c_strings(argv), ev = c_strings(env);
    pid_t pid = 0;
    int err = ::posix_spawn(&pid, path.c_str(), &fa, nullptr, av.data(), ev.data());
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    if (err != 0) {
        ::close(fds[0]);
        fail("posix_spawn " + path, err);
    }
    std::string out = read_all(fds[0]);
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw std::runtime_error(path + " (child) ended with " + describe(status) + ": " + out.substr(0, 200));
    return out;
}

}  // namespace lab::alias
