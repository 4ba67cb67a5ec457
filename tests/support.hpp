// tests/support.hpp — element types and helpers shared by the tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "physmem/pool.hpp"

namespace physmem_test {

// Under AddressSanitizer every first write to memory also faults in ASan's shadow pages,
// so page-fault counts say nothing about physmem there.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kShadowFaults = true;
#else
inline constexpr bool kShadowFaults = false;
#endif
#define PHYSMEM_SKIP_IF_SHADOW_FAULTS() \
    if (physmem_test::kShadowFaults) GTEST_SKIP() << "AddressSanitizer's shadow memory takes its own page faults"

// A non-trivial element: owns heap memory (so leaks show under ASan), counts live
// instances, and can be told to throw on the k-th construction.
struct Tracked {
    static inline long live = 0;
    static inline long throw_after = -1;  // constructions left before one throws; -1: never

    std::string text;
    std::int64_t value = 0;

    Tracked() : Tracked(0) {}
    Tracked(std::int64_t v) : text("value " + std::to_string(v) + " with a heap-allocated tail"), value(v) { born(); }
    Tracked(const Tracked& o) : text(o.text), value(o.value) { born(); }
    Tracked(Tracked&& o) noexcept : text(std::move(o.text)), value(o.value) { ++live; }
    Tracked& operator=(const Tracked&) = default;
    Tracked& operator=(Tracked&&) noexcept = default;
    ~Tracked() { --live; }
    friend bool operator==(const Tracked& a, const Tracked& b) { return a.value == b.value && a.text == b.text; }
    friend bool operator<(const Tracked& a, const Tracked& b) { return a.value < b.value; }

  private:
    void born() {
        if (throw_after == 0) throw std::runtime_error("Tracked: constructor told to throw");
        if (throw_after > 0) --throw_after;
        ++live;
    }
};

// The value stored at index i in comparisons against std::vector.
template <class T>
T value_at(std::size_t i) {
    return static_cast<T>(static_cast<std::int64_t>((i * 2654435761u) % 1000003) - 500000);
}
template <>
inline Tracked value_at<Tracked>(std::size_t i) {
    return Tracked(static_cast<std::int64_t>((i * 2654435761u) % 1000003));
}

// A pool of `capacity` bytes of `block_size` blocks on THP (4 KiB where THP is off);
// growth off, so exhaustion is observable.
inline physmem::PoolOptions pool_options(std::size_t block_size, std::size_t capacity) {
    return physmem::PoolOptions{.block_size = block_size, .capacity = capacity, .backing = physmem::Backing::thp};
}

}  // namespace physmem_test
