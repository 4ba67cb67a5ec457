// lab/experiments/prefault_shootdown.cpp — seed 003's TLB shootdowns: a reader thread's
// cost while another thread of the same process releases and re-touches memory.
//
//   physmem_lab_prefault_shootdown --variant array-4k --size 64M --param churn=release
//
// The reader (main thread, timed) does random 8-byte reads of an n = size / 8 word
// buffer on the variant's backing, in batches of 256 reads each timed with TickClock
// (rdtsc). Meanwhile a churner thread loops, each iteration touching every 4 KiB page of
// `churn_bytes` bytes and then releasing them:
//   array-B churn=release  a fresh physmem::Region per iteration (mmap, first-touch
//                          faults, munmap: the unmap must flush the reader's TLB)
//   pool-B  churn=release  one block of a prefaulted pool that never unmaps (allocate,
//                          touch, deallocate); lock=on also mlocks the pool
//   any     churn=none     no churner: the reader alone
//   pool-B  churn=paired   both churners in one process, the reader timed beside each in
//                          turn, a repetition at a time (the main timing beside the pool
//                          churner, phase "munmap" beside the munmapping one; the pool
//                          churner at rate=munmap): the ratio between them is paired, not
//                          one process against another (whose placement alone moved the
//                          reader by 5-10% between runs on the development VM)
// rate: how often the churner releases. max: as often as it can (a pool churner then
// releases hundreds of times as often as a munmapping one: a busy thread beside the reader,
// not the same job). munmap: the rate a munmapping churner of the same bytes reaches on
// this machine, measured in this process for kCalibrate before the reader starts; the
// churner sleeps until each release is due, so both churners do the same job per second
// and the reader sees what releasing costs it, not what a busier neighbour does.
// Record: ns per read (top level), "reader_batch_ns" (p50/p99/p99.9/max of a 256-read
// batch), and "churn": releases, seconds, and TLB shootdown interrupts from the TLB line
// of /proc/interrupts before and after (all CPUs and all processes: the churn=none row is
// the background rate), null when the kernel has no such line; "rate_target" the releases
// a second aimed at (null: as many as it could). paired adds "churn_munmap" and
// "reader_batch_ns_munmap" for the munmapping churner's turns (the TLB count covers both).
// Verified: one more untimed pass sums the reads to the reference (no memory).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "context.hpp"
#include "kernels/prefault.hpp"

namespace {

using namespace lab::prefault;
using Word = std::uint64_t;
constexpr std::uint64_t kBatch = 256;
constexpr std::uint64_t kSeed = 7;

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_prefault_shootdown",
    .experiment = "prefault_shootdown",
    .unit = "element",
    .kinds = {lab::Kind::array, lab::Kind::pool},
    .default_block_size = 1 << 20,
    .params = {{"churn", "release", {"release", "none", "paired"},
                "the churner thread runs, or not; paired: a pool churner and a munmapping one in turn"},
               {"churn_bytes", "1M", {}, "bytes touched and released per churn iteration"},
               {"lock", "off", {"off", "on"}, "pool: mlock the churner's pool"},
               {"rate", "max", {"max", "munmap"},
                "releases per second: as many as the churner can, or a munmapping churner's (calibrated)"},
               {"reads", "1M", {}, "reads per pass"}},
};

// The TLB line of /proc/interrupts summed over CPUs; nullopt when absent.
std::optional<long long> tlb_now() {
    std::ifstream in("/proc/interrupts");
    std::stringstream text;
    text << in.rdbuf();
    long long v = tlb_shootdowns(text.str());
    return v < 0 ? std::nullopt : std::optional<long long>(v);
}

constexpr std::chrono::milliseconds kCalibrate{250};
using Clock = std::chrono::steady_clock;

// Releases per second of a munmapping churner of `bytes` (fresh Region, touch, munmap) run
// on the calling thread for kCalibrate.
double munmap_rate(physmem::Backing backing, std::size_t bytes) {
    const auto t0 = Clock::now();
    std::uint64_t n = 0;
    auto now = t0;
    for (; now - t0 < kCalibrate || n == 0; now = Clock::now(), ++n) {
        physmem::Region r({.bytes = bytes, .backing = backing, .strict_backing = true});
        touch_pages({r.data(), bytes}, 4096, n);
    }
    return static_cast<double>(n) / std::chrono::duration<double>(now - t0).count();
}

