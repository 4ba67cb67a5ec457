// src/port/process.cpp — a machine-wide file lock and waiting for the end of stdin or a
// signal (see os.hpp). Used by physmem-hugepages.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "port/os.hpp"

namespace physmem::os {

int lock_exclusive(const char* path) noexcept {
    int fd = ::open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return fd;
    int err = errno;
    ::close(fd);
    errno = err;
    return -1;
}

void unlock_file(int fd) noexcept {
    if (fd >= 0) ::close(fd);
}

namespace {
sigset_t stop_signals() noexcept {
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, s);
    return set;
}
}  // namespace

void block_stop_signals() noexcept {
    sigset_t set = stop_signals();
    ::sigprocmask(SIG_BLOCK, &set, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
}

int wait_for_eof_or_signal() noexcept {
    block_stop_signals();
    sigset_t set = stop_signals();
    int sfd = ::signalfd(-1, &set, SFD_CLOEXEC);
    pollfd fds[2] = {{0, POLLIN, 0}, {sfd, POLLIN, 0}};
    for (;;) {
        if (::poll(fds, sfd >= 0 ? 2 : 1, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (sfd >= 0 && (fds[1].revents & POLLIN)) {
            signalfd_siginfo info{};
            ssize_t got = ::read(sfd, &info, sizeof info);
            ::close(sfd);
            return got == static_cast<ssize_t>(sizeof info) ? static_cast<int>(info.ssi_signo) : 0;
        }
        if (fds[0].revents) {
            char buf[256];
            ssize_t got = ::read(0, buf, sizeof buf);
            if (got > 0 || (got < 0 && errno == EINTR)) continue;
            break;  // end of file (or a read error: the reader is gone)
        }
    }
    if (sfd >= 0) ::close(sfd);
    return 0;
}

}  // namespace physmem::os
