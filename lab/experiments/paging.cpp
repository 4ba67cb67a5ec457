// lab/experiments/paging.cpp — the paging suite (issue 14, seed 001 Table 1 "swapping"):
// 64-bit words larger than a memory budget, paged in software by physmem, by the kernel,
// and by STXXL; the in-memory tree array is the ceiling.
//
//   physmem_lab_paging --variant paged-thp --size 128M --param kernel=seq --param ratio=2
//
// --size is the data (n = size / 8 words, a power of two); the budget is size / ratio.
// Every variant starts from T[i] = i (written out before the measurement).
//   paged-B       physmem::PagedArray on a pool strictly on B (frames and table); the
//                 budget is its residency budget; its own file (--param dir). At 1x
//                 (everything fits) the same data in a TreeArray on B is timed in turn
//                 with it, a repetition at a time (phase "in_memory"), and verified too.
//                 --param leaf=BYTES: leaves of that size cut from the blocks
//                 (PagingOptions::leaf_bytes); 0, the default: a leaf is a block.
//   mapped-4k     the same bytes in a file mapped MAP_SHARED; the process joins a cgroup-v1
//                 memory cgroup limited to the budget + a 1 MiB allowance for its own new
//                 pages (lab/common/memcg.hpp: what it held before is not charged there;
//                 the group's charge by kind and the file's cached pages are recorded);
//                 unavailable (skipped) when the budget cannot hold the kernel's read-ahead
//                 for the file (memcg::paging_unfit_reason); the file's page cache is dropped
//                 (fsync + POSIX_FADV_DONTNEED, mincore-checked), then the file is read
//                 once in order inside the limit, untimed (the paged array's warm start
//                 after its fill); madvise gives the kernel the pattern (MADV_RANDOM for
//                 gups, MADV_SEQUENTIAL for seq). Root only.
//   stxxl-4k      stxxl::vector<uint64_t> with --block-size blocks (a template parameter
//                 in STXXL: 4K and 64K are built in) and budget / block pages of cache
//                 (LRU pager), its disk a file in the same directory; read once in
//                 order through its cache before measuring (the same warm start).
//   tree-index-B  physmem::TreeArray, all in memory (the ceiling; ratio is ignored).
// Kernels (--param kernel):
//   seq      sum of every element in order (segments for the trees; STXXL's bufreader)
//   strided  the same sum, visiting --block-size chunks with a stride of 8 chunks
//            (chunks 0, 8, 16, ..., then 1, 9, ...): every chunk once per pass
//   gups     HPCC RandomAccess updates with its 128-slot look-ahead: each step's 128
//            slots are found first (prefetch_slots() for the paged array: the slots'
//            addresses when their leaves are in memory, else a batch of reads; a CPU
//            prefetch for the mapping and the tree; STXXL has no hint), then updated. Each pass
//            continues the stream; verified by replaying every pass (XOR undoes it).
//   randread random reads with hints, as a reader of a large array would issue them: the
//            same streams give batches of 128 indices, each hinted one batch ahead of its
//            reads (prefetch() for
//            the paged array: its missing leaves read as one batch; MADV_WILLNEED on each
//            element's page for the mapping (MADV_RANDOM otherwise); CPU prefetches for the
//            tree; no hint for STXXL), then each element is read and summed; every pass's
//            sum must equal the sum of its indices (T[i] = i).
//   get      paged only: random reads through get() (no hint), `updates` a pass, by one
//            thread and, in turn a repetition at a time, by --param threads threads
//            splitting the same count (phase "threads"): how reads that hit scale with
//            threads. Each thread continues its own xorshift stream from pass to pass;
//            every pass's sum must equal the sum of its indices.
// The record's "paging" field: budget, and the counters of the measured region (getrusage
// minor/major faults of the whole process, /proc/self/io storage bytes) bracketing
// ctx.measure and nothing else, with the passes and ops they cover (calibration
// included); then the variant's own (PagingStats and STXXL's I/O stats over the same
// passes, the cgroup's peak). A paged seq or randread point above 1x also has
// "fio_beside" (--param fio): the device's own reads (lab/common/fio.hpp) just before and
// just after its measured passes, the bar paging-5 and -6 compare it with.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "context.hpp"
#include "fio.hpp"
#include "kernels/gups.hpp"
#include "kernels/tree_sizing.hpp"
#include "memcg.hpp"
#include "physmem/paged_array.hpp"
#include "physmem/region.hpp"
#include "physmem/segments.hpp"
#include "physmem/tree_array.hpp"

#ifdef PHYSMEM_LAB_HAVE_STXXL
#include <stxxl/vector>
#endif