// The churner: a thread that, while active, releases and re-touches `bytes` bytes, at most
// `rate` times a second (0: as often as it can), counting releases and active seconds.
// pool: one block of a prefaulted pool (allocate, touch, deallocate), else a fresh Region
// per release (mmap, touch, munmap).
class Churner {
  public:
    struct Options {
        bool pool = false;
        physmem::Backing backing = physmem::Backing::page_4k;
        std::size_t bytes = 0;
        bool lock = false;   // pool: mlock it
        double rate = 0;     // releases a second aimed at; 0: as many as it can
    };
    explicit Churner(const Options& o) : o_(o) {
        if (o.pool)
            pool_ = std::make_unique<physmem::BlockPool>(physmem::PoolOptions{
                .block_size = o.bytes, .capacity = o.bytes, .backing = o.backing, .strict_backing = true,
                .prefault = true, .lock = o.lock});
        thread_ = std::thread([this] { run(); });
    }
    ~Churner() {
        {
            std::lock_guard l(m_);
            stop_ = true;
            active_ = false;  // a running thread parks, then sees stop_
        }
        cv_.notify_all();
        thread_.join();
    }
    // Starts releasing; returns once a release is done, so the reader is timed beside a
    // running churner (and a loaded machine cannot leave it at zero releases).
    void resume() {
        const std::uint64_t was = releases();
        {
            std::lock_guard l(m_);
            active_ = true;
            since_ = Clock::now();
        }
        cv_.notify_all();
        while (releases() == was) std::this_thread::yield();
    }
    // Stops releasing; returns once the thread waits (its release in progress done).
    void pause() {
        std::unique_lock l(m_);
        const bool was = active_.exchange(false);
        cv_.wait(l, [this] { return parked_; });
        if (was) seconds_ += std::chrono::duration<double>(Clock::now() - since_).count();
    }
    std::uint64_t releases() const noexcept { return releases_.load(std::memory_order_relaxed); }
    double seconds() const noexcept { return seconds_; }  // active, up to the last pause
    double rate() const noexcept { return o_.rate; }
    const physmem::BlockPool* pool() const noexcept { return pool_.get(); }

  private:
    void run() {
        Clock::time_point due{};
        for (;;) {
            if (!active_.load(std::memory_order_acquire)) {  // the lock only to park
                std::unique_lock l(m_);
                parked_ = true;
                cv_.notify_all();
                cv_.wait(l, [this] { return active_ || stop_; });
                if (stop_) return;
                parked_ = false;
                due = Clock::now();
            }
            release();
            if (o_.rate > 0)
                std::this_thread::sleep_until(due += std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>(1 / o_.rate)));
        }
    }
    void release() {
        const std::uint64_t k = releases();
        if (pool_) {
            void* b = pool_->allocate();
            touch_pages({static_cast<std::byte*>(b), o_.bytes}, 4096, k);
            pool_->deallocate(b);
        } else {
            physmem::Region r({.bytes = o_.bytes, .backing = o_.backing, .strict_backing = true});
            touch_pages({r.data(), o_.bytes}, 4096, k);
        }  // ~Region: munmap
        releases_.fetch_add(1, std::memory_order_relaxed);
    }

    const Options o_;
    std::unique_ptr<physmem::BlockPool> pool_;
    std::mutex m_;
    std::condition_variable cv_;
    std::atomic<bool> active_{false};  // stored under m_ (the wait's predicate), read without it
    bool parked_ = false, stop_ = false;  // under m_
    Clock::time_point since_{};
    double seconds_ = 0;
    std::atomic<std::uint64_t> releases_{0};
    std::thread thread_;  // last: started once the rest is built
};

// One timed pass of the reader: `reads` random reads in batches, each batch timed.
Word reader_pass(std::span<const Word> a, std::uint64_t reads, Histogram& h) {
    Word s = 0;
    for (std::uint64_t b = 0; b < reads / kBatch; ++b) {
        std::uint64_t t0 = TickClock::now();
        s += random_reads(a, kBatch, kSeed + b);
        h.record(TickClock::now() - t0);
    }
    return s;
}

Word reference(std::size_t n, std::uint64_t reads) {
    Word s = 0;
    for (std::uint64_t b = 0; b < reads / kBatch; ++b) s += expected_random_reads(n, kBatch, kSeed + b);
    return s;
}

lab::Json churn_json(const Churner* c, std::optional<long long> before, std::optional<long long> after,
                     const std::string& source) {
    lab::Json tlb = before && after ? lab::Json(*after - *before) : lab::Json(nullptr);
    if (!c) return {{"releases", 0}, {"seconds", 0}, {"tlb_shootdowns", tlb}, {"rate_target", nullptr}, {"tlb_source", source}};
    lab::Json rate = c->rate() > 0 ? lab::Json(c->rate()) : lab::Json(nullptr);
    return {{"releases", c->releases()}, {"seconds", c->seconds()}, {"tlb_shootdowns", tlb}, {"rate_target", rate},
            {"tlb_source", source}};
}

