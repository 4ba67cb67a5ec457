// physmem/pager.hpp — the untyped engine under PagedArray: leaves of a tree that live in
// a file and, up to a budget, in pool blocks (frames), moved between the two in software.
//
// The leaf table is a tree of inner blocks (always in memory). Entry k holds leaf k's
// frame (less k strides: below) while the leaf is present, tagged in its low bits like a
// page-table entry's accessed and dirty bits (kCold, kClean below), and kAbsent while it
// is not: the walk that meets a tag it needs cleared calls access(k), which loads the
// leaf if needed (a software page fault, no kernel fault), records the access and
// returns the frame.
// Leaf k lives at byte k * leaf_bytes of the file.
//
// Leaf size. By default a leaf is one pool block. PagingOptions::leaf_bytes chooses
// smaller leaves per array (a power of two from 4 KiB up to the block size): a frame is
// then a slice of a pool block (block_size / leaf_bytes frames per block, taken from the
// pool a block at a time), so an array read at random moves 4 KiB per miss while its
// pool keeps large blocks for the other structures. The table's inner blocks stay pool
// blocks.
//
// Policy. Frames are taken from the pool up to the budget, then reused: CLOCK over the
// frames (a reference bit per leaf, set by every access), skipping pinned frames and
// frames with I/O in flight; but a leaf a sequential or strided pattern has just passed
// goes first (most recently used first: a cyclic scan larger than the budget then keeps
// part of the array in memory from pass to pass). A clean leaf is dropped; a dirty one is written first
// (batched: the victims of one request are written together). A leaf never written is
// not read: it is made in memory (value-initialised). Read-ahead: when consecutive faults
// keep one stride (1 for a scan), the next `readahead` leaves along it are read
// asynchronously; leaves read ahead (or hinted with prefetch) stay unlinked until first
// touched, so their first touch is counted (readahead_hits) and keeps the pattern going.
// The window starts at 2 leaves and doubles with each fault that keeps the pattern, so
// random faults that match a stride by chance read little ahead. Hints: the caller knows
// its pattern, so a hinted leaf's fault does not feed the detector, and a hint's leaves
// already in memory count as referenced (else the next batch's reads could take them
// before their access).
//
// I/O: io_uring (liburing) when the kernel allows it, else pread/pwrite (stats().io says
// which); O_DIRECT when the file system accepts it (stats().direct). Errors: a failed or
// short read or write throws PagingError naming the file, the leaf and the errno. The
// table stays consistent: a leaf that failed to load stays out (its frame freed); a dirty
// leaf whose write failed stays in memory, dirty — nothing is lost.
//
// Threads: one mutex guards every slow path (access, fault, prefetch, flush, pins,
// stats), except while a fault reads its leaf: the lock is released for the read (the
// frame taken and the leaf marked loading first), so faults of several threads keep
// several reads in flight, and hits go on meanwhile. The fast path (raw + a tag test)
// takes no lock, so it is safe only while no
// other thread can evict: see PagedArray's contract. Beside threads that can evict, a
// reader may still go without the lock as a seqlock reader does: epoch_acquire(), then
// raw_relaxed() and the element, an acquire fence, and epoch_relaxed() unchanged — every
// eviction bumps the epoch after unlinking the leaf and before its frame is reused.
//
// Memory. set_budget() changes the budget at run time: shrinking evicts (CLOCK's
// choice, dirty leaves written) and returns the frames beyond it to the pool, whose
// emptied pages go back to the system (after its delay, or at release()/compact()).
// With PagingOptions::movable the blocks (the table's inner blocks and the frames) are
// movable: the pager is their BlockOwner (block_owner.hpp), so BlockPool::compact()/
// relocate() can pack them into fewer pages — and then the pool's contract covers this
// array: no thread may use it while they run (I/O in flight is finished first). Without
// it they are pinned, and other threads may go on reading the array beside a compaction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "physmem/block_owner.hpp"
#include "physmem/pool.hpp"
#include "physmem/tree_shape.hpp"

