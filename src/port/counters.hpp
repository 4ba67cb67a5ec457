// src/port/counters.hpp — software and hardware event counters, with a fallback (the port's
// perf_event_open and getrusage, for the lab, tests and demo; not installed API;
// implemented in counters.cpp, target physmem_counters).
//
// This machine kind has no PMU (perf reports hardware events as unsupported), so
// physmem counts what it can in software and says which source it used.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
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

// The events the lab counts around a measured region, software and hardware.
enum class Event { page_faults, cycles, instructions, dtlb_load_misses, page_walk_cycles, address_alias };
inline constexpr std::size_t kEventCount = 6;
// "page_faults", "cycles", "instructions", "dtlb_load_misses", "page_walk_cycles",
// "address_alias".
std::string_view to_string(Event e) noexcept;

// A set of per-thread event counters, each opened independently with perf_event_open
// (user space only). Events this machine cannot count are reported unavailable with the
// reason (errno text) instead of failing: on a VM without a PMU only page_faults opens,
// and page_faults falls back to getrusage when perf is refused. page_walk_cycles is the
// Intel event DTLB_LOAD_MISSES.WALK_ACTIVE (Skylake and later) and address_alias Intel's
// LD_BLOCKS_PARTIAL.ADDRESS_ALIAS (loads blocked by a store whose address matches in the
// low 12 bits: seed 002's 4K-aliasing event), so both are unavailable on other CPUs.
// Read from the thread that created it.
class EventCounters {
  public:
    EventCounters() noexcept;
    ~EventCounters();
    EventCounters(const EventCounters&) = delete;
    EventCounters& operator=(const EventCounters&) = delete;

    using Values = std::array<std::optional<std::uint64_t>, kEventCount>;
    // Current counts, nullopt for unavailable events. Differences of two reads count
    // the region between them.
    Values read() const noexcept;
    bool available(Event e) const noexcept;
    // "perf:<event>", "getrusage" or "" when unavailable.
    std::string_view source(Event e) const noexcept;
    // Why an event is unavailable ("" when it is available).
    const std::string& unavailable_reason(Event e) const noexcept;

  private:
    std::array<int, kEventCount> fd_{};
    std::array<std::string, kEventCount> why_{};
};

}  // namespace physmem
