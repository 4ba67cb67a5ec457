// lab/common/first_touch.cpp — first_touch_probe (first_touch.hpp).
#include "first_touch.hpp"

#include <chrono>
#include <new>
#include <stdexcept>
#include <string>

#include "physmem/region.hpp"

namespace lab {

namespace {

// A first touch of a fresh region of `bytes` on THP: one byte written a 4 KiB page.
struct Touch {
    double gb_s;          // bytes touched per second, in GB
    std::string backing;  // what the region got
};
Touch touch(std::size_t bytes) {
    physmem::Region r({.bytes = bytes, .alignment = std::size_t{2} << 20, .backing = physmem::Backing::thp});
    volatile std::byte* p = r.data();
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t at = 0; at < r.size(); at += 4096) p[at] = std::byte{1};
    const std::chrono::duration<double> s = std::chrono::steady_clock::now() - t0;
    return {double(r.size()) / s.count() / 1e9, std::string(physmem::to_string(r.backing()))};
}

}  // namespace

nlohmann::ordered_json first_touch_probe(std::size_t bytes) {
    try {
        const Touch first = touch(bytes);  // its region unmapped on return
        const Touch again = touch(bytes);
        return {{"bytes", bytes}, {"backing", first.backing}, {"first_gb_s", first.gb_s}, {"again_gb_s", again.gb_s}};
    } catch (const std::bad_alloc&) {
        return {{"error", "cannot map " + std::to_string(bytes >> 20) + " MiB"}};
    } catch (const std::exception& e) {
        return {{"error", e.what()}};
    }
}

}  // namespace lab