namespace physmem {

// How a pager does its I/O.
enum class PagingIo : std::uint8_t {
    automatic,  // io_uring, else pread/pwrite
    uring,      // io_uring or an error at construction
    sync,       // pread/pwrite
};

struct PagingOptions {
    std::size_t budget = 64 << 20;  // bytes of leaves in memory (whole leaves, at least one)
    std::string path;               // backing file (created, must not exist; removed at the end);
                                    // empty: an unnamed temporary file in `dir`
    std::string dir;                // for the unnamed file; empty: $TMPDIR, else /var/tmp
    std::size_t readahead = 32;     // leaves read ahead on a sequential or strided pattern (0: none);
                                    // at most half the budget
    unsigned queue_depth = 128;     // reads and writes in flight at most
    PagingIo io = PagingIo::automatic;
    bool direct = true;  // O_DIRECT where the file system accepts it
    bool movable = false;  // frames and table movable by the pool's compact()/relocate() (see above)
    std::size_t leaf_bytes = 0;  // bytes of a leaf: 0 the pool's block size, else a power of two
                                 // from 4096 up to it (see "Leaf size" above)
};

struct PagingStats {
    std::size_t leaves = 0;    // leaves of the array
    std::size_t resident = 0;  // leaves in frames now (including read ahead, not yet touched)
    std::size_t frames = 0;    // the budget in leaves
    std::uint64_t faults = 0;  // walks that met a not-present entry
    std::uint64_t loads = 0;   // leaves read from the file
    std::uint64_t evictions = 0;
    std::uint64_t writebacks = 0;  // dirty leaves written (by eviction or flush)
    std::uint64_t bytes_read = 0;
    std::uint64_t bytes_written = 0;
    std::uint64_t readahead_issued = 0;  // leaves read ahead by the pattern detector
    std::uint64_t readahead_hits = 0;    // faults that found the leaf read ahead or hinted
    std::uint64_t hinted = 0;            // leaves whose read a prefetch() hint started
    const char* io = "";                 // "io_uring" or "pread"
    bool direct = false;                 // O_DIRECT in use
};

// An I/O error of a paged array: what() names the operation, the file, the leaf and the
// system's message; code() is the errno (EIO for a short read).
class PagingError : public std::runtime_error {
  public:
    PagingError(const std::string& what, int error) : std::runtime_error(what), error_(error) {}
    int code() const noexcept { return error_; }

  private:
    int error_;
};

namespace os {
struct IoDone;  // src/port/os.hpp
}

namespace detail {

class IoQueue;  // src/paged/io_queue.hpp

class Pager final : private BlockOwner {
  public:
    // Leaf state bits (state_[k]).
    // 16 bits, not 8: a store through a char type may alias anything, so the compiler
    // would reload the table's root and shape after every access's reference bit.
    using Bits = std::uint16_t;
    static constexpr Bits kRef = 1, kDirty = 2, kOnFile = 4, kInFrame = 8, kLoading = 16, kAhead = 32,
                          kWriting = 64, kReading = 128,  // kReading: a fault's own read, the lock released
                          kHinted = 256;  // with kAhead: started by a hint, not by the pattern detector
    using InitFn = void (*)(void* leaf, std::size_t bytes);

    // `leaves` leaves of leaf_bytes_for(pool, o) bytes each; `init` makes a never-written
    // leaf. `entry_stride`: the bytes a leaf's elements take (the array's elements a leaf
    // times their size; a multiple of 4 — std::invalid_argument otherwise — at most
    // leaf_bytes): leaf k's entry is its frame less k strides. Throws PagingError when the
    // file cannot be created or io is uring and io_uring is unavailable,
    // std::invalid_argument for bad options, std::bad_alloc from the pool.
    Pager(BlockPool& pool, std::size_t leaves, std::size_t entry_stride, InitFn init, const PagingOptions& o);
    // The leaf size `o` asks for on `pool` (o.leaf_bytes, or the block size when 0).
    // std::invalid_argument when it is not a power of two from 4096 up to the block size.
    static std::size_t leaf_bytes_for(const BlockPool& pool, const PagingOptions& o);
    // Tests only: called by a fault's own read with the lock released, before reading.
    static inline void (*read_hook)() = nullptr;
    ~Pager();
    Pager(const Pager&) = delete;
    Pager& operator=(const Pager&) = delete;

