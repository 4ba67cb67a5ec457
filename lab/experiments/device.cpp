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
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>

#include "context.hpp"
#include "core/hugepages.hpp"
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

std::string fio_path() {
    std::string p = lab::process::find_on_path("fio");
    if (p.empty()) throw physmem::backing_unavailable("fio not installed (apt-get install fio)");
    return p;
}

// Runs fio with `args` (plus the output format); returns its JSON report's first job.
lab::Json fio(const std::vector<std::string>& args) {
    const std::string exe = fio_path();
    std::vector<std::string> argv{exe, "--output-format=json", "--name=physmem-lab"};
    argv.insert(argv.end(), args.begin(), args.end());
    lab::process::ChildResult r = lab::process::run_child(exe, argv, {"PATH=/usr/bin:/bin"});
    std::size_t at = r.out.find('{');
    lab::Json j = at == std::string::npos ? lab::Json() : lab::Json::parse(r.out.substr(at), nullptr, false);
    if (r.exit_code != 0 || j.is_discarded() || !j.contains("jobs") || j["jobs"].empty())
        throw std::runtime_error("fio ended with " + r.status + ": " + r.out.substr(0, 300));
    return j["jobs"][0];
}

// The file: written once with O_DIRECT and fsynced, then unlinked while held open, so that
// nothing is left behind however the program ends; fio reads it through /proc/self/fd (its
// own open, with O_DIRECT, of the same inode).
struct File {
    std::string path;
    int fd = -1;
    File(const std::string& dir, std::size_t bytes) {
        const std::string name = dir + "/physmem-lab-device-" + std::to_string(::getpid());
        try {
            fio({"--filename=" + name, "--rw=write", "--bs=1M", "--direct=1", "--ioengine=psync",
                 "--size=" + std::to_string(bytes), "--end_fsync=1"});
        } catch (const std::runtime_error& e) {
            ::unlink(name.c_str());
            throw physmem::backing_unavailable(std::string("cannot write the file with O_DIRECT in ") + dir + ": " + e.what());
        }
        fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
        ::unlink(name.c_str());
        if (fd < 0) throw std::runtime_error("cannot open " + name);
        path = "/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(fd);
    }
    ~File() { ::close(fd); }
    File(const File&) = delete;
    File& operator=(const File&) = delete;
};

// The 2 MiB hugetlb pages fio's buffers need with iomem=shmhuge (depth requests of `block`
// bytes, twice over and two pages more: fio asks for more than the buffers), made available for the run and given back after: a system
// setting, changed only for this and said on stderr and in the record.
struct HugeBuffers {
    physmem::core::HugeReservation r;
    HugeBuffers(std::size_t depth, std::size_t block) {
        const std::size_t page = std::size_t{2} << 20;
        const long need = static_cast<long>(2 * ((depth * block + page - 1) / page) + 2);  // fio rounds up too
        if (physmem::available_huge_pages(page) >= need) return;
        r = physmem::core::make_available(page, need);
        if (physmem::available_huge_pages(page) < need)
            throw physmem::backing_unavailable("fio's buffers need " + std::to_string(need) +
                                               " free 2 MiB hugetlb pages (root reserves them for the run)");
        if (r.changed())
            std::fprintf(stderr, "physmem_lab_device: nr_hugepages (2 MiB) %ld -> %ld for fio's buffers\n", r.before, r.after);
    }
    ~HugeBuffers() {
        physmem::core::Restored b = physmem::core::restore_huge_pages(r, physmem::core::Restore::remove_added);
        if (r.changed()) std::fprintf(stderr, "physmem_lab_device: nr_hugepages (2 MiB) restored to %ld\n", b.now);
    }
    HugeBuffers(const HugeBuffers&) = delete;
    HugeBuffers& operator=(const HugeBuffers&) = delete;
    lab::Json json() const {
        return r.changed() ? lab::Json{{"before", r.before}, {"after", r.after}} : lab::Json(nullptr);
    }
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
    std::unique_ptr<HugeBuffers> huge;
    if (s.param("iomem") == "shmhuge") huge = std::make_unique<HugeBuffers>(depth, s.block_size);
    File file(lab::data_dir(s), s.size_bytes);
    ctx.set_elements(s.size_bytes / s.block_size);
    lab::Json passes = lab::Json::array();
    std::vector<double> ns;
    std::uint64_t requests = 0;
    bool ok = true;
    for (unsigned i = 0; i < s.warmup + s.reps; ++i) {
        lab::Json job = fio({"--filename=" + file.path, "--rw=" + s.param("pattern"), "--bs=" + std::to_string(s.block_size),
                             "--direct=1", "--ioengine=" + s.param("engine"), "--iodepth=" + std::to_string(depth),
                             "--size=" + std::to_string(s.size_bytes), "--time_based",
                             "--runtime=" + std::to_string(runtime_ms) + "ms", "--norandommap", "--randrepeat=0",
                             "--iomem=" + s.param("iomem")});
        const lab::Json& rd = job["read"];
        ok = ok && job["error"].get<int>() == 0 && rd["iops"].get<double>() > 0 && rd["io_bytes"].get<std::uint64_t>() > 0;
        if (i < s.warmup) continue;
        ns.push_back(1e9 / std::max(rd["iops"].get<double>(), 1e-9));
        requests = std::max<std::uint64_t>(requests, rd["io_bytes"].get<std::uint64_t>() / s.block_size);
        passes.push_back({{"iops", rd["iops"]}, {"bw_bytes", rd["bw_bytes"]}, {"io_bytes", rd["io_bytes"]},
                          {"runtime_ms", rd["runtime"]}, {"lat_mean_ns", rd["lat_ns"]["mean"]}});
    }
    ctx.reported_timing(ns, std::max<std::uint64_t>(requests, 1), s.warmup,
                        "fio's own: 1e9 / its IOPS per pass (its start-up, ~0.25 s, left out)");
    ctx.set_field("device", {{"pattern", s.param("pattern")}, {"engine", s.param("engine")}, {"depth", depth},
                             {"block_bytes", s.block_size}, {"file_bytes", s.size_bytes}, {"dir", lab::data_dir(s)},
                             {"direct", true}, {"fio", lab::process::version_of(fio_path())}, {"iomem", s.param("iomem")},
                             {"huge_pages_reserved", huge ? huge->json() : lab::Json(nullptr)}, {"passes", passes}});
    ctx.checksum(s.size_bytes / s.block_size);
    ctx.verify(ok, "every fio pass read with O_DIRECT and reported no error");
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
