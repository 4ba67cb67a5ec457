// src/port/counters.cpp — perf_event_open and getrusage (counters.hpp).
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "port/counters.hpp"

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

namespace physmem {

namespace {

struct EventSpec {
    std::uint32_t type;
    std::uint64_t config;
    std::string_view source;
};

// DTLB_LOAD_MISSES.WALK_ACTIVE on Skylake: event 0x08, umask 0x10, cmask 1.
constexpr std::uint64_t kWalkActive = 0x08 | (0x10 << 8) | (std::uint64_t{1} << 24);
// LD_BLOCKS_PARTIAL.ADDRESS_ALIAS (Nehalem through current Intel cores): event 0x07, umask 0x01.
constexpr std::uint64_t kAddressAlias = 0x07 | (0x01 << 8);
constexpr std::uint64_t kDtlbReadMiss = PERF_COUNT_HW_CACHE_DTLB | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
                                        (PERF_COUNT_HW_CACHE_RESULT_MISS << 16);

constexpr std::array<EventSpec, kEventCount> kEvents{{
    {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "perf:page-faults"},
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "perf:cycles"},
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "perf:instructions"},
    {PERF_TYPE_HW_CACHE, kDtlbReadMiss, "perf:dTLB-load-misses"},
    {PERF_TYPE_RAW, kWalkActive, "perf:dtlb_load_misses.walk_active"},
    {PERF_TYPE_RAW, kAddressAlias, "perf:ld_blocks_partial.address_alias"},
}};

bool is_intel() noexcept {
    unsigned a = 0, b = 0, c = 0, d = 0;
    __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0));
    return b == 0x756e6547 && d == 0x49656e69 && c == 0x6c65746e;  // "GenuineIntel"
}

}  // namespace

std::string_view to_string(Event e) noexcept {
    constexpr std::array<std::string_view, kEventCount> names{"page_faults", "cycles", "instructions",
                                                              "dtlb_load_misses", "page_walk_cycles",
                                                              "address_alias"};
    return names[static_cast<std::size_t>(e)];
}

EventCounters::EventCounters() noexcept {
    for (std::size_t i = 0; i < kEventCount; ++i) {
        if (kEvents[i].type == PERF_TYPE_RAW && !is_intel()) {
            fd_[i] = -1;
            why_[i] = "model-specific event of Intel CPUs; this CPU is not Intel";
            continue;
        }
        fd_[i] = open_event(kEvents[i].type, kEvents[i].config);
        if (fd_[i] < 0) why_[i] = std::string("perf_event_open: ") + std::strerror(errno);
    }
    // Page faults always have a source: getrusage when perf is refused.
    if (fd_[0] < 0) why_[0].clear();
}

EventCounters::~EventCounters() {
    for (int fd : fd_)
        if (fd >= 0) ::close(fd);
}

EventCounters::Values EventCounters::read() const noexcept {
    Values v{};
    for (std::size_t i = 0; i < kEventCount; ++i) {
        std::uint64_t x = 0;
        if (fd_[i] >= 0 && ::read(fd_[i], &x, sizeof x) == static_cast<ssize_t>(sizeof x)) v[i] = x;
    }
    if (!v[0]) v[0] = rusage_faults();
    return v;
}

bool EventCounters::available(Event e) const noexcept {
    return e == Event::page_faults || fd_[static_cast<std::size_t>(e)] >= 0;
}

std::string_view EventCounters::source(Event e) const noexcept {
    auto i = static_cast<std::size_t>(e);
    if (fd_[i] >= 0) return kEvents[i].source;
    return e == Event::page_faults ? "getrusage" : "";
}

const std::string& EventCounters::unavailable_reason(Event e) const noexcept {
    return why_[static_cast<std::size_t>(e)];
}

}  // namespace physmem