namespace {

using lab::Kind;
using physmem::Backing;
using Word = std::uint64_t;
namespace G = lab::gups;

constexpr std::size_t kStrideChunks = 8;

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_paging",
    .experiment = "paging",
    .unit = "element",
    .kinds = {Kind::paged, Kind::mapped, Kind::stxxl, Kind::tree_index},
    .default_block_size = 64 << 10,
    .params = {{"kernel", "seq", {"seq", "strided", "gups", "randread", "get"}, "what a pass does (see the file's header)"},
               {"ratio", "2", {"1", "2", "4", "8", "10", "20"}, "data size / memory budget"},
               {"updates", "8192", {}, "gups, randread: updates or reads per pass (rounded up to a multiple of 128)"},
               {"readahead", "32", {}, "paged: leaves read ahead on a pattern (PagingOptions::readahead)"},
               {"leaf", "0", {}, "paged: bytes of a leaf (PagingOptions::leaf_bytes; 0: the block size)"},
               {"threads", "2", {}, "get: the threads timed in turn with one (at least 2)"},
               {"fio", "on", {"on", "off"},
                "paged seq and randread above 1x: fio's reads of a file of the data's size in the same directory, "
                "just before and just after the measured passes (the bar of paging-5 and -6, beside the point)"},
               {"dir", "", {}, "directory of the files (default $TMPDIR, else /var/tmp)"}},
    .only_backings = {{Kind::paged, {Backing::thp, Backing::page_4k}},
                      {Kind::mapped, {Backing::page_4k}},
                      {Kind::stxxl, {Backing::page_4k}},
                      {Kind::tree_index, {Backing::thp, Backing::page_4k}}},
};

// What the counters bracketed: every call of the pass inside ctx.measure (warm-up,
// calibration and timed repetitions), so bytes and faults per op are counter / ops of
// one process (a record pooled over rounds keeps its first round's payload).
struct Measured {
    lab::memcg::Counters counters;
    std::uint64_t passes = 0, ops = 0;
};

lab::Json measured_json(const Measured& m) {
    const lab::memcg::Counters& c = m.counters;
    return {{"minor_faults", c.minor_faults}, {"major_faults", c.major_faults}, {"read_bytes", c.read_bytes},
            {"write_bytes", c.write_bytes}, {"passes", m.passes}, {"ops", m.ops}};
}

// --- the kernels, over an access object A with the operations each needs -------------

// sum of every element, chunk by chunk in `order` (chunk = block_size bytes).
template <class Chunk>
Word strided_sum(std::size_t n, std::size_t chunk, Chunk&& sum_chunk) {
    std::size_t chunks = (n + chunk - 1) / chunk;
    Word s = 0;
    for (std::size_t first = 0; first < kStrideChunks; ++first)
        for (std::size_t k = first; k < chunks; k += kStrideChunks) s += sum_chunk(k * chunk, std::min(n, (k + 1) * chunk));
    return s;
}

// HPCC's updates with the look-ahead, `steps` steps of the 128 streams in `ran` (each
// continues where it stopped): `hint(idx)` for the 128 slots, then `update(idx, v)` for
// the whole step. In-memory variants' hints keep the slot pointers they prefetch (HPCC's
// look-ahead, one walk per update) and their updates use them: a loop of prefetches alone
// is code the compiler may delete (GCC 12 at -O3 did, for a TreeArray). One call per step,
// not per update: with a call through std::function per update, the updates in flight
// were bounded by the calls' instructions, and one test more in the paged update (its
// batch's slots valid) made it 1.13x the tree's at 1x (64 MiB, 4 KiB leaves: 20.5 against
// 18.3 ns an update); batched, 0.99-1.00x (11-13 ns an update on both).
template <class Hint, class Update>
Word gups_steps(std::array<Word, G::kStreams>& ran, Word steps, Word mask, Hint&& hint, Update&& update) {
    std::array<std::size_t, G::kStreams> idx;
    for (Word i = 0; i < steps; ++i) {
        for (unsigned j = 0; j < G::kStreams; ++j) {
            ran[j] = G::step(ran[j]);
            idx[j] = ran[j] & mask;
        }
        hint(std::span<const std::size_t>(idx));
        update(std::span<const std::size_t>(idx), std::span<const Word>(ran));
    }
    return ran[0];
}

// `steps` batches of 128 reads from the streams in `ran` (each continues where it stopped),
// one batch hinted ahead: hint(b', batch i + 1), then read(b, j, idx[j]) for each of batch
// i (b = i % 2, b' = 1 - b), so the hinted reads of one batch overlap the reading of the
// last (a pass's first batch is hinted just before it is read). Returns the sum of the
// values read; the indices' sum is added to `expected`.
template <class Hint, class Read>
Word read_steps(std::array<Word, G::kStreams>& ran, Word steps, Word mask, Hint&& hint, Read&& read,
                Word& expected) {
    std::array<std::array<std::size_t, G::kStreams>, 2> idx;
    auto next = [&](unsigned b) {
        for (unsigned j = 0; j < G::kStreams; ++j) {
            ran[j] = G::step(ran[j]);
            idx[b][j] = ran[j] & mask;
            expected += idx[b][j];
        }
        hint(b, std::span<const std::size_t>(idx[b]));
    };
    Word sum = 0;
    if (steps) next(0);
    for (Word i = 0; i < steps; ++i) {
        const unsigned b = i % 2;
        if (i + 1 < steps) next(1 - b);
        for (unsigned j = 0; j < G::kStreams; ++j) sum += read(b, j, idx[b][j]);
    }
    return sum;
}

