// lab/kernels/alloc_richards.hpp — Martin Richards' task-scheduler benchmark (seed 004's
// macro benchmark), written from its published description: six tasks (idle, work, two
// handlers, two devices) pass ten packets; tasks and packets come from malloc and go
// back after each run. Reference: with Count = 10000 a run queues 23246 packets and
// holds a task 9297 times (the benchmark's own check).
#pragma once

#include <atomic>
#include <utility>

#include "alloc_common.hpp"

namespace lab::alloc::richards {

constexpr long kCount = 10000, kQpktWant = 23246, kHoldWant = 9297;
enum : int { kIdle = 1, kWork, kHandlerA, kHandlerB, kDevA, kDevB };
enum : int { kPktBit = 1, kWaitBit = 2, kHoldBit = 4 };
enum : int { kRun = 0, kRunPkt = 1, kWait = 2, kWaitPkt = 3 };
enum : int { kDevKind = 1000, kWorkKind = 1001 };
constexpr int kBufSize = 3;

struct Packet {
    Packet* link;
    int id, kind, a1;
    char a2[kBufSize + 1];
};
struct Task;
struct Sched;
using Fn = Task* (*)(Sched&, Packet*);
struct Task {
    Task* link;
    int id, pri;
    Packet* wkq;
    int state;
    Fn fn;
    std::intptr_t v1, v2;  // counters, or packet lists for the handlers
};

struct Sched {
    Task* tab[kDevB + 1] = {};
    Task *list = nullptr, *tcb = nullptr;
    int taskid = 0;
    std::intptr_t v1 = 0, v2 = 0;
    long qpkt = 0, hold = 0;

