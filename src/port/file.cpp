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

int open_flags(bool direct) noexcept { return O_RDWR | O_CLOEXEC | (direct ? O_DIRECT : 0); }

// open(2) with O_DIRECT first when asked, then without it (EINVAL: not supported here).
template <class Open>
int with_direct_fallback(bool direct, bool* direct_used, Open&& open) noexcept {
    if (direct) {
        int fd = open(open_flags(true));
        if (fd >= 0 || errno != EINVAL) {
            *direct_used = fd >= 0;
            return fd >= 0 ? fd : -errno;
        }
    }
    *direct_used = false;
    int fd = open(open_flags(false));
    return fd >= 0 ? fd : -errno;
}

// A named file in dir, unlinked at once: for file systems without O_TMPFILE.
int open_unlinked(const char* dir, bool direct, bool* direct_used) noexcept {
    char name[PATH_MAX];
    if (std::snprintf(name, sizeof name, "%s/physmem-paged-XXXXXX", dir) >= static_cast<int>(sizeof name))
        return -ENAMETOOLONG;
    int fd = ::mkostemp(name, O_CLOEXEC);
    if (fd < 0) return -errno;
    int reopened = with_direct_fallback(direct, direct_used, [&](int flags) { return ::open(name, flags); });
    ::unlink(name);
    ::close(fd);
    return reopened;
}

}  // namespace

int open_backing_file(const char* path, const char* dir, bool direct, bool* direct_used) noexcept {
    if (path && *path)
        return with_direct_fallback(direct, direct_used,
                                    [&](int flags) { return ::open(path, flags | O_CREAT | O_EXCL, 0600); });
    int fd = with_direct_fallback(direct, direct_used,
                                  [&](int flags) { return ::open(dir, flags | O_TMPFILE, 0600); });
    if (fd == -EOPNOTSUPP || fd == -EISDIR) return open_unlinked(dir, direct, direct_used);
    return fd;
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