Churner::Options churner_options(const lab::Settings& s, bool pool) {
    return {.pool = pool, .backing = s.backing, .bytes = s.param_size("churn_bytes"), .lock = s.param("lock") == "on"};
}

lab::Json batch_json(const Histogram& h, double tpn) {
    return {{"batch_reads", kBatch}, {"p50", h.percentile(0.5) / tpn}, {"p99", h.percentile(0.99) / tpn},
            {"p99_9", h.percentile(0.999) / tpn}, {"max", h.max() / tpn}, {"samples", h.count()}};
}

// churn=paired (pool variants): the reader timed beside the pool churner (the record's main
// timing, "churn") and beside a munmapping churner (phase "munmap", "churn_munmap") in turn,
// a repetition at a time, the pool churner releasing as often as the munmapping one did
// alone (munmap_rate); each churner paused while the other runs.
void measure_paired(lab::Context& ctx, std::span<const Word> a, std::uint64_t reads, Histogram& h, Histogram& hm) {
    const lab::Settings& s = ctx.settings();
    Churner::Options po = churner_options(s, true), mo = churner_options(s, false);
    po.rate = munmap_rate(s.backing, po.bytes);
    Churner pool(po), munmap(mo);
    auto before = tlb_now();
    ctx.measure_interleaved({{"", {[&] { return reader_pass(a, reads, h); }, reads, [&] { munmap.pause(); pool.resume(); }}},
                             {"munmap", {[&] { return reader_pass(a, reads, hm); }, reads, [&] { pool.pause(); munmap.resume(); }}}});
    pool.pause();
    munmap.pause();
    auto after = tlb_now();
    const std::string both = "/proc/interrupts TLB line, all CPUs, over both churners' turns";
    ctx.set_field("churn", churn_json(&pool, before, after, both));
    ctx.set_field("churn_munmap", churn_json(&munmap, before, after, both));
    if (pool.pool()) ctx.note("churner pool locked: " + std::string(pool.pool()->stats().locked ? "yes" : "no"));
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const std::size_t n = std::max<std::size_t>(s.size_bytes / sizeof(Word), 1);
    const std::uint64_t reads = std::max<std::uint64_t>(s.param_size("reads") / kBatch, 1) * kBatch;
    const std::string churn = s.param("churn");
    if (churn == "paired" && s.kind != lab::Kind::pool)
        lab::usage_error(kSpec, "--param churn=paired: pool variants only (a pool churner beside a munmapping one)");
    ctx.set_elements(n);
    auto a = ctx.array<Word>("reader", n);
    fill(a);
    Histogram h, hm;  // batch times beside the churner (paired: the pool's) and the munmapping one
    TickClock clock;
    clock.start();
    if (churn == "paired") {
        measure_paired(ctx, a, reads, h, hm);
    } else {
        std::unique_ptr<Churner> churner;
        if (churn == "release") {
            Churner::Options o = churner_options(s, s.kind == lab::Kind::pool);
            if (s.param("rate") == "munmap") o.rate = munmap_rate(s.backing, o.bytes);
            churner = std::make_unique<Churner>(o);
        }
        auto before = tlb_now();
        if (churner) churner->resume();
        ctx.measure(reads, [&] { return reader_pass(a, reads, h); });
        if (churner) churner->pause();
        auto after = tlb_now();
        ctx.set_field("churn", churn_json(churner.get(), before, after,
                                          churner ? "/proc/interrupts TLB line, all CPUs, while the churner ran"
                                                  : "/proc/interrupts TLB line, all CPUs"));
        if (churner && churner->pool())
            ctx.note("churner pool locked: " + std::string(churner->pool()->stats().locked ? "yes" : "no"));
    }
    double tpn = clock.ticks_per_ns();
    ctx.set_field("reader_batch_ns", batch_json(h, tpn));
    if (churn == "paired") ctx.set_field("reader_batch_ns_munmap", batch_json(hm, tpn));
    ctx.set_field("clock", lab::Json{{"name", TickClock::name()}, {"ticks_per_ns", tpn}});
    Histogram unused;
    Word got = reader_pass(a, reads, unused);
    ctx.checksum(got);
    ctx.verify(got == reference(n, reads), "the reads sum to the reference computed from the same indices");
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
