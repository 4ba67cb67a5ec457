// src/port/counters.cpp — perf_event_open and getrusage (physmem/counters.hpp).
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "physmem/counters.hpp"

namespace physmem {

namespace {

int open_event(std::uint32_t type, std::uint64_t config) noexcept {
    perf_event_attr attr;
    std::memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = type;
    attr.config = config;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    // pid 0, cpu -1: this thread, any CPU.
    return static_cast<int>(::syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

std::uint64_t rusage_faults() noexcept {
    rusage ru{};
    ::getrusage(RUSAGE_THREAD, &ru);
    return static_cast<std::uint64_t>(ru.ru_minflt + ru.ru_majflt);
}

}  // namespace

PageFaultCounter::PageFaultCounter() noexcept
    : fd_(open_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS)) {}

PageFaultCounter::~PageFaultCounter() {
    if (fd_ >= 0) ::close(fd_);
}

std::uint64_t PageFaultCounter::read() const noexcept {
    if (fd_ < 0) return rusage_faults();
    std::uint64_t v = 0;
    if (::read(fd_, &v, sizeof v) != static_cast<ssize_t>(sizeof v)) return rusage_faults();
    return v;
}

std::string_view PageFaultCounter::source() const noexcept {
    return fd_ >= 0 ? "perf:page-faults" : "getrusage";
}

bool hardware_counters_available() noexcept {
    int fd = open_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
    if (fd < 0) return false;
    ::close(fd);
    return true;
}

}  // namespace physmem