    // Table entries carry the leaf's state for the walk, as a page table's accessed and
    // dirty bits do. A present leaf's entry is its frame's address less k entry strides
    // (so element i of leaf k is at the entry plus i elements, with no mask of i: as
    // TreeArray's slots), with kCold set while the leaf's reference bit is clear and kClean
    // while it is not dirty (frames are 4 KiB-aligned and the stride a multiple of 4, so
    // the low bits are free); a leaf not present is kAbsent, both tags and bit 63, which no
    // present entry equals (that needs k * stride - frame = 2^63: a file of 8 EiB; test
    // absence by equality — a present entry wraps below 0 when k * stride > frame). So the
    // fast path is one test: a read takes the slow path only when kCold is set, a write
    // when either is — at most once per leaf per CLOCK sweep or write-back, and never a
    // store on the fast path.
    static constexpr std::uintptr_t kCold = 1, kClean = 2, kTags = 3;
    static constexpr std::uintptr_t kAbsent = (std::uintptr_t{1} << 63) | kTags;

    // The table slot of leaf k (in a block of the lowest inner level). No lock.
    void* const* slot(std::size_t k) const noexcept {
        void* const* node = root_;
        for (unsigned level = depth_; level > 1; --level)
            node = static_cast<void* const*>(node[(k >> (fan_shift_ * (level - 1))) & fan_mask_]);
        return &node[k & fan_mask_];
    }
    // The table's root block when it is the table's only level (leaf k's entry is
    // fixed_root()[k]), else nullptr.
    void* const* fixed_root() const noexcept { return depth_ == 1 ? root_ : nullptr; }
    // Keeps *home equal to fixed_root() from now on (when relocate() moves the root), so
    // an array can walk from its own copy; nullptr stops it. Call again when the array moves.
    void keep_root_at(void* const** home) noexcept {
        root_home_ = home;
        if (home) *home = fixed_root();
    }
    // The read table of a one-level table (else nullptr): leaf k's entry as fixed_root()[k]
    // holds it less kClean, which a read does not look at, so an array's read path uses a
    // ready entry as it is, with no mask (kAbsent as in the table). Kept with the table by
    // sync_tags and unlink; heap memory that never moves while the table lives.
    void* const* read_root() const noexcept { return reads_.get(); }
    // The raw entry of leaf k (above). No lock.
    std::uintptr_t raw(std::size_t k) const noexcept { return reinterpret_cast<std::uintptr_t>(*slot(k)); }
    // Leaf k's frame, or nullptr when not present. No lock.
    void* lookup(std::size_t k) const noexcept { return frame_of(k, raw(k)); }
    // The frame an entry of leaf k names, or nullptr for kAbsent.
    void* frame_of(std::size_t k, std::uintptr_t e) const noexcept {
        return e == kAbsent ? nullptr : reinterpret_cast<void*>((e & ~kTags) + k * entry_stride_);
    }
    // Leaf k's entry for its frame, tags clear (frame_of's inverse).
    std::uintptr_t entry_of(std::size_t k, const void* frame) const noexcept {
        return reinterpret_cast<std::uintptr_t>(frame) - k * entry_stride_;
    }
    // As lookup, but safe beside a thread that loads or evicts (relaxed atomic reads):
    // the answer may be stale at once, so use it only for a CPU prefetch, which cannot fault.
    const void* peek(std::size_t k) const noexcept {
        return frame_of(k, raw_relaxed(k));
    }
    // The walk's slow path: makes leaf k present if it is not, sets its reference bit
    // (and dirty bit when `write`), and returns its frame. Takes the lock.
    void* access(std::size_t k, bool write);
    // Marks an access (caller holds the lock; leaf k present).
    void touch(std::size_t k, bool write) noexcept;

