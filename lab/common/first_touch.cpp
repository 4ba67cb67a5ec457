// lab/common/first_touch.cpp — first_touch_probe (first_touch.hpp).
#include "first_touch.hpp"

#include <chrono>
#include <new>
#include <stdexcept>
#include <string>

#include "physmem/region.hpp"

namespace lab {

namespace {

// GB/s of writing one byte a 4 KiB page into a fresh region of `bytes` on THP; the
// backing the region got in `backing`.
double touch_rate(std::size_t bytes, std::string& backing) {
    physmem::Region r({.bytes = bytes, .alignment = std::size_t{2} << 20, .backing = physmem::Backing::thp});
    backing = std::string(physmem::to_string(r.backing()));
    volatile std::byte* p = r.data();
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t at = 0; at < r.size(); at += 4096) p[at] = std::byte{1};
    const std::chrono::duration<double> s = std::chrono::steady_clock::now() - t0;
    return double(r.size()) / s.count() / 1e9;
}

}  // namespace

nlohmann::ordered_json first_touch_probe(std::size_t bytes) {
    try {
        std::string backing, again_backing;
        const double first = touch_rate(bytes, backing);  // its region unmapped on return
        const double again = touch_rate(bytes, again_backing);
        return {{"bytes", bytes}, {"backing", backing}, {"first_gb_s", first}, {"again_gb_s", again}};
    } catch (const std::bad_alloc&) {
        return {{"error", "cannot map " + std::to_string(bytes >> 20) + " MiB"}};
    } catch (const std::exception& e) {
        return {{"error", e.what()}};
    }
}

}  // namespace lab
