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
// Record: ns per read (top level), "reader_batch_ns" (p50/p99/p99.9/max of a 256-read
// batch), and "churn": releases, seconds, and TLB shootdown interrupts from the TLB line
// of /proc/interrupts before and after (all CPUs and all processes: the churn=none row is
// the background rate), null when the kernel has no such line.
// Verified: one more untimed pass sums the reads to the reference (no memory).
#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
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
    .params = {{"churn", "release", {"release", "none"}, "the churner thread runs, or not"},
               {"churn_bytes", "1M", {}, "bytes touched and released per churn iteration"},
               {"lock", "off", {"off", "on"}, "pool: mlock the churner's pool"},
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

// The churner: runs iterate() until stopped; counts iterations (= releases).
class Churner {
  public:
    Churner(const lab::Settings& s, std::size_t bytes) : s_(s), bytes_(bytes) {
        if (s.kind == lab::Kind::pool)
            pool_ = std::make_unique<physmem::BlockPool>(physmem::PoolOptions{
                .block_size = bytes, .capacity = bytes, .backing = s.backing, .strict_backing = true,
                .prefault = true, .lock = s.param("lock") == "on"});
    }
    // Returns once the first release is done, so the reader is timed beside a running
    // churner (and a loaded machine cannot leave it at zero releases).
    void start() {
        t0_ = std::chrono::steady_clock::now();
        thread_ = std::thread([this] { while (!stop_.load(std::memory_order_relaxed)) iterate(); });
        while (releases_.load(std::memory_order_relaxed) == 0) std::this_thread::yield();
    }
    void stop() {
        stop_ = true;
        thread_.join();
        seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    }
    std::uint64_t releases() const noexcept { return releases_.load(); }
    double seconds() const noexcept { return seconds_; }
    const physmem::BlockPool* pool() const noexcept { return pool_.get(); }

  private:
    void iterate() {
        if (pool_) {
            void* b = pool_->allocate();
            touch_pages({static_cast<std::byte*>(b), bytes_}, 4096, releases_);
            pool_->deallocate(b);
        } else {
            physmem::Region r({.bytes = bytes_, .backing = s_.backing, .strict_backing = true});
            touch_pages({r.data(), bytes_}, 4096, releases_);
        }  // ~Region: munmap
        releases_.fetch_add(1, std::memory_order_relaxed);
    }

    const lab::Settings& s_;
    const std::size_t bytes_;
    std::unique_ptr<physmem::BlockPool> pool_;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::atomic<std::uint64_t> releases_{0};
    std::chrono::steady_clock::time_point t0_{};
    double seconds_ = 0;
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

lab::Json churn_json(const Churner* c, std::optional<long long> before, std::optional<long long> after) {
    lab::Json tlb = before && after ? lab::Json(*after - *before) : lab::Json(nullptr);
    if (!c) return {{"releases", 0}, {"seconds", 0}, {"tlb_shootdowns", tlb}, {"tlb_source", "/proc/interrupts TLB"}};
    return {{"releases", c->releases()}, {"seconds", c->seconds()}, {"tlb_shootdowns", tlb},
            {"tlb_source", "/proc/interrupts TLB line, all CPUs, whole process lifetime of the churner"}};
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const std::size_t n = std::max<std::size_t>(s.size_bytes / sizeof(Word), 1);
    const std::uint64_t reads = std::max<std::uint64_t>(s.param_size("reads") / kBatch, 1) * kBatch;
    ctx.set_elements(n);
    auto a = ctx.array<Word>("reader", n);
    fill(a);
    std::unique_ptr<Churner> churner;
    if (s.param("churn") == "release") churner = std::make_unique<Churner>(s, s.param_size("churn_bytes"));
    Histogram h;
    TickClock clock;
    clock.start();
    auto before = tlb_now();
    if (churner) churner->start();
    ctx.measure(reads, [&] { return reader_pass(a, reads, h); });
    if (churner) churner->stop();
    auto after = tlb_now();
    double tpn = clock.ticks_per_ns();
    ctx.set_field("reader_batch_ns", lab::Json{{"batch_reads", kBatch}, {"p50", h.percentile(0.5) / tpn},
                                               {"p99", h.percentile(0.99) / tpn}, {"p99_9", h.percentile(0.999) / tpn},
                                               {"max", h.max() / tpn}, {"samples", h.count()}});
    ctx.set_field("churn", churn_json(churner.get(), before, after));
    ctx.set_field("clock", lab::Json{{"name", TickClock::name()}, {"ticks_per_ns", tpn}});
    if (churner && churner->pool()) ctx.note("churner pool locked: " + std::string(churner->pool()->stats().locked ? "yes" : "no"));
    Histogram unused;
    Word got = reader_pass(a, reads, unused);
    ctx.checksum(got);
    ctx.verify(got == reference(n, reads), "the reads sum to the reference computed from the same indices");
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