    // As access, and pins the frame so no eviction takes it until unpin(k).
    void* pin(std::size_t k, bool write);
    void unpin(std::size_t k) noexcept;
    // Pins leaves k0, k0 + 1, ... (up to n of them, read) under one lock, their frames in
    // out; returns how many: fewer when every frame is pinned after the first, which
    // throws as pin does; on a throw none of the window stays pinned. unpin_window(k0, m,
    // dirty) unpins m of them, the first `dirty` marked written (a segmented algorithm's
    // window, segmented_iterator.hpp).
    std::size_t pin_window(std::size_t k0, std::size_t n, void** out);
    void unpin_window(std::size_t k0, std::size_t m, std::size_t dirty) noexcept;
    // Starts reading these leaves (a hint; errors are left for the fault that needs them).
    void prefetch(std::span<const std::size_t> leaves);
    // Writes every dirty leaf; they stay in memory, clean.
    void flush();
    // The budget in bytes of leaves (whole leaves, at least one, at most all). Growing
    // lets later faults take more frames; shrinking evicts until the leaves in memory
    // fit (CLOCK's victims, dirty ones written) and gives the frames beyond it back to
    // the pool. On an error (PagingError from a write, std::runtime_error when the
    // leaves that would have to go are pinned, std::bad_alloc before anything changed)
    // the budget stays as it was; leaves already evicted are on file, nothing is lost.
    // std::invalid_argument for more than 2^32 leaves. Takes the lock; invalidates
    // references as an eviction does.
    void set_budget(std::size_t bytes);
    std::size_t budget() const noexcept { return max_frames_ * leaf_bytes_; }
    // The epoch's type: a store to an element (a std::uint64_t) cannot change it in the
    // compiler's eyes, so a loop writing elements through iterators need not reload it
    // after every store (tree_shape.hpp, Unaliased).
    using Epoch = Unaliased<std::uint64_t>;
    // A counter bumped whenever a present leaf leaves memory or is cleaned (flush, write-behind):
    // cached leaf pointers (iterators) revalidate when it changes.
    std::uint64_t epoch() const noexcept { return epoch_; }
    // The same beside threads that evict (see Threads above).
    std::uint64_t epoch_acquire() const noexcept { return load_epoch(__ATOMIC_ACQUIRE); }
    std::uint64_t epoch_relaxed() const noexcept { return load_epoch(__ATOMIC_RELAXED); }
    // Leaf k's raw entry read as peek() reads it (safe beside a thread that loads or evicts).
    std::uintptr_t raw_relaxed(std::size_t k) const noexcept {
        return reinterpret_cast<std::uintptr_t>(__atomic_load_n(slot(k), __ATOMIC_RELAXED));
    }
    // Where it is kept (stable while the pager lives): iterators read it without going
    // through the array. Of a type no element store can alias (Epoch).
    const Epoch* epoch_address() const noexcept { return &epoch_; }

    PagingStats stats() const;
    // Every block the pager holds, the table's (root last) then the frames' (free ones
    // included; one block holds block_size / leaf_bytes frames): for inspection and tests.
    // Takes the lock.
    std::vector<void*> blocks() const;
    std::size_t leaves() const noexcept { return leaves_; }
    std::size_t leaf_bytes() const noexcept { return leaf_bytes_; }
    const std::string& file() const noexcept { return file_; }
    std::mutex& mutex() const noexcept { return mutex_; }
    // Caller holds mutex(): fault_locked makes leaf k present (the slow path of a walk;
    // it releases the lock while it reads the leaf, and holds it again on return or
    // throw); pin/unpin without taking the lock again.
    void* fault_locked(std::size_t k);
    void* pin_locked(std::size_t k, bool write);
    void unpin_locked(std::size_t k) noexcept;

  private:
    struct Frame {
        void* data = nullptr;
        std::size_t leaf = kNone;
        std::uint32_t pins = 0;
    };
    static constexpr std::size_t kNone = ~std::size_t{0};

