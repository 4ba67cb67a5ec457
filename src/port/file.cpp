// src/port/file.cpp — the paged array's backing file (see os.hpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdlib.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "port/os.hpp"

namespace physmem::os {
namespace {

constexpr int kOpenFlags = O_RDWR | O_CLOEXEC;

// Adds O_DIRECT to an open file when asked and the file system accepts it (fcntl refuses
// it with EINVAL where open(2) would): the file is created without it, so a refusal
// never leaves a created file to clean up. Returns fd.
int with_direct(int fd, bool direct, bool* direct_used) noexcept {
    *direct_used = false;
    if (fd < 0 || !direct) return fd;
    int flags = ::fcntl(fd, F_GETFL);
    *direct_used = flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_DIRECT) == 0;
    return fd;
}

int or_errno(int fd) noexcept { return fd >= 0 ? fd : -errno; }

// A named file in dir, unlinked at once: for file systems without O_TMPFILE.
int open_unlinked(const char* dir, bool direct, bool* direct_used) noexcept {
    char name[PATH_MAX];
    if (std::snprintf(name, sizeof name, "%s/physmem-paged-XXXXXX", dir) >= static_cast<int>(sizeof name))
        return -ENAMETOOLONG;
    int fd = ::mkostemp(name, O_CLOEXEC);
    if (fd < 0) return -errno;
    ::unlink(name);
    return with_direct(fd, direct, direct_used);
}

}  // namespace

int open_backing_file(const char* path, const char* dir, bool direct, bool* direct_used) noexcept {
    *direct_used = false;
    if (path && *path)
        return with_direct(or_errno(::open(path, kOpenFlags | O_CREAT | O_EXCL, 0600)), direct, direct_used);
    int fd = or_errno(::open(dir, kOpenFlags | O_TMPFILE, 0600));
    if (fd == -EOPNOTSUPP || fd == -EISDIR) return open_unlinked(dir, direct, direct_used);
    return with_direct(fd, direct, direct_used);
}

long read_at(int fd, void* buf, std::size_t n, std::uint64_t off) noexcept {
    std::size_t done = 0;
    while (done < n) {
        ssize_t r = ::pread(fd, static_cast<char*>(buf) + done, n - done, static_cast<off_t>(off + done));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -errno;
        if (r == 0) break;
        done += static_cast<std::size_t>(r);
    }
    return static_cast<long>(done);
}

long write_at(int fd, const void* buf, std::size_t n, std::uint64_t off) noexcept {
    std::size_t done = 0;
    while (done < n) {
        ssize_t r = ::pwrite(fd, static_cast<const char*>(buf) + done, n - done, static_cast<off_t>(off + done));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -errno;
        if (r == 0) return -EIO;
        done += static_cast<std::size_t>(r);
    }
    return static_cast<long>(done);
}

int close_file(int fd) noexcept { return ::close(fd) == 0 ? 0 : errno; }

int remove_file(const char* path) noexcept { return ::unlink(path) == 0 ? 0 : errno; }

}  // namespace physmem::os
