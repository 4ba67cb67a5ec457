// lab/common/memcg.hpp — the paging suite's OS side: running this process inside a
// cgroup-v1 memory cgroup with a limit, dropping one file's page cache, and the
// process's fault and I/O counters.
//
// The kernel's paging is measured under the same budget as physmem's: the process moves
// into a fresh child of its own memory cgroup whose memory.limit_in_bytes is the
// budget plus what the process already holds; page cache of a MAP_SHARED file is
// charged there, so the kernel reclaims (and writes back) as physmem's pager evicts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace lab::memcg {

// Joins a new memory cgroup limited to `limit` bytes for the object's life: a child
// (named after the pid) of the memory cgroup the process is in (/proc/self/cgroup, read
// at construction), so that group's limits still bind; a child of the v1 root when that
// group takes none. On destruction moves the process back to the group it came from and
// removes the new one. Groups left by processes that died inside one (the name's pid is
// gone) are removed first. Throws std::runtime_error naming the step (not root, no v1 memory
// controller, a write refused).
class Limit {
  public:
    explicit Limit(std::size_t limit);
    ~Limit();
    Limit(const Limit&) = delete;
    Limit& operator=(const Limit&) = delete;
    const std::string& path() const noexcept { return path_; }
    // The group's peak charge (memory.max_usage_in_bytes) and how often it hit the limit.
    std::uint64_t max_usage() const;
    std::uint64_t failcnt() const;

  private:
    std::string path_;
    std::string origin_;  // the memory cgroup the process came from (a directory under the root)
};

// The directory of this process's v1 memory cgroup (the root's path, or a
// descendant's, from /proc/self/cgroup); the root when the file names none.
std::string current_group();

// Whether this process can use Limit here, and if not why not ("" when it can).
std::string unavailable_reason();

// fsync, then POSIX_FADV_DONTNEED over the whole file: its clean pages leave the page
// cache. Returns the file's pages still cached afterwards (mincore over a mapping).
std::size_t drop_cache(int fd, std::size_t bytes);

// Pages of the mapping [p, p + bytes) in memory (mincore; p page-aligned).
std::size_t cached_pages(const void* p, std::size_t bytes);

struct Counters {
    std::uint64_t minor_faults = 0, major_faults = 0;  // getrusage(RUSAGE_SELF)
    std::uint64_t read_bytes = 0, write_bytes = 0;     // /proc/self/io (storage I/O)
};
// Reads /proc/self/io, then getrusage last: the file's buffer is allocated before the
// fault count is taken (call counters_end() to close a bracket: getrusage first).
Counters counters();
Counters counters_end();
Counters operator-(const Counters& a, const Counters& b);
Counters& operator+=(Counters& a, const Counters& b);

// Resident bytes of this process (/proc/self/statm).
std::size_t resident_bytes();

}  // namespace lab::memcg
