// src/port/os.hpp — every operating-system call physmem makes, behind one small port.
//
// Linux only. Functions return an errno-style int (0 = success) or a value with a
// documented failure value; none throws. Nothing outside src/port includes <sys/mman.h>,
// reads /proc or /sys, or calls perf_event_open.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace physmem::os {

// --- cpu (cpu.cpp) -------------------------------------------------------------------

// Protection keys: CPUID leaf 7 subleaf 0, ECX bit 3 (PKU, the CPU has them) and bit 4
// (OSPKE, the kernel enabled them). Both false off x86 or when leaf 7 is absent.
struct CpuPku {
    bool pku = false;
    bool ospke = false;
};
CpuPku cpu_protection_keys() noexcept;

// Bytes of the largest data cache the C library reports (L3, else L2; sysconf), 0 when it
// reports none.
std::size_t last_level_cache_bytes() noexcept;

// --- protection keys (pkeys.cpp) -------------------------------------------------------
// Only meaningful where cpu_protection_keys() says both pku and ospke; elsewhere the calls
// fail (ENOSYS, EINVAL, ENOSPC from the kernel) and read_pkru/write_pkru must not be called
// (they fault on a CPU without the instructions).

// pkey_alloc(0, PKEY_DISABLE_ACCESS): a new key (1..15), which the calling thread may not
// use until it writes PKRU; -1 with errno on failure (ENOSPC: no key free).
int pkey_allocate() noexcept;
// pkey_mprotect(p, bytes, PROT_READ | PROT_WRITE, key): the pages take the key. pre: p
// page-aligned (the mapping's page size for hugetlb). 0, else the errno.
int pkey_protect(void* p, std::size_t bytes, int key) noexcept;
// The calling thread's PKRU (RDPKRU / WRPKRU): two bits a key, bit 2k access-disable, bit
// 2k+1 write-disable.
std::uint32_t read_pkru() noexcept;
void write_pkru(std::uint32_t value) noexcept;
// Installs a SIGSEGV handler that, for a protection-key fault (si_code SEGV_PKUERR), calls
// report(key, address) (async-signal-safe code only; key -1 when the C library does not
// name si_pkey): when it returns true (the key is the caller's, reported) the process ends
// by SIGSEGV under the default action; any other SIGSEGV goes to the handler installed
// before. 0, else the errno.
int on_pkey_fault(bool (*report)(int key, const void* addr)) noexcept;
// The same handler (installed once for both) for any other SIGSEGV: report(address) is
// called first (async-signal-safe code only; the address is null where the kernel does not
// give one, as for an access to a non-canonical address on x86-64): when it returns true
// (the fault is the caller's, reported) the process ends by SIGABRT (as a fatal error);
// otherwise the fault goes to the handler installed before. 0, else the errno.
int on_other_fault(bool (*report)(const void* addr)) noexcept;

// --- memory (memory.cpp) -------------------------------------------------------------

// Anonymous private mapping of `bytes` backed by hugetlb pages of `page_size`
// (2 MiB or 1 GiB), starting at a multiple of `alignment` (power of two; at least
// page_size is implied). pre: bytes is a multiple of page_size. nullptr on failure
// (errno set: ENOMEM when no pages are free). The pages are reserved by the kernel at
// this call, so touching them later cannot fail.
void* map_hugetlb(std::size_t bytes, std::size_t page_size, std::size_t alignment) noexcept;

// Anonymous private mapping of `bytes` (a multiple of the base page), whose start is
// aligned to `alignment` (power of two). Over-maps and trims the excess. One PROT_NONE
// guard page sits on each side, so the kernel never merges the mapping with a
// neighbour and its /proc/self/smaps entry describes it alone. nullptr on failure.
// Release with unmap_aligned.
void* map_aligned(std::size_t bytes, std::size_t alignment) noexcept;
// pre: p, bytes as returned by and passed to map_aligned. Unmaps the guards too.
int unmap_aligned(void* p, std::size_t bytes) noexcept;

// munmap. pre: [p, p+bytes) was mapped by this port.
int unmap(void* p, std::size_t bytes) noexcept;

// madvise(MADV_HUGEPAGE) when `huge`, else madvise(MADV_NOHUGEPAGE).
int advise_huge(void* p, std::size_t bytes, bool huge) noexcept;

// MADV_COLLAPSE (Linux 6.1+): put [p, p+bytes) on transparent huge pages now. pre: p
// 2 MiB aligned. An error (EINVAL on older kernels, EAGAIN) leaves the range as it was.
int collapse_huge(void* p, std::size_t bytes) noexcept;