// What the kernels do on one variant (each kernel uses its own).
struct Ops {
    std::function<Word()> seq;
    std::function<Word(std::size_t lo, std::size_t hi)> chunk_sum;
    std::function<void(std::span<const std::size_t>)> hint;
    // T[idx[j]] ^= v[j] for each j in order (idx the step's slots, as given to hint).
    std::function<void(std::span<const std::size_t>, std::span<const Word>)> update;
    // randread: hint batch b (0 or 1, alternating) of indices, then read(b, j, i): T[i], i
    // the j-th index of batch b (a hint may keep what it found per batch and slot).
    std::function<void(unsigned, std::span<const std::size_t>)> read_hint;
    std::function<Word(unsigned, unsigned, std::size_t)> read;
    std::function<void()> measured = [] {};       // called right after the timed passes
};

// Touches 256 KiB of stack below this frame, so that no pass faults in a stack page
// (the measured passes count the process's faults).
[[gnu::noinline]] void prefault_stack() {
    volatile char buf[256 << 10];
    for (std::size_t i = 0; i < sizeof buf; i += 4096) buf[i] = 0;
}

// The chosen kernel bound to one variant's operations: `pass` runs a pass of `ops` ops;
// `check`, after the timed passes, replays what needs replaying and returns whether every
// result was right, with what was compared in words. Its state lives in the lambdas.
struct Bound {
    std::uint64_t ops = 0;
    std::function<Word()> pass;
    std::function<std::pair<bool, std::string>()> check;
};

Bound bind(lab::Context& ctx, std::size_t n, const Ops& ops) {
    const lab::Settings& s = ctx.settings();
    const std::string kernel = s.param("kernel");
    const std::size_t chunk = s.block_size / sizeof(Word);
    if (kernel == "seq" || kernel == "strided") {
        const Word total = static_cast<Word>(n) * (n - 1) / 2;
        auto ok = std::make_shared<bool>(true);
        return {n,
                [&ops, ok, n, chunk, total, seq = kernel == "seq"] {
                    Word sum = seq ? ops.seq() : strided_sum(n, chunk, ops.chunk_sum);
                    *ok = *ok && sum == total;
                    return sum;
                },
                [ok] { return std::pair{*ok, std::string("every pass's sum equals n(n-1)/2 (T[i] = i)")}; }};
    }
    // Stream j starts at x^(2^40 + j 2^34) of HPCC's sequence and every pass continues
    // each stream where the last stopped (repeating one pass would measure a working set
    // that fits the budget once loaded; the stream's first values, x^k for small k, are
    // sparse polynomials whose low bits hit a handful of slots).
    const Word updates = G::round_updates(s.param_size("updates"));
    const Word steps = updates / G::kStreams;
    ctx.set_param("updates", updates);
    struct State {
        std::array<Word, G::kStreams> start, ran;
        Word passes = 0;
        bool ok = true;
    };
    auto st = std::make_shared<State>();
    for (unsigned j = 0; j < G::kStreams; ++j) st->start[j] = G::starts((Word{1} << 40) + j * (Word{1} << 34));
    st->ran = st->start;
    if (kernel == "randread")
        return {updates,
                [&ops, st, steps, n] {
                    Word expected = 0;
                    Word sum = read_steps(st->ran, steps, n - 1, ops.read_hint, ops.read, expected);
                    st->ok = st->ok && sum == expected;
                    return sum;
                },
                [st] {
                    return std::pair{st->ok, std::string("every pass's sum of the elements read equals the sum of "
                                                         "their indices (T[i] = i)")};
                }};
    return {updates,
            [&ops, st, steps, n] {
                ++st->passes;
                return gups_steps(st->ran, steps, n - 1, ops.hint, ops.update);
            },
            [&ops, st, steps, n, chunk] {
                st->ran = st->start;  // the same values again: XOR undoes them
                gups_steps(st->ran, st->passes * steps, n - 1, ops.hint, ops.update);
                std::size_t wrong = 0;
                for (std::size_t lo = 0; lo < n; lo += chunk) {
                    Word got = ops.chunk_sum(lo, std::min(n, lo + chunk)), want = 0;
                    for (std::size_t i = lo; i < std::min(n, lo + chunk); ++i) want += i;
                    wrong += got != want;
                }
                return std::pair{wrong == 0, "after the measured passes and a replay of each (XOR undoes itself) "
                                             "every chunk's sum is that of T[i] = i; " +
                                                 std::to_string(wrong) + " chunks differ"};
            }};
}

