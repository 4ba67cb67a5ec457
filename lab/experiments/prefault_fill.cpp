// lab/experiments/prefault_fill.cpp — seed 003's experiment: fill a large buffer, with and
// without prefaulting, and count the page faults of each step.
//
//   physmem_lab_prefault_fill --variant array-4k --size 256M --param populate=on
//
// Variants (n = size / 8 words, each written once, in order, with fill_value(i)):
//   malloc-4k              glibc malloc, first touch (THP is madvise-only: 4 KiB pages)
//   malloc-B  alloc=physmem  libphysmem.so preloaded, PHYSMEM_MALLOC_PREFAULT=1 and
//                          PHYSMEM_MALLOC_BACKING=B (B: 4k, thp, 2m, 1g)
//   array-B   populate=off|on  one physmem::Region strictly on B, first touch, or
//                          populated at mapping (MADV_POPULATE_WRITE: what MAP_POPULATE
//                          does, through the library's port)
//   pool-B    populate=on|off  a physmem::BlockPool strictly on B (block size
//                          --block-size, default 2 MiB), every block allocated
// Timed (each repetition on a fresh allocation, released before the next; in this order):
//   top level       prepare + fill in one pass (the total; rep 1 is the first use)
//   phases.prepare  allocation including any populate (ns per word)
//   phases.fill     the writes alone, on memory just prepared
// An allocator may keep freed memory (glibc below its dynamic mmap threshold, 32 MiB at
// most; libphysmem.so's span cache): later repetitions then reuse faulted pages.
// Page faults per repetition are in each phase's counters (perf counts only faults the
// CPU raised: pages populated by the kernel on the program's behalf are not counted).
// Verified: the sum of the filled buffer equals the closed form, after each timing.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "context.hpp"
#include "kernels/prefault.hpp"
#include "preload.hpp"

namespace {

using namespace lab::prefault;
using Word = std::uint64_t;

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_prefault_fill",
    .experiment = "prefault_fill",
    .unit = "element",
    .kinds = {lab::Kind::malloc, lab::Kind::array, lab::Kind::pool},
    .default_block_size = 2 << 20,
    .params = {{"populate", "default", {"default", "on", "off"},
                "array/pool: populate at allocation (default: off for array, on for pool)"},
               {"alloc", "glibc", {"glibc", "physmem"}, "malloc: glibc, or libphysmem.so with prefault on"}},
};

// One prepared buffer: the spans to fill, and what owns them.
class Buffer {
  public:
    Buffer(const lab::Settings& s, bool populate) : s_(s), populate_(populate) {}
    ~Buffer() { release(); }

    void prepare() {
        const std::size_t bytes = words() * sizeof(Word);
        if (s_.kind == lab::Kind::malloc) {
            mem_ = std::malloc(bytes);
            if (!mem_) throw std::bad_alloc();
            spans_.emplace_back(static_cast<Word*>(mem_), words());
        } else if (s_.kind == lab::Kind::array) {
            region_ = std::make_unique<physmem::Region>(physmem::RegionOptions{
                .bytes = bytes, .backing = s_.backing, .strict_backing = true, .prefault = populate_});
            spans_.emplace_back(reinterpret_cast<Word*>(region_->data()), words());
        } else {
            prepare_pool(bytes);
        }
    }
    void release() noexcept {
        spans_.clear();
        for (void* b : blocks_) pool_->deallocate(b);
        blocks_.clear();
        pool_.reset();
        region_.reset();
        std::free(mem_);
        mem_ = nullptr;
    }
    void fill_all() noexcept {
        Word first = 0;
        for (auto sp : spans_) fill(sp, first), first += sp.size();
    }
    Word sum_all() const noexcept {
        Word s = 0;
        for (auto sp : spans_) s += sum(sp);
        return s;
    }
    std::size_t words() const noexcept { return std::max<std::size_t>(s_.size_bytes / sizeof(Word), 1); }

