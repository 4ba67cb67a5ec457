// lab/kernels/alloc_workloads.hpp — the allocator workloads by name (the `workload`
// parameter of physmem_lab_alloc), each with the unit its ops count and what its
// verification compares. find() returns nullptr for an unknown name.
#pragma once

#include <string>
#include <string_view>

#include "alloc_richards.hpp"
#include "alloc_seed004.hpp"
#include "alloc_single.hpp"
#include "alloc_threads.hpp"

namespace lab::alloc {

struct Workload {
    std::string_view name;
    Outcome (*run)(const Params&);
    std::string_view unit;    // PROTOCOL.md unit of `ops`
    bool threaded;            // uses Params::threads
    std::string_view checks;  // what `ok` means, in words
};

inline Outcome scratch(const Params& p) { return cache_share(p, true); }
inline Outcome thrash(const Params& p) { return cache_share(p, false); }

inline const Workload kWorkloads[] = {
    {"larson", larson, "allocation", true, "every object freed (by another thread) held its bytes"},
    {"xmalloc", xmalloc, "allocation", true, "every object the consumer freed held the producer's bytes"},
    {"cache-scratch", scratch, "allocation", true, "every object held the last bytes its thread stored"},
    {"cache-thrash", thrash, "allocation", true, "every object held the last bytes its thread stored"},
    {"glibc-simple", glibc_simple, "allocation", false, "every block held its bytes until its FIFO/LIFO free"},
    {"glibc-thread", glibc_thread, "allocation", true, "every object held its bytes until freed"},
    {"idle-threads", idle_threads, "allocation", false, "every object held its bytes until freed"},
    {"small-churn", small_churn, "allocation", false, "every object held its bytes until freed"},
    {"malloc-large", malloc_large, "allocation", false, "every buffer held its first and last bytes until freed"},
    {"large-live", large_live, "allocation", false, "every block held its bytes until freed"},
    {"realloc-grow", realloc_grow, "call", false, "the buffer kept its first byte and every step's last byte"},
    {"linked-list", linked_list, "node", false, "every forward and backward walk summed 0..n-1"},
    {"kmeans", kmeans, "operation", true, "every point ended in its generating centre's cluster"},
    {"richards", richards_bench, "operation", true, "every run queued 23246 packets and held 9297 times"},
};

inline const Workload* find(std::string_view name) {
    for (const Workload& w : kWorkloads)
        if (w.name == name) return &w;
    return nullptr;
}

}  // namespace lab::alloc
