// src/malloc/transfer.hpp — the transfer cache of one size class (TCMalloc's).
//
// A full batch spilled by one thread's cache waits here, as a list, for the next refill of
// the class, which takes it whole: a producer/consumer pair moves objects in O(1) per
// batch instead of visiting each object's span. The objects stay tagged free; their span
// bitmap bits stay 0 as for objects in a thread cache. A batch entering it skips the
// spans, so central_push walks it first (check_batch, misuse.cpp).
//
// Part of a class's central list (Central, central.cpp): every operation runs under that
// class's lock. Inline: take and put run once per batch inside central_pop/central_push,
// as they did before the split. No allocation.
#pragma once

#include <cstdint>

#pragma GCC visibility push(hidden)

namespace physmem::malloc {

constexpr unsigned kTransfer = 8;

struct TransferCache {
    unsigned ntransfer;             // batches in transfer[0..ntransfer)
    void* transfer[kTransfer];      // list heads (linked through the first word)
    std::uint32_t tcount[kTransfer];

    // The last batch parked when it holds at most n objects: its count
    // (> 1: only full batches are parked), head set; else 0.
    std::uint32_t take(std::uint32_t n, void*& head) noexcept {
        if (ntransfer == 0 || tcount[ntransfer - 1] > n) return 0;
        --ntransfer;
        head = transfer[ntransfer];
        return tcount[ntransfer];
    }
    bool full() const noexcept { return ntransfer >= kTransfer; }
    // pre: !full(). Parks the list head (n > 1 objects, null-terminated).
    void put(void* head, std::uint32_t n) noexcept {
        transfer[ntransfer] = head;
        tcount[ntransfer++] = n;
    }
};

}  // namespace physmem::malloc

#pragma GCC visibility pop