// Make every page of [p, p+bytes) present and writable now: MADV_POPULATE_WRITE
// (Linux 5.14+), else one write per page. pre: p page-aligned; memory is zero
// (freshly mapped) or the caller accepts that the fallback writes zero bytes.
int populate_write(void* p, std::size_t bytes, std::size_t page_size) noexcept;

// MADV_DONTNEED: give the pages back; the range reads as zero afterwards.
int discard(void* p, std::size_t bytes) noexcept;

// How many 4 KiB pages of [p, p+bytes) are resident (mincore). pre: p page-aligned and
// mapped. SIZE_MAX when the kernel refuses. On a range backed by huge pages, a touched huge
// page counts all its 4 KiB pages; a page only read (the shared zero page) counts too.
std::size_t resident_pages(const void* p, std::size_t bytes) noexcept;

int lock(void* p, std::size_t bytes) noexcept;
int unlock(void* p, std::size_t bytes) noexcept;

std::size_t base_page_size() noexcept;

// Anonymous private read-write mapping of `bytes` (a multiple of the base page) whose
// start is a multiple of `alignment` (power of two), without guard pages: the
// drop-in allocator's arenas. MAP_NORESERVE: nothing is committed until touched, and the
// kernel's overcommit policy is not asked. Tries aligned places first and over-maps
// (bytes + alignment, trimmed) only when they are taken, so that an address-space limit
// (RLIMIT_AS) is not spent on a window. Allocates no heap memory (safe inside malloc).
// nullptr on failure (errno set). Release with unmap.
void* map_reserve(std::size_t bytes, std::size_t alignment) noexcept;

// As map_reserve, but accounted: the kernel's overcommit policy decides now (ENOMEM for a
// request it would never back, as for glibc's mmap'd chunks). The big single mappings.
void* map_committed(std::size_t bytes, std::size_t alignment) noexcept;

// mremap of [p, p+old_bytes) to new_bytes (multiples of the base page): in place when
// target is nullptr (fails with ENOMEM when the pages after it are taken), else moved onto
// target, a mapping of new_bytes the caller made (MREMAP_FIXED replaces it). Page tables
// move; no byte is copied. 0 or errno.
int remap(void* p, std::size_t old_bytes, std::size_t new_bytes, void* target) noexcept;

// The smaller of RLIMIT_AS (ulimit -v) and RLIMIT_DATA (ulimit -d; private writable
// mappings count against it since Linux 4.7, reserved or not) in bytes; 0 when neither
// limits.
std::size_t address_space_limit() noexcept;
// RLIMIT_MEMLOCK (ulimit -l) in bytes; SIZE_MAX when unlimited.
std::size_t memlock_limit() noexcept;

// Monotonic clock in nanoseconds (CLOCK_MONOTONIC_COARSE: a vDSO read, no syscall).
std::uint64_t monotonic_ns() noexcept;

// sched_yield(): give the core away while a lock is held by another thread.
void yield() noexcept;

// write(2) all of [s, s+n) to stderr, retrying on EINTR. No allocation, no stdio.
void write_stderr(const char* s, std::size_t n) noexcept;

// --- procfs and sysfs (procfs.cpp, sysfs.cpp): no heap allocation, no stdio ----------

// The /proc/self/smaps entry of the mapping that contains `addr`.
struct SmapsEntry {
    bool found = false;
    std::size_t kernel_page_size = 0;  // bytes
    std::size_t rss = 0;               // bytes
    std::size_t anon_huge = 0;         // AnonHugePages, bytes
    std::size_t hugetlb = 0;           // Private_Hugetlb + Shared_Hugetlb, bytes
    std::size_t locked = 0;            // Locked, bytes
    bool thp_eligible = false;         // THPeligible: 1
};
SmapsEntry smaps_entry(const void* addr) noexcept;

// Physical address of `addr` from /proc/self/pagemap; nullopt when not root, not
// present, or unreadable.
std::optional<std::uint64_t> physical_address(const void* addr) noexcept;

// The bracketed word of /sys/kernel/mm/transparent_hugepage/enabled; absent when the
// file is missing or unreadable.
enum class ThpMode { absent, always, madvise, never };
ThpMode thp_mode() noexcept;
// "absent", "always", "madvise", "never".
const char* to_string(ThpMode m) noexcept;

