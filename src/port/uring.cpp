// src/port/uring.cpp — io_uring through liburing (see os.hpp).
#include <liburing.h>

#include <cerrno>
#include <new>

#include "port/os.hpp"

namespace physmem::os {

struct Ring {
    io_uring ring;
};

Ring* ring_open(unsigned entries, int* error) noexcept {
    Ring* r = new (std::nothrow) Ring;
    if (!r) {
        *error = ENOMEM;
        return nullptr;
    }
    int e = io_uring_queue_init(entries, &r->ring, 0);
    if (e < 0) {
        delete r;
        *error = -e;
        return nullptr;
    }
    return r;
}

void ring_close(Ring* r) noexcept {
    if (!r) return;
    io_uring_queue_exit(&r->ring);
    delete r;
}

bool ring_queue(Ring* r, bool write, int fd, void* buf, std::size_t n, std::uint64_t off,
                std::uint64_t tag) noexcept {
    io_uring_sqe* sqe = io_uring_get_sqe(&r->ring);
    if (!sqe) return false;
    if (write) io_uring_prep_write(sqe, fd, buf, static_cast<unsigned>(n), off);
    else io_uring_prep_read(sqe, fd, buf, static_cast<unsigned>(n), off);
    io_uring_sqe_set_data64(sqe, tag);
    return true;
}

int ring_submit(Ring* r, unsigned wait) noexcept {
    for (;;) {
        int e = wait ? io_uring_submit_and_wait(&r->ring, wait) : io_uring_submit(&r->ring);
        if (e >= 0) return 0;
        if (e != -EINTR) return -e;
    }
}

unsigned ring_reap(Ring* r, IoDone* out, unsigned max) noexcept {
    io_uring_cqe* cqe;
    unsigned n = 0;
    while (n < max && io_uring_peek_cqe(&r->ring, &cqe) == 0) {
        out[n++] = {io_uring_cqe_get_data64(cqe), static_cast<long>(cqe->res)};
        io_uring_cqe_seen(&r->ring, cqe);
    }
    return n;
}

}  // namespace physmem::os