// Runs the chosen kernel on one variant and verifies it; with a `reference` (the same
// data in memory: paged at 1x) its pass runs too, in turn with the variant's a repetition
// at a time (phase "in_memory"), and is verified as well.
// Returns the untimed passes it ran before measuring.
std::size_t run_kernel(lab::Context& ctx, std::size_t n, const Ops& ops, Measured& measured,
                       const Ops* reference = nullptr, std::size_t leaves = 0) {
    prefault_stack();
    Bound mine = bind(ctx, n, ops);
    std::optional<Bound> ref;
    if (reference) ref = bind(ctx, n, *reference);
    // GUPS at 1x: untimed passes until every leaf has been written once (in expectation,
    // and then some): the paged array's first write to a leaf after the fill's flush sets
    // its dirty tag in the slow path, once per leaf — a transient that small passes would
    // spread over the timed repetitions, not the hit path paging-3 judges. Both sides run
    // them (the check replays every pass).
    std::size_t untimed = 0;
    if (ref && leaves && ctx.settings().param("kernel") == "gups") {
        const double want = static_cast<double>(leaves) * (std::log(static_cast<double>(leaves)) + 3);
        untimed = static_cast<std::size_t>(std::ceil(want / static_cast<double>(mine.ops)));
        for (std::size_t i = 0; i < untimed; ++i) mine.pass(), ref->pass();
    }
    // The counters bracket the whole timed region (reading them per pass would add tens of
    // microseconds to each pass); the measuring code between passes allocates nothing.
    std::uint64_t calls = 0;
    const std::function<Word()> each = [&calls, &mine] { ++calls; return mine.pass(); };  // built outside the bracket
    auto before = lab::memcg::counters();
    if (ref) ctx.measure_interleaved({{"", {each, mine.ops, {}}}, {"in_memory", {ref->pass, ref->ops, {}}}});
    else ctx.measure(mine.ops, each);
    measured.counters += lab::memcg::counters_end() - before;
    measured.passes += calls;
    measured.ops += calls * mine.ops;
    ops.measured();
    auto [ok, how] = mine.check();
    if (ref) {
        auto [ref_ok, ref_how] = ref->check();
        ok = ok && ref_ok;
        how += std::string("; the in-memory reference's too") + (ref_ok ? "" : " (it failed: " + ref_how + ")");
    }
    ctx.checksum(ops.seq());
    ctx.verify(ok, how);
    return untimed;
}

// The get kernel: a pass is `reads` random get()s split over `threads` threads (the
// caller one of them), each thread continuing its own xorshift stream.
Bound bind_get(physmem::PagedArray<Word>& a, std::size_t reads, unsigned threads) {
    struct State {
        std::vector<Word> x;
        std::atomic<bool> ok{true};
    };
    auto st = std::make_shared<State>();
    for (unsigned t = 0; t < threads; ++t) st->x.push_back(0x9E3779B97F4A7C15ull * (t + 1) + threads);
    auto part = [&a, st, n = a.size()](unsigned t, std::size_t m) {
        Word x = st->x[t], sum = 0, want = 0;
        for (std::size_t r = 0; r < m; ++r) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            const std::size_t i = x & (n - 1);
            sum += a.get(i);
            want += i;
        }
        st->x[t] = x;
        if (sum != want) st->ok = false;
        return sum;
    };
    return {reads,
            [part, reads, threads] {
                std::vector<std::thread> helpers;
                for (unsigned t = 1; t < threads; ++t) helpers.emplace_back([&part, t, reads, threads] {
                    part(t, reads / threads);
                });
                Word sum = part(0, reads - (threads - 1) * (reads / threads));
                for (auto& h : helpers) h.join();
                return sum;
            },
            [st, threads] {
                return std::pair{st->ok.load(), "every pass's sum of the elements read equals the sum of their "
                                                "indices (T[i] = i), on one thread and on " +
                                                    std::to_string(threads)};
            }};
}

// get: one thread and `threads` threads in turn (phase "threads").
void run_get(lab::Context& ctx, physmem::PagedArray<Word>& a, const Ops& ops, Measured& measured) {
    const lab::Settings& s = ctx.settings();
    const std::size_t threads = s.param_size("threads");
    if (threads < 2 || threads > 256) lab::usage_error(kSpec, "--param threads: from 2 to 256");
    const std::size_t reads = std::max<std::size_t>(s.param_size("updates"), threads);
    prefault_stack();
    Bound one = bind_get(a, reads, 1), many = bind_get(a, reads, static_cast<unsigned>(threads));
    std::uint64_t calls = 0;  // of both jobs: the counters bracket them all
    const std::function<Word()> each = [&calls, &one] { ++calls; return one.pass(); };
    const std::function<Word()> each_many = [&calls, &many] { ++calls; return many.pass(); };
    auto before = lab::memcg::counters();
    ctx.measure_interleaved({{"", {each, one.ops, {}}}, {"threads", {each_many, many.ops, {}}}});
    measured.counters += lab::memcg::counters_end() - before;
    measured.passes += calls;
    measured.ops += calls * one.ops;
    ops.measured();
    const bool ok1 = one.check().first;
    auto [ok2, how] = many.check();  // names both
    ctx.checksum(a.get(0) + a.get(a.size() - 1));
    ctx.verify(ok1 && ok2, how);
}

