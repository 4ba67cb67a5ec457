// physmem/counters.hpp — software and hardware event counters, with a fallback.
//
// This machine kind has no PMU (perf reports hardware events as unsupported), so
// physmem counts what it can in software and says which source it used.
#pragma once

#include <cstdint>
#include <string_view>

namespace physmem {

// Page faults taken by the calling thread. Uses perf_event_open(PERF_COUNT_SW_PAGE_FAULTS)
// when allowed, else getrusage(RUSAGE_THREAD) minor + major faults. The two differ in
// one respect: perf counts only faults the hardware raised, rusage also counts pages
// the kernel populated on the thread's behalf (MAP_POPULATE, MADV_POPULATE_WRITE).
// Not thread-safe; read from the thread that created it.
class PageFaultCounter {
  public:
    PageFaultCounter() noexcept;
    ~PageFaultCounter();
    PageFaultCounter(const PageFaultCounter&) = delete;
    PageFaultCounter& operator=(const PageFaultCounter&) = delete;

    std::uint64_t read() const noexcept;
    // "perf:page-faults" or "getrusage".
    std::string_view source() const noexcept;

  private:
    int fd_ = -1;
};

// true when a hardware event (CPU cycles) can be counted for this process.
bool hardware_counters_available() noexcept;

}  // namespace physmem
