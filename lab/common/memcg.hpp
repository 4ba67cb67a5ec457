// lab/common/memcg.hpp — the paging suite's OS side: running this process inside a
// cgroup-v1 memory cgroup with a limit, dropping one file's page cache, and the
// process's fault and I/O counters.
//
// The kernel's paging is measured under the same budget as physmem's: the process moves
// into a fresh child of its own memory cgroup whose memory.limit_in_bytes is
// limit_for(budget); page cache of a MAP_SHARED file read inside it is charged there, so
// the kernel reclaims (and writes back) as physmem's pager evicts.
//
// What a v1 group is charged: only pages first charged after the process joins (the
// pages it already holds stay charged to the group that faulted them; moving charges on
// immigration is off, and deprecated in the kernel). So the limit is the budget plus a
// small allowance for the process's own new pages, not plus its resident size (that gave
// the data's page cache up to budget + resident: twice the budget at 4 MiB).
// The limit is hard: when a fault needs a page and every page of the group is locked
// under read-ahead's I/O, the group's OOM killer kills the process. Read-ahead fills the
// group (its allocations give up at the limit, after evicting its own unread pages), so
// a window (up to two in flight) as large as the limit makes that a race with the I/O:
// paging_unfit_reason() says when a budget is too small for the file's read-ahead.
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
    // Changes the limit: lowering it makes the kernel reclaim the group's pages down to it
    // (write dirty shared pages back first, e.g. msync, or the reclaim may give up).
    // Throws std::runtime_error naming the write when the kernel refuses (EBUSY: it could
    // not reclaim enough); the limit is then unchanged.
    void set(std::size_t limit);
    // The group's peak charge (memory.max_usage_in_bytes) and how often it hit the limit.
    std::uint64_t max_usage() const;
    std::uint64_t failcnt() const;
    // The group's charge now by kind (memory.stat, memory.kmem.usage_in_bytes): page
    // cache (the data, and any file page first read inside), of it mapped, anonymous, kernel.
    struct Usage {
        std::uint64_t cache = 0, mapped_file = 0, rss = 0, kmem = 0;
    };
    Usage usage() const;

  private:
    std::string path_;
    std::string origin_;  // the memory cgroup the process came from (a directory under the root)
};

// The allowance in a limit for the process's own pages charged after it joins (new anonymous
// pages: stack and heap growth; page tables and other kernel objects): about 0.3 MiB in
// the paging suite's mapped runs (Limit::usage() rss + kmem, recorded per run).
inline constexpr std::size_t kOwnAllowance = std::size_t{1} << 20;

// The limit that leaves `budget` bytes to a file's page cache: budget + kOwnAllowance.
std::size_t limit_for(std::size_t budget);

// Bytes the kernel reads ahead at once for a fault on a mapping of `fd` under `advice`
// (MADV_*): the file's device's read_ahead_kb (sysfs), twice that under MADV_SEQUENTIAL,
// none under MADV_RANDOM. 0 when sysfs does not say (no device behind the file).
std::size_t readahead_window(int fd, int advice);

// "" when a mapping of `data` bytes of `fd` under `advice` can be paged in `budget`
// bytes of page cache; else why not: data > budget and the read-ahead in flight (up to
// two windows: the one being consumed and the next) does not fit in the budget — the
// kernel would evict its own unread read-ahead and a fault could find nothing to reclaim
// (the group's OOM killer).
std::string paging_unfit_reason(int fd, int advice, std::size_t budget, std::size_t data);

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

// Tells the kernel that the pages of the mapping holding [p, p + bytes) are read soon
// (madvise MADV_WILLNEED from p's page: it starts reading those not cached; errors are the
// read's to meet). p need not be page-aligned. pre: bytes > 0.
void willneed(const void* p, std::size_t bytes) noexcept;

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