// --- the variants -------------------------------------------------------------------------

// The scans of an array with segments (TreeArray, PagedArray): a leaf at a time. Each
// segment is summed into a local (the compiler cannot keep an outer `sum` it reaches
// by reference in a register when the data are of the same type: whether it did
// depended on inlining, and made the in-memory tree's scan 1.4x slower than the paged
// one's).
template <class A>
Ops segment_ops(const A& a) {
    auto sum_range = [&a](std::size_t lo, std::size_t hi) {
        Word sum = 0;
        physmem::for_each_segment(a, lo, hi, [&sum](std::span<const Word> seg) {
            Word s = 0;
            for (Word x : seg) s += x;
            sum += s;
        });
        return sum;
    };
    Ops ops;
    ops.seq = [&a, sum_range] { return sum_range(0, a.size()); };
    ops.chunk_sum = sum_range;
    return ops;
}

// The in-memory tree's operations. In-memory hints keep the slot pointers they prefetch
// (HPCC's look-ahead, one walk per update or read) and the accesses use them: a loop of
// prefetches alone is code the compiler may delete (GCC 12 at -O3 did, for a TreeArray).
// Reads keep a slot array per batch (the hint runs a batch ahead); a second walk in the
// read made the loop twice as long and the reads 3-5x slower.
Ops tree_ops(physmem::TreeArray<Word>& t) {
    Ops ops = segment_ops(t);
    auto slot = std::make_shared<std::array<Word*, G::kStreams>>();
    ops.hint = [&t, slot](std::span<const std::size_t> idx) {
        for (unsigned j = 0; j < G::kStreams; ++j) __builtin_prefetch((*slot)[j] = &t[idx[j]], 1);
    };
    ops.update = [slot](std::span<const std::size_t> idx, std::span<const Word> v) {
        for (std::size_t j = 0; j < idx.size(); ++j) *(*slot)[j] ^= v[j];
    };
    auto rslot = std::make_shared<std::array<std::array<const Word*, G::kStreams>, 2>>();
    ops.read_hint = [&t, rslot](unsigned b, std::span<const std::size_t> idx) {
        for (unsigned j = 0; j < G::kStreams; ++j) __builtin_prefetch((*rslot)[b][j] = &std::as_const(t)[idx[j]]);
    };
    ops.read = [rslot](unsigned b, unsigned j, std::size_t) { return *(*rslot)[b][j]; };
    return ops;
}

void run_tree(lab::Context& ctx, std::size_t n, Measured& measured) {
    const lab::Settings& s = ctx.settings();
    physmem::TreeArray<Word> t(n, ctx.pool("table", lab::tree_bytes<Word>(s.block_size, n)));
    ctx.set_tree(s.block_size, t.depth(), t.leaf_length());
    G::reset(t);
    Ops ops = tree_ops(t);
    run_kernel(ctx, n, ops, measured);
}

// fio beside a paged seq or randread point above 1x (param fio): its reads, as the device
// program's, of a file of the data's size in the same directory — random reads of a leaf
// at the pager's queue depth, or sequential reads of a leaf into 2 MiB hugetlb buffers (the
// frames are huge pages; malloc's when none can be had) — or nullptr (a note says why when
// fio or O_DIRECT is missing).
std::unique_ptr<lab::fio::Beside> fio_beside(lab::Context& ctx, std::size_t n, std::size_t budget, std::size_t leaf,
                                             std::size_t depth) {
    const lab::Settings& s = ctx.settings();
    const std::string kernel = s.param("kernel");
    if (s.param("fio") != "on" || (kernel != "seq" && kernel != "randread") || budget >= n * sizeof(Word))
        return nullptr;
    const bool seq = kernel == "seq";
    lab::fio::Read spec{.pattern = seq ? "read" : "randread", .engine = "io_uring", .depth = depth, .block = leaf,
                        .runtime_ms = 200, .iomem = seq ? "shmhuge" : "malloc"};
    try {
        return std::make_unique<lab::fio::Beside>(lab::data_dir(s), n * sizeof(Word), spec, kSpec.name);
    } catch (const physmem::backing_unavailable& e) {
        ctx.note(std::string("no fio beside the point: ") + e.what());
        return nullptr;
    }
}