  private:
    void prepare_pool(std::size_t bytes) {
        const std::size_t bs = s_.block_size, nblocks = (bytes + bs - 1) / bs;
        pool_ = std::make_unique<physmem::BlockPool>(physmem::PoolOptions{
            .block_size = bs, .capacity = nblocks * bs, .backing = s_.backing, .strict_backing = true,
            .prefault = populate_});
        std::size_t left = words();
        for (std::size_t i = 0; i < nblocks; ++i) {
            blocks_.push_back(pool_->allocate());
            std::size_t take = std::min(left, bs / sizeof(Word));
            spans_.emplace_back(static_cast<Word*>(blocks_.back()), take);
            left -= take;
        }
    }

    const lab::Settings& s_;
    const bool populate_;
    std::vector<std::span<Word>> spans_;
    std::unique_ptr<physmem::Region> region_;
    std::unique_ptr<physmem::BlockPool> pool_;
    std::vector<void*> blocks_;
    void* mem_ = nullptr;
};

// For alloc=physmem: re-executes under libphysmem.so with prefault on, backing from the
// variant. Returns a note saying which allocator serves malloc.
std::string choose_allocator(const lab::Settings& s) {
    if (s.kind != lab::Kind::malloc || s.param("alloc") == "glibc") {
        if (s.kind == lab::Kind::malloc && s.backing != physmem::Backing::page_4k)
            lab::usage_error(kSpec, "--variant: glibc malloc is malloc-4k only (THP is madvise-only here)");
        return "";
    }
    ::setenv("PHYSMEM_MALLOC_PREFAULT", "1", 1);
    ::setenv("PHYSMEM_MALLOC_BACKING", std::string(physmem::to_string(s.backing)).c_str(), 1);
    lab::preload::ensure("physmem");
    return "malloc served by " + lab::preload::active() + " (PHYSMEM_MALLOC_PREFAULT=1, BACKING=" +
           std::string(physmem::to_string(s.backing)) + ")";
}

bool wants_populate(const lab::Settings& s) {
    const std::string& p = s.param("populate");
    return p == "default" ? s.kind == lab::Kind::pool : p == "on";
}

// Maps one buffer like the measured ones through the Context, so the record's backing
// list is verified from smaps (the measured buffers are gone by then).
void record_backing(lab::Context& ctx, const lab::Settings& s, std::size_t words) {
    if (s.kind == lab::Kind::array) {
        fill(ctx.array<Word>("fill", words));
    } else if (s.kind == lab::Kind::pool) {
        physmem::BlockPool& p = ctx.pool("fill", words * sizeof(Word));
        std::vector<void*> got;
        while (void* b = p.try_allocate()) got.push_back(b), touch_pages({static_cast<std::byte*>(b), s.block_size}, 4096, 1);
        for (void* b : got) p.deallocate(b);
    }
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    std::string who = choose_allocator(s);
    if (!who.empty()) ctx.note(who);
    const bool populate = wants_populate(s);
    if (s.kind != lab::Kind::malloc) ctx.set_param("populate", populate ? "on" : "off");
    Buffer buf(s, populate);
    const std::size_t n = buf.words();
    const Word want = expected_sum(n);
    ctx.set_elements(n);
    // The total first: its first repetition is the process's first use of the memory.
    ctx.measure(n, [&] { buf.prepare(); buf.fill_all(); return Word{1}; }, [&] { buf.release(); });
    Word got = buf.sum_all();
    bool ok = got == want;
    buf.release();
    ctx.measure_phase("prepare", n, [&] { buf.prepare(); return Word{1}; }, [&] { buf.release(); });
    buf.release();
    ctx.measure_phase("fill", n, [&] { buf.fill_all(); return Word{1}; }, [&] { buf.release(); buf.prepare(); });
    ok = ok && buf.sum_all() == want;
    buf.release();
    record_backing(ctx, s, n);
    ctx.checksum(got);
    ctx.verify(ok, "sum of the filled buffer equals the closed form (after the fill phase and after the total)");
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
