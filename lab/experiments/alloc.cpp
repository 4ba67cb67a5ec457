// lab/experiments/alloc.cpp — the allocator suite's program: one workload of
// lab/kernels/alloc_workloads.hpp under one malloc, timed, with the heap's peak RSS and
// its share on huge pages.
//
//   physmem_lab_alloc --variant malloc-thp --size 64M --param alloc=physmem --param workload=larson
//
// Variant malloc-B, B = what the heap is asked to live on:
//   alloc=physmem      libphysmem.so preloaded with PHYSMEM_MALLOC_BACKING=B (4k, thp, 2m, 1g)
//   alloc=glibc|jemalloc|tcmalloc|mimalloc   the allocator's own defaults, untouched (no
//                      environment set): malloc-4k only — none of them asks for huge
//                      pages by default, and THP is madvise-only here; the record's
//                      thp_mode and heap figures say what the kernel actually gave.
// --size: the workload's heap / working set (each workload's comment says how it reads it).
// Timed: one whole workload run per pass (set-up included: allocation is the subject).
// Before timing, one untimed run gives the reference checksum and op count; every timed
// pass must reproduce the checksum and pass its own checks. At the workload's peak (the
// live heap at its largest) /proc/self/smaps_rollup is sampled; the record's "alloc"
// field keeps the largest sample, VmHWM after the last pass and each repetition's time
// per pass (ms). The record's unit is the workload's (allocation, node or operation).
#include <cstdlib>
#include <fstream>
#include <string>

#include "context.hpp"
#include "kernels/alloc_procfs.hpp"
#include "kernels/alloc_workloads.hpp"
#include "preload.hpp"

namespace {

namespace A = lab::alloc;

std::vector<std::string> workload_names() {
    std::vector<std::string> v;
    for (const A::Workload& w : A::kWorkloads) v.emplace_back(w.name);
    return v;
}

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_alloc",
    .experiment = "alloc",
    .unit = "allocation",
    .kinds = {lab::Kind::malloc},
    .default_block_size = 64 << 10,
    .params = {{"alloc", "glibc", {"glibc", "physmem", "jemalloc", "tcmalloc", "mimalloc"}, "which malloc serves the process"},
               {"workload", "larson", workload_names(), "which allocation workload runs"},
               {"threads", "2", {}, "threads of the multi-threaded workloads (>= 1)"}},
};

// Makes the asked-for allocator the process's malloc (may re-exec); returns its name as
// active() reports it.
std::string choose_allocator(const lab::Settings& s) {
    const std::string& a = s.param("alloc");
    if (a != "physmem" && s.backing != physmem::Backing::page_4k)
        lab::usage_error(kSpec, "--variant: " + a + " runs on its own defaults: malloc-4k only");
    if (a == "physmem") ::setenv("PHYSMEM_MALLOC_BACKING", std::string(physmem::to_string(s.backing)).c_str(), 1);
    lab::preload::ensure(a);
    return lab::preload::active();
}

std::string thp_mode() {
    std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string line;
    std::getline(in, line);
    auto l = line.find('['), r = line.find(']');
    return l == std::string::npos || r == std::string::npos ? "unknown" : line.substr(l + 1, r - l - 1);
}

lab::Json heap_json(const A::procfs::Heap& h) {
    return {{"anon_bytes", h.anon}, {"thp_bytes", h.thp}, {"hugetlb_bytes", h.hugetlb},
            {"huge_share", h.huge_share()}};
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const std::string active = choose_allocator(s);
    const A::Workload* w = A::find(s.param("workload"));
    const std::size_t threads = s.param_size("threads");
    if (threads < 1 || threads > 256) lab::usage_error(kSpec, "--param threads: must be 1..256");
    A::procfs::Heap at_peak;
    A::Params p{.size = s.size_bytes, .threads = static_cast<unsigned>(w->threaded ? threads : 1), .seed = s.seed,
                .peak = [&] {
                    auto h = A::procfs::heap_now();
                    if (h.total() >= at_peak.total()) at_peak = h;
                }};
    const A::Outcome ref = w->run(p);
    bool ok = ref.ok;
    ctx.set_elements(std::max<std::uint64_t>(ref.ops, 1));
    const lab::Timing t = ctx.measure(std::max<std::uint64_t>(ref.ops, 1), [&] {
        A::Outcome o = w->run(p);
        ok = ok && o.ok && o.checksum == ref.checksum && o.ops == ref.ops;
        return o.checksum;
    });
    ctx.set_param("threads", p.threads);
    ctx.set_field("unit", std::string(w->unit));
    lab::Json ms = lab::Json::array();
    for (double ns : t.ns_per_op) ms.push_back(ns * double(t.ops_per_pass) / 1e6);
    ctx.set_field("alloc", {{"allocator", s.param("alloc")}, {"active", active}, {"workload", w->name},
                            {"threads", p.threads}, {"thp_mode", thp_mode()},
                            {"physmem_backing", s.param("alloc") == "physmem" ? std::getenv("PHYSMEM_MALLOC_BACKING") : ""},
                            {"ms_per_pass", ms}, {"peak_rss_bytes", A::procfs::peak_rss()},
                            {"heap_at_peak", heap_json(at_peak)}});
    if (active != s.param("alloc")) ctx.note("asked for " + s.param("alloc") + " but malloc is served by " + active);
    ctx.checksum(ref.checksum);
    ctx.verify(ok && active == s.param("alloc"),
               std::string(w->checks) + "; every timed pass repeated the first run's checksum; malloc served by " + active);
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
