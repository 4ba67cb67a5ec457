// physmem/array_life.hpp — a checked container's identity, readable after the container is
// gone: a word in a process-wide table whose memory is never given back, holding
// (generation << BlockTag::kDomainBits) | domain, the layout of a block's tag word.
//
// A container takes a word at construction (a generation no word had before) and gives it
// back at destruction (its generation goes up again), so an iterator that kept the word it
// saw finds it changed once its container is destroyed or moved from, without touching
// the container. Words are reused; generations never are (58 bits, one process-wide count).
// Thread safety: taking and giving back lock the table; reading a word is one atomic load.
#pragma once

#include <atomic>
#include <cstdint>

namespace physmem::detail {

class ArrayLife {
  public:
    ArrayLife();   // a word of a new generation, domain 0; throws std::bad_alloc
    ~ArrayLife();  // a new generation in the word (readers see a change), then the word back to the table
    ArrayLife(const ArrayLife&) = delete;
    ArrayLife& operator=(const ArrayLife&) = delete;

    const std::atomic<std::uint64_t>* word() const noexcept { return word_; }
    std::uint64_t load() const noexcept { return word_->load(std::memory_order_acquire); }
    // The domain bits changed, the generation kept. pre: d < 64.
    void set_domain(std::uint32_t d) noexcept;

  private:
    std::atomic<std::uint64_t>* word_;
};

}  // namespace physmem::detail
