// src/port/sysfs.cpp — hugetlb counters, resident bytes and privileges (see os.hpp):
// the /proc and /sys access the drop-in allocator needs, with no heap allocation and no
// C++ runtime (plain fixed buffers), so libphysmem.so links only libc.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "port/os.hpp"

namespace physmem::os {

// The sysfs file of a hugetlb counter, formatted without heap allocation.
namespace {
bool hugepage_path(char (&out)[128], std::size_t page_size, const char* counter) noexcept {
    int n = std::snprintf(out, sizeof out, "/sys/kernel/mm/hugepages/hugepages-%zukB/%s",
                          page_size >> 10, counter);
    return n > 0 && static_cast<std::size_t>(n) < sizeof out;
}
}  // namespace

long hugepages_read(std::size_t page_size, const char* counter) noexcept {
    char path[128];
    if (!hugepage_path(path, page_size, counter)) return -1;
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buf[32] = {};
    ssize_t got = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (got <= 0) return -1;
    char* end = nullptr;
    long v = std::strtol(buf, &end, 10);
    return end == buf ? -1 : v;
}

int hugepages_set_total(std::size_t page_size, long total) noexcept {
    char path[128], buf[32];
    if (!hugepage_path(path, page_size, "nr_hugepages")) return ENAMETOOLONG;
    int fd = ::open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    int n = std::snprintf(buf, sizeof buf, "%ld\n", total);
    int rc = ::write(fd, buf, static_cast<std::size_t>(n)) == n ? 0 : errno;
    if (::close(fd) != 0 && rc == 0) rc = errno;
    return rc;
}

std::size_t resident_bytes() noexcept {
    int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char buf[128] = {};
    ssize_t got = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (got <= 0) return 0;
    char* end = nullptr;
    std::strtoull(buf, &end, 10);  // size
    return std::strtoull(end, nullptr, 10) * base_page_size();
}

bool is_root() noexcept { return ::geteuid() == 0; }


}  // namespace physmem::os