void run_paged(lab::Context& ctx, std::size_t n, std::size_t budget, Measured& measured) {
    const lab::Settings& s = ctx.settings();
    physmem::TreeShape shape = physmem::TreeShape::make(s.block_size, sizeof(Word));
    std::size_t table = (shape.leaves_for(n) / (std::size_t{1} << shape.fan_shift) + 2) * s.block_size;
    physmem::BlockPool& pool = ctx.pool("frames", budget + table);
    physmem::PagingOptions o;
    o.budget = budget;
    o.dir = lab::data_dir(s);
    o.readahead = s.param_size("readahead");
    o.leaf_bytes = s.param_size("leaf");
    std::optional<physmem::PagedArray<Word>> made;
    try {
        made.emplace(n, pool, o);
    } catch (const std::invalid_argument& e) {
        lab::usage_error(kSpec, std::string("--param leaf: ") + e.what());
    }
    physmem::PagedArray<Word>& a = *made;
    physmem::for_each_segment(a, [i = Word{0}](std::span<Word> seg) mutable {
        for (Word& x : seg) x = i++;
    });
    a.flush();
    const physmem::PagingStats before = a.stats();
    Ops ops = segment_ops(a);
    // The look-ahead: when the batch's leaves are all in memory, prefetch_slots gives
    // their addresses (one walk per update, as in memory); otherwise it starts their reads
    // as one batch and the updates go through operator[].
    std::array<Word*, G::kStreams> slot;
    bool slots = false;
    ops.hint = [&](std::span<const std::size_t> idx) { slots = a.prefetch_slots(idx, slot.data()); };
    ops.update = [&](std::span<const std::size_t> idx, std::span<const Word> v) {
        if (slots) {
            for (std::size_t j = 0; j < idx.size(); ++j) *slot[j] ^= v[j];
        } else {
            for (std::size_t j = 0; j < idx.size(); ++j) a[idx[j]] ^= v[j];
        }
    };
    // Reads: prefetch() (a CPU prefetch where the leaf is in memory, else the batch's
    // missing leaves read together), then the const walk, which loads what is still missing.
    ops.read_hint = [&](unsigned, std::span<const std::size_t> idx) { a.prefetch(idx); };
    ops.read = [&](unsigned, unsigned, std::size_t i) { return std::as_const(a)[i]; };
    physmem::PagingStats after;
    ops.measured = [&] { after = a.stats(); };
    // Everything fits (1x): the same data in memory, on the same backing, is timed in turn
    // with the paged array (paging-3 compares them within one process).
    std::optional<physmem::TreeArray<Word>> mem;
    Ops mem_ops;
    if (budget >= n * sizeof(Word) && s.param("kernel") != "get") {
        mem.emplace(n, ctx.pool("memory", lab::tree_bytes<Word>(s.block_size, n)));
        G::reset(*mem);
        mem_ops = tree_ops(*mem);
    }
    std::unique_ptr<lab::fio::Beside> fio = fio_beside(ctx, n, budget, a.pager().leaf_bytes(), o.queue_depth);
    if (fio) fio->pass("before");
    std::size_t untimed = 0;
    if (s.param("kernel") == "get") run_get(ctx, a, ops, measured);
    else untimed = run_kernel(ctx, n, ops, measured, mem ? &mem_ops : nullptr, a.leaf_count());
    if (fio) {
        fio->pass("after");
        ctx.set_field("fio_beside", fio->json());  // its "ok": every pass read, no error (the point's own check stands apart)
    }
    ctx.set_tree(s.block_size, a.shape().depth_for_leaves(a.leaf_count()), a.leaf_length());  // its table's shape
    ctx.set_field("paged", {{"io", after.io}, {"direct", after.direct}, {"file", a.file()},
                            {"leaves", after.leaves}, {"leaf_bytes", a.pager().leaf_bytes()},
                            {"frames", after.frames}, {"resident", after.resident},
                            {"faults", after.faults - before.faults}, {"loads", after.loads - before.loads},
                            {"evictions", after.evictions - before.evictions},
                            {"writebacks", after.writebacks - before.writebacks},
                            {"bytes_read", after.bytes_read - before.bytes_read},
                            {"bytes_written", after.bytes_written - before.bytes_written},
                            {"readahead_issued", after.readahead_issued - before.readahead_issued},
                            {"readahead_hits", after.readahead_hits - before.readahead_hits},
                            {"hinted", after.hinted - before.hinted}, {"untimed_passes", untimed}});
}

// A file of n words T[i] = i, written through a mapping outside any limit.
struct DataFile {
    int fd = -1;
    std::string path;
    DataFile(const std::string& dir, std::size_t bytes) {
        path = dir + "/physmem-lab-mapped-" + std::to_string(::getpid());
        fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno));
        if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0)
            throw std::runtime_error("cannot size " + path + ": " + std::strerror(errno));
    }
    ~DataFile() {
        ::close(fd);
        ::unlink(path.c_str());
    }
};

struct Mapping {
    Word* p;
    std::size_t bytes;
    Mapping(int fd, std::size_t b) : bytes(b) {
        void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) throw std::runtime_error(std::string("mmap of the data file: ") + std::strerror(errno));
        p = static_cast<Word*>(m);
    }
    ~Mapping() { ::munmap(p, bytes); }
};

