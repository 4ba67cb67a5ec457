// lab/common/first_touch.hpp — what a first touch of memory costs on this machine, in two
// states of the system's free memory (part of every program's --probe).
//
// A guest whose hypervisor reclaims the memory it frees (virtio-balloon free-page
// reporting: blocks of 2 MiB and more, some seconds after they are freed) pays for the
// host's backing again at the next first touch — in the lab's runs 0.5-0.7 GB/s against
// 14 GB/s for pages freed a moment before (PROTOCOL.md, "Memory history"). Where a timed
// region grows a heap or fills new arrays, that cost lands in the timing, and it lands
// on whichever side draws reclaimed blocks (a heap on huge pages draws 2 MiB blocks, the
// ones reported).
#pragma once

#include <cstddef>

#include <nlohmann/json.hpp>

namespace lab {

// One byte written per 4 KiB page of a fresh `bytes` mapping on THP, twice: "first" in
// whatever state the system's free memory is in, "again" right after the first mapping
// was unmapped (its pages just freed, so most of them come back). Returns {"bytes",
// "backing" (what the first mapping got), "first_gb_s", "again_gb_s"}, or {"error": why}
// when the memory cannot be mapped. Takes about bytes / (0.5 GB/s) at worst.
nlohmann::ordered_json first_touch_probe(std::size_t bytes = std::size_t{64} << 20);

}  // namespace lab