    bool relocate(std::uintptr_t cookie, void* from, void* to) noexcept override;
    void* new_block(std::uintptr_t cookie, bool may_fail);
    void bump_epoch() noexcept;
    std::uint64_t load_epoch(int order) const noexcept {
        Epoch e;
        __atomic_load(&epoch_, &e, order);
        return e;
    }
    bool add_frame(bool may_fail);
    void move_leaf_down(std::size_t from, std::uint32_t to);
    void shrink_frames(std::size_t keep);
    void reserve_scratch();
    void take_first_frame();
    void build_table();
    void free_table() noexcept;
    void*& entry(std::size_t k) noexcept;
    std::size_t take_frames(std::size_t want, std::uint32_t* out);
    bool evictable(const Frame& fr) const noexcept;
    std::size_t choose_victims(std::size_t want, std::uint32_t* out);
    void start_write(std::uint32_t f);
    void write_back(std::span<const std::uint32_t> frames);
    void clean_ahead(std::size_t n);
    void start_reads(std::span<const std::size_t> leaves, bool ahead);  // ahead: read-ahead, else a hint
    void refer(std::span<const std::size_t> leaves) noexcept;  // a hint: present leaves referenced
    void pump(std::size_t min);
    void wait_for(std::size_t k);
    void drain() noexcept;
    void complete(std::uint64_t tag, long result) noexcept;
    void read_now(std::size_t k, std::uint32_t f);
    void wait_for_read(std::size_t k);
    void link(std::size_t k, std::uint32_t f) noexcept;
    void sync_tags(std::size_t k) noexcept;
    void unlink(std::size_t k) noexcept;
    void read_ahead_after(std::size_t k);
    void pass_behind(std::size_t k) noexcept;
    [[noreturn]] void fail(const char* op, std::size_t k, int error) const;
    [[noreturn]] void throw_all_pinned() const;

    BlockPool* pool_;
    InitFn init_;
    PagingOptions opt_;
    std::size_t leaves_;
    std::size_t leaf_bytes_;
    std::size_t entry_stride_;   // leaf k's entry is its frame less k of these
    std::size_t block_bytes_;    // the pool's block: an inner block of the table, a frame block
    std::size_t per_block_;      // frames per block (block_bytes_ / leaf_bytes_)
    void** root_ = nullptr;
    void* const** root_home_ = nullptr;  // keep_root_at
    unsigned depth_ = 1;  // levels of inner blocks (>= 1)
    unsigned fan_shift_;
    std::size_t fan_mask_;
    std::unique_ptr<void*[]> reads_;           // read_root(): per leaf, when depth_ == 1
    std::vector<void*> inner_;                 // inner blocks, level 1 first, the root last
    std::vector<std::size_t> level_start_;     // inner_ index of each level's first block
    std::unique_ptr<Bits[]> state_;            // per leaf: k* bits above
    std::unique_ptr<std::uint32_t[]> frame_;   // per leaf: its frame while kInFrame
    std::vector<Frame> frames_;              // frame f is slice f % per_block_ of frame_blocks_[f / per_block_]
    std::vector<void*> frame_blocks_;
    std::vector<std::uint32_t> free_frames_;
    std::size_t max_frames_;
    std::size_t hand_ = 0;  // CLOCK hand
    Epoch epoch_ = 0;
    std::size_t last_fault_ = kNone;
    std::ptrdiff_t stride_ = 0;
    std::size_t ahead_until_ = kNone;  // read-ahead issued up to here along stride_
    std::size_t ramp_ = 0;             // the read-ahead window now (grows to readahead along a pattern)
    std::vector<std::size_t> behind_;  // leaves a scan passed: preferred victims, last first
    int write_error_ = 0;                      // first failed write since write_back began
    std::size_t write_failed_ = 0;             // its leaf
    // Scratch of the slow paths (under the mutex), reserved at construction so that
    // paging allocates no heap memory in the steady state.
    std::vector<std::size_t> todo_, held_, next_;
    std::vector<std::uint32_t> chosen_, dirty_, taken_;
    std::vector<os::IoDone> done_;
    std::unique_ptr<IoQueue> io_;
    int fd_ = -1;
    std::string file_;
    std::string unlink_path_;
    bool direct_ = false;
    mutable std::mutex mutex_;
    std::condition_variable_any read_done_;  // a fault's own read finished (kReading cleared)
    PagingStats stats_;
};

}  // namespace detail
}  // namespace physmem