// The warm start every variant shares: the paged array's measurement starts after its
// fill (the data written once in order, a budget's worth of leaves in memory), so the
// mapping, after its page cache is dropped, is read once in order inside its limit,
// untimed and uncounted (a cold start would measure compulsory misses: at 1x, every
// fault of a GUPS run, at 2x fewer misses than the steady state). Called after the
// madvise for the kernel: read under MADV_NORMAL, the cache made GUPS's updates write
// 25-40 KB per update at 2x (read-ahead's large folios written back whole, presumably;
// 6.18 here), against 3 KB when the pages come in as its own faults bring them.
// Returns the file's pages in memory afterwards (mincore).
std::size_t warm_mapping(const Word* p, std::size_t bytes) {
    const std::size_t step = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)) / sizeof(Word);
    Word sum = 0;
    for (std::size_t i = 0; i < bytes / sizeof(Word); i += step) sum += p[i];
    asm volatile("" ::"r"(sum));
    return lab::memcg::cached_pages(p, bytes);
}

void run_mapped(lab::Context& ctx, std::size_t n, std::size_t budget, Measured& measured) {
    if (std::string why = lab::memcg::unavailable_reason(); !why.empty())
        throw physmem::backing_unavailable("mapped: " + why);
    const std::size_t bytes = n * sizeof(Word);
    DataFile file(lab::data_dir(ctx.settings()), bytes);
    // The kernel's best hint for the kernel's access pattern (no read-around for random
    // updates; aggressive read-ahead for a scan).
    const std::string& kernel = ctx.settings().param("kernel");
    int advice = kernel == "gups" || kernel == "randread" ? MADV_RANDOM
                 : kernel == "seq"                        ? MADV_SEQUENTIAL
                                                          : MADV_NORMAL;
    if (std::string why = lab::memcg::paging_unfit_reason(file.fd, advice, budget, bytes); !why.empty())
        throw physmem::backing_unavailable("mapped: " + why);
    {
        Mapping m(file.fd, bytes);
        for (std::size_t i = 0; i < n; ++i) m.p[i] = i;
        ::msync(m.p, bytes, MS_SYNC);
    }
    std::size_t held = lab::memcg::resident_bytes();  // not charged to the new group (memcg.hpp)
    lab::memcg::Limit limit(lab::memcg::limit_for(budget));
    std::size_t cached = lab::memcg::drop_cache(file.fd, bytes);
    Mapping m(file.fd, bytes);
    Word* p = m.p;
    ::madvise(p, bytes, advice);
    std::size_t warm = warm_mapping(p, bytes);
    Ops ops;
    ops.seq = [p, n] {
        Word sum = 0;
        for (std::size_t i = 0; i < n; ++i) sum += p[i];
        return sum;
    };
    ops.chunk_sum = [p](std::size_t lo, std::size_t hi) {
        Word sum = 0;
        for (std::size_t i = lo; i < hi; ++i) sum += p[i];
        return sum;
    };
    std::array<Word*, G::kStreams> slot;
    ops.hint = [&slot, p](std::span<const std::size_t> idx) {
        for (unsigned j = 0; j < G::kStreams; ++j) __builtin_prefetch(slot[j] = p + idx[j], 1);
    };
    ops.update = [&slot](std::span<const std::size_t> idx, std::span<const Word> v) {
        for (std::size_t j = 0; j < idx.size(); ++j) *slot[j] ^= v[j];
    };
    // The hint a reader gives the kernel: MADV_WILLNEED on each element's page.
    ops.read_hint = [p](unsigned, std::span<const std::size_t> idx) {
        for (std::size_t i : idx) lab::memcg::willneed(p + i, sizeof(Word));
    };
    ops.read = [p](unsigned, unsigned, std::size_t i) { return p[i]; };
    run_kernel(ctx, n, ops, measured);
    const std::size_t after = lab::memcg::cached_pages(p, bytes);
    const lab::memcg::Limit::Usage use = limit.usage();
    ctx.set_field("mapped", {{"cgroup", limit.path()},
                             {"madvise", advice == MADV_RANDOM ? "random" : advice == MADV_SEQUENTIAL ? "sequential" : "normal"},
                             {"read_hint", kernel == "randread" ? "willneed" : "none"},
                             {"limit_bytes", lab::memcg::limit_for(budget)}, {"own_allowance_bytes", lab::memcg::kOwnAllowance},
                             {"held_before_bytes", held},
                             {"readahead_window_bytes", lab::memcg::readahead_window(file.fd, advice)},
                             {"cached_pages_after_drop", cached}, {"cached_pages_after_warm", warm},
                             {"cached_pages_after_passes", after},
                             {"cgroup_usage", {{"cache_bytes", use.cache}, {"mapped_file_bytes", use.mapped_file},
                                               {"rss_bytes", use.rss}, {"kmem_bytes", use.kmem}}},
                             {"cgroup_max_usage_bytes", limit.max_usage()},
                             {"cgroup_failcnt", limit.failcnt()}, {"file", file.path}});
}

#ifdef PHYSMEM_LAB_HAVE_STXXL
template <std::size_t Block>
using StxxlVector = typename stxxl::VECTOR_GENERATOR<Word, 1, 8, Block, stxxl::RC, stxxl::lru>::result;

