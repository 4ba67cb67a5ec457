// src/paged/io_queue.hpp — batched reads and writes of a pager's file: io_uring when the
// kernel allows it, else pread/pwrite done at once (see os.hpp for the calls).
//
// Contract: queue() starts a transfer of exactly n bytes (or waits for room when
// `depth` are in flight); collect() hands back finished ones as (tag, result): result is
// n, fewer bytes (a read past the end of the file), or -errno. A transfer the kernel
// finished only in part is completed with pread/pwrite so that its result is one of those.
// Not thread-safe: the pager's mutex guards it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "physmem/pager.hpp"
#include "port/os.hpp"

namespace physmem::detail {

class IoQueue {
  public:
    // Throws PagingError when mode is uring and io_uring cannot be set up.
    IoQueue(int fd, PagingIo mode, unsigned depth, const std::string& file);
    ~IoQueue();
    IoQueue(const IoQueue&) = delete;
    IoQueue& operator=(const IoQueue&) = delete;

    const char* name() const noexcept { return ring_ ? "io_uring" : "pread"; }
    void queue(bool write, void* buf, std::size_t n, std::uint64_t off, std::uint64_t tag);
    // Submits what is queued, waits until `min` transfers (at most those in flight or
    // ready) have finished, and appends every finished one to out.
    void collect(std::size_t min, std::vector<os::IoDone>& out);
    std::size_t in_flight() const noexcept { return in_flight_; }

  private:
    struct Request {
        std::uint64_t tag;
        void* buf;
        std::size_t n;
        std::uint64_t off;
        bool write;
    };
    long finish(const Request& r, long result) const noexcept;
    void reap(std::vector<os::IoDone>& out);

    os::Ring* ring_ = nullptr;
    int fd_;
    unsigned depth_;
    std::vector<Request> requests_;    // by slot (the ring's tag)
    std::vector<std::uint32_t> free_;  // free slots
    std::vector<os::IoDone> ready_;    // finished, not yet collected
    std::size_t in_flight_ = 0;
};

}  // namespace physmem::detail
