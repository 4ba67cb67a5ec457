// lab/experiments/device.cpp — the storage device's own limits, the bar of the paging suite
// (issue 30): what fio reads from a file in the directory the pagers use, with O_DIRECT.
//
//   physmem_lab_device --variant device-4k --size 64M --block-size 4K --param pattern=randread
//
// --size: the file (written once with O_DIRECT, fsynced, untimed: real blocks, no holes);
// --block-size: the request size (4K: one leaf of a GUPS-sized pager, 64K: a scan leaf).
// iomem: fio's buffers on 4 KiB pages (malloc) or on 2 MiB hugetlb pages (shmhuge; root
// reserves them for the run and restores the count after): on the development VM 64 KiB
// O_DIRECT reads ran at 1.3 GB/s into 4 KiB pages and 2.5 GB/s into huge pages (a request
// into a huge page is one segment for the device, not sixteen), the rate the paged array,
// whose frames are huge pages, reached.
// Params: pattern (randread | read), engine (io_uring | psync), depth (requests in flight:
// the pager's default queue depth, 128; psync runs one at a time), runtime-ms (each pass
// reads for that long, over the file again and again), dir (as the paging program's:
// $TMPDIR, else /var/tmp). One pass = one fio run; the record's timing is ns per request as fio times it (1e9 / its IOPS: fio's
// own start-up, about a quarter of a second, would swamp a wall-clock timing; --min-rep-ms
// is not used), the payload keeps fio's IOPS, bandwidth and latency of every pass. The variant's backing names no
// memory (fio's buffers are its own): device-4k only.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "context.hpp"
#include "fio.hpp"
#include "process.hpp"

namespace {

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_device",
    .experiment = "device",
    .unit = "read",
    .kinds = {lab::Kind::device},
    .default_block_size = 4 << 10,
    .params = {{"pattern", "randread", {"randread", "read"}, "fio's rw: random or sequential reads"},
               {"engine", "io_uring", {"io_uring", "psync"}, "fio's ioengine"},
               {"depth", "128", {}, "requests in flight (iodepth; psync: 1)"},
               {"runtime-ms", "300", {}, "ms each pass reads for (fio's time_based runtime)"},
               {"iomem", "malloc", {"malloc", "shmhuge"}, "fio's I/O buffers: 4 KiB pages, or 2 MiB hugetlb pages "
                                                           "(reserved for the run as root, restored after)"},
               {"dir", "", {}, "directory of the file (default $TMPDIR, else /var/tmp)"}},
    .only_backings = {{lab::Kind::device, {physmem::Backing::page_4k}}},
};

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const bool sync = s.param("engine") == "psync";
    const std::size_t depth = sync ? 1 : s.param_size("depth");
    const std::size_t runtime_ms = s.param_size("runtime-ms");
    if (depth < 1 || depth > 4096) lab::usage_error(kSpec, "--param depth: must be 1..4096");
    if (runtime_ms < 10 || runtime_ms > 600000) lab::usage_error(kSpec, "--param runtime-ms: must be 10..600000");
    if (s.block_size < 512 || s.block_size > s.size_bytes)
        lab::usage_error(kSpec, "--block-size: from 512 bytes to --size");
    std::unique_ptr<lab::fio::HugeBuffers> huge;
    if (s.param("iomem") == "shmhuge")
        huge = std::make_unique<lab::fio::HugeBuffers>(depth, s.block_size, kSpec.name);
    lab::fio::File file(lab::data_dir(s), s.size_bytes);
    ctx.set_elements(s.size_bytes / s.block_size);
    const lab::fio::Read spec{.pattern = s.param("pattern"), .engine = s.param("engine"), .depth = depth,
                              .block = s.block_size, .runtime_ms = runtime_ms, .iomem = s.param("iomem")};
    lab::Json passes = lab::Json::array();
    std::vector<double> ns;
    std::uint64_t requests = 0;
    bool ok = true;
    for (unsigned i = 0; i < s.warmup + s.reps; ++i) {
        lab::Json job = lab::fio::read(file, s.size_bytes, spec);
        ok = ok && lab::fio::ok(job);
        if (i < s.warmup) continue;
        lab::Json pass = lab::fio::summary(job);
        ns.push_back(1e9 / std::max(pass["iops"].get<double>(), 1e-9));
        requests = std::max<std::uint64_t>(requests, pass["io_bytes"].get<std::uint64_t>() / s.block_size);
        passes.push_back(std::move(pass));
    }
    ctx.reported_timing(ns, std::max<std::uint64_t>(requests, 1), s.warmup,
                        "fio's own: 1e9 / its IOPS per pass (its start-up, ~0.25 s, left out)");
    ctx.set_field("device", {{"pattern", s.param("pattern")}, {"engine", s.param("engine")}, {"depth", depth},
                             {"block_bytes", s.block_size}, {"file_bytes", s.size_bytes}, {"dir", lab::data_dir(s)},
                             {"direct", true}, {"fio", lab::process::version_of(lab::fio::path())}, {"iomem", s.param("iomem")},
                             {"huge_pages_reserved", huge ? huge->json() : lab::Json(nullptr)}, {"passes", passes}});
    ctx.checksum(s.size_bytes / s.block_size);
    ctx.verify(ok, "every fio pass read with O_DIRECT and reported no error");
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