// STXXL's disk: a file in `dir`, grown as needed, deleted at exit; its messages to stderr
// (the record owns stdout) and no log files in the working directory.
void configure_stxxl(const std::string& dir, std::size_t bytes) {
    ::setenv("STXXLLOGFILE", "/dev/null", 1);
    ::setenv("STXXLERRLOGFILE", "/dev/null", 1);
    std::cout.rdbuf(std::cerr.rdbuf());
    stxxl::disk_config disk(dir + "/physmem-lab-stxxl-" + std::to_string(::getpid()), bytes,
                            "syscall direct=try unlink_on_open");
    disk.autogrow = true;
    disk.delete_on_exit = true;
    stxxl::config::get_instance()->add_disk(disk);
}

lab::Json stxxl_json(const stxxl::stats_data& d) {
    return {{"reads", d.get_reads()}, {"writes", d.get_writes()}, {"bytes_read", d.get_read_volume()},
            {"bytes_written", d.get_written_volume()}};
}

template <std::size_t Block>
void run_stxxl_blocks(lab::Context& ctx, std::size_t n, std::size_t budget, Measured& measured) {
    using V = StxxlVector<Block>;
    configure_stxxl(lab::data_dir(ctx.settings()), 2 * n * sizeof(Word));
    const std::size_t pages = std::max<std::size_t>(1, budget / Block);
    V v(n, pages);
    {
        typename V::bufwriter_type w(v);
        for (std::size_t i = 0; i < n; ++i) w << static_cast<Word>(i);
        w.finish();
    }
    v.flush();
    const V& cv = v;
    {  // the warm start (see warm_mapping): one read in order through the vector's cache
        Word sum = 0;
        for (std::size_t i = 0; i < n; i += Block / sizeof(Word)) sum += cv[i];
        asm volatile("" ::"r"(sum));
    }
    stxxl::stats_data before(*stxxl::stats::get_instance());
    Ops ops;
    ops.seq = [&] {
        Word sum = 0;
        for (typename V::bufreader_type r(cv); !r.empty(); ++r) sum += *r;
        return sum;
    };
    ops.chunk_sum = [&](std::size_t lo, std::size_t hi) {
        Word sum = 0;
        for (std::size_t i = lo; i < hi; ++i) sum += cv[i];
        return sum;
    };
    ops.hint = [](std::span<const std::size_t>) {};
    ops.update = [&](std::span<const std::size_t> idx, std::span<const Word> x) {
        for (std::size_t j = 0; j < idx.size(); ++j) v[idx[j]] ^= x[j];
    };
    ops.read_hint = [](unsigned, std::span<const std::size_t>) {};
    ops.read = [&](unsigned, unsigned, std::size_t i) { return cv[i]; };
    stxxl::stats_data after;
    ops.measured = [&] { after = stxxl::stats_data(*stxxl::stats::get_instance()); };
    run_kernel(ctx, n, ops, measured);
    ctx.set_field("stxxl", {{"block_bytes", Block}, {"cache_pages", pages}, {"pager", "lru"},
                            {"io", "syscall, direct=try"}, {"warm_pass", true}, {"version", stxxl::get_version_string_long()},
                            {"measured", stxxl_json(after - before)}});
}

// STXXL's block size is a template parameter: the two the suite uses are built in.
void run_stxxl(lab::Context& ctx, std::size_t n, std::size_t budget, Measured& measured) {
    switch (ctx.settings().block_size) {
        case 4 << 10: return run_stxxl_blocks<4 << 10>(ctx, n, budget, measured);
        case 64 << 10: return run_stxxl_blocks<64 << 10>(ctx, n, budget, measured);
        default: throw std::invalid_argument("stxxl: --block-size must be 4K or 64K (built in)");
    }
}
#else
void run_stxxl(lab::Context&, std::size_t, std::size_t, lab::memcg::Counters&) {
    throw physmem::backing_unavailable("stxxl: this build has no STXXL (Debian libstxxl-dev)");
}
#endif

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const std::size_t n = std::bit_floor(std::max<std::size_t>(s.size_bytes / sizeof(Word), 2));
    const std::size_t ratio = s.param_size("ratio");
    const std::size_t budget = n * sizeof(Word) / ratio;
    ctx.set_elements(n);
    Measured measured;
    if (s.param("kernel") == "get" && s.kind != Kind::paged) lab::usage_error(kSpec, "--param kernel=get: paged only");
    switch (s.kind) {
        case Kind::paged: run_paged(ctx, n, budget, measured); break;
        case Kind::mapped: run_mapped(ctx, n, budget, measured); break;
        case Kind::stxxl: run_stxxl(ctx, n, budget, measured); break;
        default: run_tree(ctx, n, measured); break;
    }
    ctx.set_field("paging", {{"budget_bytes", s.kind == Kind::tree_index ? n * sizeof(Word) : budget},
                             {"data_bytes", n * sizeof(Word)},
                             {"ratio", s.kind == Kind::tree_index ? 1 : ratio},
                             {"block_bytes", s.block_size},
                             {"measured", measured_json(measured)}});
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
