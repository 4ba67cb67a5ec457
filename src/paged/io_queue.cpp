// src/paged/io_queue.cpp — see io_queue.hpp.
#include "paged/io_queue.hpp"
#include "paged/scratch.hpp"

#include <algorithm>
#include <cstring>

namespace physmem::detail {

IoQueue::IoQueue(int fd, PagingIo mode, unsigned depth, const std::string& file)
    : fd_(fd), depth_(std::max(1u, depth)) {
    reserve_touched(ready_, 4096);
    if (mode == PagingIo::sync) return;
    int error = 0;
    ring_ = os::ring_open(depth_, &error);
    if (!ring_ && mode == PagingIo::uring)
        throw PagingError("physmem::PagedArray: io_uring unavailable for " + file + ": " + std::strerror(error),
                          error);
    if (!ring_) return;
    requests_.resize(depth_);
    for (std::uint32_t s = depth_; s-- > 0;) free_.push_back(s);
}

IoQueue::~IoQueue() {
    std::vector<os::IoDone> rest;
    while (in_flight_) collect(in_flight_, rest);
    os::ring_close(ring_);
}

long IoQueue::finish(const Request& r, long result) const noexcept {
    if (result < 0 || static_cast<std::size_t>(result) >= r.n) return result;
    char* rest = static_cast<char*>(r.buf) + result;
    std::size_t left = r.n - static_cast<std::size_t>(result);
    long more = r.write ? os::write_at(fd_, rest, left, r.off + result) : os::read_at(fd_, rest, left, r.off + result);
    return more < 0 ? more : result + more;
}

void IoQueue::queue(bool write, void* buf, std::size_t n, std::uint64_t off, std::uint64_t tag) {
    Request r{tag, buf, n, off, write};
    if (!ring_) {
        ready_.push_back({tag, finish(r, 0)});
        return;
    }
    if (free_.empty()) {
        os::ring_submit(ring_, 1);
        reap(ready_);
    }
    std::uint32_t slot = free_.back();
    free_.pop_back();
    requests_[slot] = r;
    if (!os::ring_queue(ring_, write, fd_, buf, n, off, slot)) {  // the ring is as deep as depth_
        os::ring_submit(ring_, 0);
        os::ring_queue(ring_, write, fd_, buf, n, off, slot);
    }
    ++in_flight_;
}

void IoQueue::reap(std::vector<os::IoDone>& out) {
    os::IoDone done[64];
    while (unsigned got = os::ring_reap(ring_, done, 64)) {
        for (unsigned i = 0; i < got; ++i) {
            auto slot = static_cast<std::uint32_t>(done[i].tag);
            const Request& r = requests_[slot];
            out.push_back({r.tag, finish(r, done[i].result)});
            free_.push_back(slot);
            --in_flight_;
        }
    }
}

void IoQueue::collect(std::size_t min, std::vector<os::IoDone>& out) {
    std::size_t have = ready_.size();
    out.insert(out.end(), ready_.begin(), ready_.end());
    ready_.clear();
    if (!ring_) return;
    std::size_t before = out.size();
    os::ring_submit(ring_, 0);
    reap(out);
    while (have + (out.size() - before) < min && in_flight_) {
        os::ring_submit(ring_, 1);
        reap(out);
    }
}

}  // namespace physmem::detail
