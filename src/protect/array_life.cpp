// src/protect/array_life.cpp — ArrayLife's table: words in chunks allocated once and never
// freed (a container's iterators may read its word after the container, or static
// destruction, is over), a free list, and the process-wide generation count.
#include "physmem/array_life.hpp"

#include <memory>
#include <mutex>
#include <vector>

#include "physmem/pool.hpp"

namespace physmem::detail {

namespace {

struct LifeTable {
    static constexpr std::size_t kChunk = 1024;
    std::mutex mutex;
    std::vector<std::atomic<std::uint64_t>*> free;
    std::uint64_t generation = 0;  // the last one handed out
    std::size_t words = 0;         // in every chunk

    std::uint64_t next_word() { return ++generation << BlockTag::kDomainBits; }  // domain 0
    std::atomic<std::uint64_t>* take() {
        std::lock_guard lock(mutex);
        if (free.empty()) {
            free.reserve(words + kChunk);  // room for every word back at once; before the chunk: a throw leaks nothing
            auto* chunk = new std::atomic<std::uint64_t>[kChunk];  // never freed (see above)
            words += kChunk;
            for (std::size_t i = kChunk; i-- > 0;) free.push_back(&chunk[i]);
        }
        std::atomic<std::uint64_t>* w = free.back();
        free.pop_back();
        w->store(next_word(), std::memory_order_release);
        return w;
    }
    void give_back(std::atomic<std::uint64_t>* w) noexcept {
        std::lock_guard lock(mutex);
        w->store(next_word(), std::memory_order_release);
        free.push_back(w);  // capacity reserved when its chunk came: no allocation
    }
};

LifeTable& table() {
    static LifeTable* t = new LifeTable;  // never destroyed: words are read after static destruction
    return *t;
}

}  // namespace

ArrayLife::ArrayLife() : word_(table().take()) {}
ArrayLife::~ArrayLife() { table().give_back(word_); }

void ArrayLife::set_domain(std::uint32_t d) noexcept {
    std::uint64_t w = word_->load(std::memory_order_relaxed);
    word_->store((w & ~BlockTag::kDomainMask) | (d & BlockTag::kDomainMask), std::memory_order_release);
}

}  // namespace physmem::detail
