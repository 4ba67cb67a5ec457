// lab/common/fio.hpp — running fio, the storage device's own bar for the paging suite
// (issue 30): its path, one run and its JSON report, a file for it to read, and the 2 MiB
// hugetlb pages its iomem=shmhuge buffers take.
//
// Used by the device program (the device's limits as points of their own) and by the
// paging program (the same reads beside a paged point, in its process's time: a device
// whose speed drifts from one minute to the next is compared with what it gave then).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "context.hpp"
#include "core/hugepages.hpp"

namespace lab::fio {

// fio's path; physmem::backing_unavailable when it is not installed.
std::string path();

// Runs fio with `args` (plus the JSON output format); returns its report's first job.
// std::runtime_error naming fio's exit and output when it fails.
Json run(const std::vector<std::string>& args);

// A file of `bytes` in `dir`, written once with O_DIRECT and fsynced (real blocks, no
// holes), then unlinked while held open, so nothing is left behind however the program
// ends; `path` is its /proc/PID/fd link, which fio opens (with O_DIRECT) as the same inode.
// physmem::backing_unavailable when `dir` takes no O_DIRECT write.
struct File {
    std::string path;
    int fd = -1;
    File(const std::string& dir, std::size_t bytes);
    ~File();
    File(const File&) = delete;
    File& operator=(const File&) = delete;
};

// The 2 MiB hugetlb pages fio's buffers take with iomem=shmhuge (depth requests of
// `block` bytes, twice over and two pages more: fio asks for more than the buffers), made
// available for the object's life and given back after: a system setting, changed only
// for this and said on stderr (naming `who`) and in json(). physmem::backing_unavailable
// when they cannot be had.
class HugeBuffers {
  public:
    HugeBuffers(std::size_t depth, std::size_t block, std::string who);
    ~HugeBuffers();
    HugeBuffers(const HugeBuffers&) = delete;
    HugeBuffers& operator=(const HugeBuffers&) = delete;
    Json json() const;  // {before, after} when the reservation changed, else null

  private:
    physmem::core::HugeReservation r_;
    std::string who_;
};

// One O_DIRECT read pass of `file` (of `bytes`): fio's rw `pattern` (randread | read) in
// requests of `block` bytes, `engine` (io_uring | psync) with `depth` in flight, reading
// for `runtime_ms`, buffers `iomem` (malloc | shmhuge).
struct Read {
    std::string pattern = "randread";
    std::string engine = "io_uring";
    std::size_t depth = 128;
    std::size_t block = 4096;
    std::size_t runtime_ms = 300;
    std::string iomem = "malloc";
};
// The pass's job report (Json run()'s).
Json read(const File& file, std::size_t bytes, const Read& r);
// What a pass read: {iops, bw_bytes, io_bytes, runtime_ms, lat_mean_ns} from its job.
Json summary(const Json& job);
// Whether the job read with no error and moved bytes.
bool ok(const Json& job);

// fio beside a measurement: the same reads of a file of its own (the data's size, the same
// directory), run just before and just after the measured passes, so that a device whose
// speed drifts is compared with what it gave meanwhile. With iomem=shmhuge and no hugetlb
// pages to be had (not root) the buffers fall back to malloc, and json() says so.
// Throws as File (no fio, no O_DIRECT) from the constructor; a failed pass is recorded as
// such (ok() false), not thrown.
class Beside {
  public:
    Beside(const std::string& dir, std::size_t bytes, Read spec, const std::string& who);
    void pass(const char* when);  // one read pass, labelled `when` ("before", "after")
    bool ok() const noexcept { return ok_; }
    // {pattern, engine, depth, block_bytes, file_bytes, iomem, iomem_asked, runtime_ms,
    //  huge_pages_reserved, fio, direct, ok, passes: [{when, iops, bw_bytes, ...} or {when, error}]}
    Json json() const;

  private:
    Read spec_;
    std::string asked_;
    std::size_t bytes_;
    std::unique_ptr<HugeBuffers> huge_;
    File file_;
    Json passes_ = Json::array();
    bool ok_ = true;
};

}  // namespace lab::fio