// hugetlb sysfs counters for `page_size`; -1 when the page size is not supported.
// Neither call allocates heap memory (the drop-in allocator calls them inside malloc).
// Only the memory core (src/core/hugepages.cpp) writes nr_hugepages.
long hugepages_read(std::size_t page_size, const char* counter) noexcept;
// Write nr_hugepages for `page_size`. 0 or errno.
int hugepages_set_total(std::size_t page_size, long total) noexcept;

// Resident bytes of this process from /proc/self/statm (second field × base page);
// 0 when unreadable. Allocates no heap memory.
std::size_t resident_bytes() noexcept;

bool is_root() noexcept;

// --- process (process.cpp) -----------------------------------------------------------

// An exclusive, non-blocking flock on `path` (created 0644 if missing): the descriptor
// holding it, or -1 with errno (EWOULDBLOCK: another process holds it; ENOENT: no such
// directory). Released by unlock_file or when the process ends.
int lock_exclusive(const char* path) noexcept;
void unlock_file(int fd) noexcept;

// Holds SIGINT, SIGTERM and SIGHUP pending (blocked) instead of ending the process, and
// ignores SIGPIPE (writes to a closed pipe fail with EPIPE instead).
void block_stop_signals() noexcept;

// Blocks SIGINT, SIGTERM and SIGHUP (a pending one counts), then waits until stdin reaches end of file (its
// data is read and dropped) or one of them arrives. The signal number, or 0 for EOF.
int wait_for_eof_or_signal() noexcept;

// --- threads (thread.cpp): the pool's background give-back ---------------------------

// Runs fn(arg) on a new detached thread named `name` (at most 15 characters) with every
// signal blocked, so signals keep going to the program's own threads; fn's result is
// ignored. 0 or errno (EAGAIN: RLIMIT_NPROC or no memory); the caller's signal mask is
// unchanged either way.
int start_thread(void* (*fn)(void*), void* arg, const char* name) noexcept;

// pthread_atfork: prepare runs in the forking thread before fork, parent and child after
// it in each process (the child has only the forking thread). 0 or errno.
int at_fork(void (*prepare)(), void (*parent)(), void (*child)()) noexcept;

// Nanoseconds between two readings of monotonic_ns() that differ (its clock's tick,
// clock_getres of CLOCK_MONOTONIC_COARSE; typically 1-10 ms).
std::uint64_t monotonic_resolution_ns() noexcept;

// --- files (file.cpp): the paged array's backing file ------------------------------

// Opens a read-write backing file: `path` created new (O_EXCL; EEXIST when it exists), or
// when path is empty an unnamed one in `dir` (O_TMPFILE, else a named one unlinked at
// once). With `direct`, O_DIRECT is added once the file is open (fcntl) and left off
// when the file system refuses it; *direct_used says which. A failure leaves no file
// behind. The descriptor, or -errno.
int open_backing_file(const char* path, const char* dir, bool direct, bool* direct_used) noexcept;
// pread/pwrite of exactly n bytes at off, retrying EINTR and partial transfers: n, fewer
// bytes at end of file (read only), or -errno.
long read_at(int fd, void* buf, std::size_t n, std::uint64_t off) noexcept;
long write_at(int fd, const void* buf, std::size_t n, std::uint64_t off) noexcept;
int close_file(int fd) noexcept;
// unlink(path): 0 or errno.
int remove_file(const char* path) noexcept;

// --- asynchronous I/O (uring.cpp): io_uring through liburing ------------------------

struct Ring;  // opaque
struct IoDone {
    std::uint64_t tag;
    long result;  // bytes transferred, or -errno
};
// A ring of `entries` submission slots; nullptr with *error = errno when the kernel
// refuses (ENOSYS, EPERM under kernel.io_uring_disabled, ENOMEM under RLIMIT_MEMLOCK).
Ring* ring_open(unsigned entries, int* error) noexcept;
void ring_close(Ring* r) noexcept;
// Queues one read (or write) of n bytes at off; false when the submission queue is full.
bool ring_queue(Ring* r, bool write, int fd, void* buf, std::size_t n, std::uint64_t off,
                std::uint64_t tag) noexcept;
// Submits what is queued and waits until at least `wait` completions are ready. 0 or errno.
int ring_submit(Ring* r, unsigned wait) noexcept;
// Moves up to `max` ready completions to out; their count.
unsigned ring_reap(Ring* r, IoDone* out, unsigned max) noexcept;

// --- counters (counters.cpp) ---------------------------------------------------------
// PageFaultCounter and EventCounters are declared in port/counters.hpp (their own header:
// used by the lab, tests and demo, not by the installed library) and built into
// physmem_counters.

}  // namespace physmem::os