    Task* wait() { tcb->state |= kWaitBit; return tcb; }
    Task* holdself() { ++hold; tcb->state |= kHoldBit; return tcb->link; }
    Task* release(int id) {
        Task* t = tab[id];
        t->state &= ~kHoldBit;
        return t->pri > tcb->pri ? t : tcb;
    }
    static void append(Packet* pk, Packet** at) {
        pk->link = nullptr;
        while (*at) at = &(*at)->link;
        *at = pk;
    }
    Task* qpkt_to(Packet* pk) {
        Task* t = tab[pk->id];
        ++qpkt;
        pk->link = nullptr, pk->id = taskid;
        if (!t->wkq) {
            t->wkq = pk, t->state |= kPktBit;
            if (t->pri > tcb->pri) return t;
        } else {
            append(pk, &t->wkq);
        }
        return tcb;
    }
    void schedule() {
        while (tcb) {
            Packet* pk = nullptr;
            switch (tcb->state) {
                case kWaitPkt:
                    pk = tcb->wkq, tcb->wkq = pk->link, tcb->state = tcb->wkq ? kRunPkt : kRun;
                    [[fallthrough]];
                case kRun:
                case kRunPkt: {
                    taskid = tcb->id, v1 = tcb->v1, v2 = tcb->v2;
                    Task* next = tcb->fn(*this, pk);
                    tcb->v1 = v1, tcb->v2 = v2, tcb = next;
                    break;
                }
                default: tcb = tcb->link;
            }
        }
    }
};

inline Packet*& as_list(std::intptr_t& v) { return reinterpret_cast<Packet*&>(v); }

inline Task* idle_fn(Sched& s, Packet*) {
    if (--s.v2 == 0) return s.holdself();
    if ((s.v1 & 1) == 0) return s.v1 = (s.v1 >> 1) & 0x7fffffff, s.release(kDevA);
    s.v1 = ((s.v1 >> 1) & 0x7fffffff) ^ 0xd008;
    return s.release(kDevB);
}
inline Task* work_fn(Sched& s, Packet* pk) {
    static const char alphabet[] = "0ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    if (!pk) return s.wait();
    s.v1 = kHandlerA + kHandlerB - s.v1;
    pk->id = static_cast<int>(s.v1), pk->a1 = 0;
    for (int i = 0; i <= kBufSize; ++i) {
        if (++s.v2 > 26) s.v2 = 1;
        pk->a2[i] = alphabet[s.v2];
    }
    return s.qpkt_to(pk);
}
inline Task* handler_fn(Sched& s, Packet* pk) {
    if (pk) Sched::append(pk, pk->kind == kWorkKind ? &as_list(s.v1) : &as_list(s.v2));
    if (Packet* work = as_list(s.v1)) {
        int count = work->a1;
        if (count > kBufSize) return as_list(s.v1) = work->link, s.qpkt_to(work);
        if (Packet* dev = as_list(s.v2)) {
            as_list(s.v2) = dev->link;
            dev->a1 = work->a2[count], work->a1 = count + 1;
            return s.qpkt_to(dev);
        }
    }
    return s.wait();
}
inline Task* dev_fn(Sched& s, Packet* pk) {
    if (!pk) {
        if (!s.v1) return s.wait();
        Packet* q = as_list(s.v1);
        s.v1 = 0;
        return s.qpkt_to(q);
    }
    as_list(s.v1) = pk;
    return s.holdself();
}

// One run with `count` idle iterations; returns (queued packets, holds). Frees all it
// allocated.
inline std::pair<long, long> run(long count) {
    Sched s;
    std::vector<void*> owned;
    auto task = [&](int id, int pri, Packet* wkq, int state, Fn fn, std::intptr_t v1, std::intptr_t v2) {
        auto* t = static_cast<Task*>(get(sizeof(Task)));
        *t = Task{s.list, id, pri, wkq, state, fn, v1, v2};
        s.tab[id] = t, s.list = t, owned.push_back(t);
    };
    auto pkt = [&](Packet* link, int id, int kind) {
        auto* p = static_cast<Packet*>(get(sizeof(Packet)));
        *p = Packet{link, id, kind, 0, {}};
        owned.push_back(p);
        return p;
    };
    task(kIdle, 0, nullptr, kRun, idle_fn, 1, count);
    task(kWork, 1000, pkt(pkt(nullptr, 0, kWorkKind), 0, kWorkKind), kWaitPkt, work_fn, kHandlerA, 0);
    task(kHandlerA, 2000, pkt(pkt(pkt(nullptr, kDevA, kDevKind), kDevA, kDevKind), kDevA, kDevKind), kWaitPkt,
         handler_fn, 0, 0);
    task(kHandlerB, 3000, pkt(pkt(pkt(nullptr, kDevB, kDevKind), kDevB, kDevKind), kDevB, kDevKind), kWaitPkt,
         handler_fn, 0, 0);
    task(kDevA, 4000, nullptr, kWait, dev_fn, 0, 0);
    task(kDevB, 5000, nullptr, kWait, dev_fn, 0, 0);
    s.tcb = s.list;
    s.schedule();
    for (void* p : owned) std::free(p);
    return {s.qpkt, s.hold};
}

}  // namespace lab::alloc::richards

namespace lab::alloc {

// richards: every thread runs the benchmark (Count = 10000) max(1, size / 64 KiB) times.
// The heap is tiny (16 objects per run): this is seed 004's "does the allocator's
// placement matter to a compute-bound program" case. ops = packets queued.
inline Outcome richards_bench(const Params& p) {
    const std::size_t runs = std::max<std::size_t>(1, p.size >> 16);
    std::atomic<std::uint64_t> ops{0};
    std::atomic<bool> ok{true};
    p.peak();
    on_threads(p.threads, [&](unsigned) {
        for (std::size_t r = 0; r < runs; ++r) {
            auto [q, h] = richards::run(richards::kCount);
            ops += q;
            if (q != richards::kQpktWant || h != richards::kHoldWant) ok = false;
        }
    });
    return {ops.load(), ops.load(), ok.load()};
}

}  // namespace lab::alloc
