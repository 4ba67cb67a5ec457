// lab/common/fio.cpp — running fio (fio.hpp).
#include "fio.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <utility>

#include "process.hpp"

namespace lab::fio {

std::string path() {
    std::string p = lab::process::find_on_path("fio");
    if (p.empty()) throw physmem::backing_unavailable("fio not installed (apt-get install fio)");
    return p;
}

Json run(const std::vector<std::string>& args) {
    const std::string exe = path();
    std::vector<std::string> argv{exe, "--output-format=json", "--name=physmem-lab"};
    argv.insert(argv.end(), args.begin(), args.end());
    lab::process::ChildResult r = lab::process::run_child(exe, argv, {"PATH=/usr/bin:/bin"});
    std::size_t at = r.out.find('{');
    Json j = at == std::string::npos ? Json() : Json::parse(r.out.substr(at), nullptr, false);
    if (r.exit_code != 0 || j.is_discarded() || !j.contains("jobs") || j["jobs"].empty())
        throw std::runtime_error("fio ended with " + r.status + ": " + r.out.substr(0, 300));
    return j["jobs"][0];
}

File::File(const std::string& dir, std::size_t bytes) {
    const std::string name = dir + "/physmem-lab-device-" + std::to_string(::getpid());
    try {
        run({"--filename=" + name, "--rw=write", "--bs=1M", "--direct=1", "--ioengine=psync",
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

File::~File() { ::close(fd); }

HugeBuffers::HugeBuffers(std::size_t depth, std::size_t block, std::string who) : who_(std::move(who)) {
    const std::size_t page = std::size_t{2} << 20;
    const long need = static_cast<long>(2 * ((depth * block + page - 1) / page) + 2);  // fio rounds up too
    if (physmem::available_huge_pages(page) >= need) return;
    r_ = physmem::core::make_available(page, need);
    if (physmem::available_huge_pages(page) < need)
        throw physmem::backing_unavailable("fio's buffers need " + std::to_string(need) +
                                           " free 2 MiB hugetlb pages (root reserves them for the run)");
    if (r_.changed())
        std::fprintf(stderr, "%s: nr_hugepages (2 MiB) %ld -> %ld for fio's buffers\n", who_.c_str(), r_.before, r_.after);
}

HugeBuffers::~HugeBuffers() {
    physmem::core::Restored b = physmem::core::restore_huge_pages(r_, physmem::core::Restore::remove_added);
    if (r_.changed()) std::fprintf(stderr, "%s: nr_hugepages (2 MiB) restored to %ld\n", who_.c_str(), b.now);
}

Json HugeBuffers::json() const {
    return r_.changed() ? Json{{"before", r_.before}, {"after", r_.after}} : Json(nullptr);
}

Json read(const File& file, std::size_t bytes, const Read& r) {
    return run({"--filename=" + file.path, "--rw=" + r.pattern, "--bs=" + std::to_string(r.block), "--direct=1",
                "--ioengine=" + r.engine, "--iodepth=" + std::to_string(r.depth), "--size=" + std::to_string(bytes),
                "--time_based", "--runtime=" + std::to_string(r.runtime_ms) + "ms", "--norandommap", "--randrepeat=0",
                "--iomem=" + r.iomem});
}

Json summary(const Json& job) {
    const Json& rd = job["read"];
    return {{"iops", rd["iops"]}, {"bw_bytes", rd["bw_bytes"]}, {"io_bytes", rd["io_bytes"]},
            {"runtime_ms", rd["runtime"]}, {"lat_mean_ns", rd["lat_ns"]["mean"]}};
}

bool ok(const Json& job) {
    const Json& rd = job["read"];
    return job["error"].get<int>() == 0 && rd["iops"].get<double>() > 0 && rd["io_bytes"].get<std::uint64_t>() > 0;
}

namespace {
// Buffers for `spec`: hugetlb pages when asked and to be had, else none (spec falls back
// to malloc).
std::unique_ptr<HugeBuffers> buffers_for(Read& spec, const std::string& who) {
    if (spec.iomem != "shmhuge") return nullptr;
    try {
        return std::make_unique<HugeBuffers>(spec.depth, spec.block, who);
    } catch (const physmem::backing_unavailable&) {
        spec.iomem = "malloc";
        return nullptr;
    }
}
}  // namespace

Beside::Beside(const std::string& dir, std::size_t bytes, Read spec, const std::string& who)
    : spec_(std::move(spec)), asked_(spec_.iomem), bytes_(bytes), huge_(buffers_for(spec_, who)), file_(dir, bytes) {}

void Beside::pass(const char* when) {
    try {
        Json job = read(file_, bytes_, spec_);
        ok_ = ok_ && lab::fio::ok(job);
        Json p = summary(job);
        p["when"] = when;
        passes_.push_back(std::move(p));
    } catch (const std::runtime_error& e) {
        ok_ = false;
        passes_.push_back({{"when", when}, {"error", e.what()}});
    }
}

Json Beside::json() const {
    return {{"pattern", spec_.pattern}, {"engine", spec_.engine}, {"depth", spec_.depth},
            {"block_bytes", spec_.block}, {"file_bytes", bytes_}, {"iomem", spec_.iomem}, {"iomem_asked", asked_},
            {"runtime_ms", spec_.runtime_ms}, {"huge_pages_reserved", huge_ ? huge_->json() : Json(nullptr)},
            {"fio", lab::process::version_of(path())}, {"direct", true}, {"ok", ok_}, {"passes", passes_}};
}

}  // namespace lab::fio
