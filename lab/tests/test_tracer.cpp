// The tracer and the traced views: the window's warm-up, midpoint and counted tail; page
// sizes tagged from a context's buffers; a traced tree walk that loads exactly the real
// walk's slots and reaches the real element; the scan kernels on traced views agree with
// the real ones and walk once per leaf where the real code does.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

#include "common/context.hpp"
#include "common/traced.hpp"
#include "common/translation.hpp"
#include "common/translation_record.hpp"
#include "kernels/scan.hpp"
#include "physmem/tlbsim/trace.hpp"

namespace {

using physmem::tlbsim::Entry;
using physmem::tlbsim::PageSize;
using physmem::tlbsim::Ref;

std::string temp_path(const std::string& what) {
    return "/tmp/physmem-lab-tracer-" + std::to_string(::getpid()) + "-" + what + ".trace";
}

std::vector<Entry> read_all(const std::string& path) {
    std::vector<Entry> out;
    physmem::tlbsim::read_trace(path, 1 << 16, [&](std::span<const Entry> c) { out.insert(out.end(), c.begin(), c.end()); });
    return out;
}

constexpr std::uint64_t line(const void* p) { return reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{63}; }

TEST(Tracer, WarmupWindowAndCountedTail) {
    physmem::tlbsim::Simulator sim(physmem::tlbsim::preset("zen5"));
    std::vector<std::uint64_t> data(1000);
    lab::Tracer tr({}, {10, 20}, &sim, nullptr);
    for (int i = 0; i < 50; ++i) tr.data(&data[i * 8]);
    EXPECT_EQ(tr.seen(), 50u);
    EXPECT_TRUE(tr.window_full());
    EXPECT_EQ(sim.stats().accesses, 20u);  // warm-up zeroed, tail not simulated
    ASSERT_TRUE(tr.first_half().has_value());
    EXPECT_EQ(tr.first_half()->accesses, 10u);
    EXPECT_EQ(tr.untagged(), 30u);  // no buffers: every simulated reference
}

TEST(Tracer, TagsFromBuffersAndFallsBackTo4K) {
    std::vector<std::uint64_t> a(512), b(512), c(8);
    auto range = [](auto& v, PageSize s) {
        auto lo = reinterpret_cast<std::uintptr_t>(v.data());
        return lab::TracedBuffer{"x", lo, lo + v.size() * sizeof(v[0]), s};
    };
    const std::string path = temp_path("tags");
    {
        physmem::tlbsim::TraceWriter w(path);
        lab::Tracer tr({range(a, PageSize::k2M), range(b, PageSize::k1G)}, {0, 100}, nullptr, &w);
        tr.data(&a[3]), tr.walk(&b[5]), tr.data(&a[511]), tr.data(&c[0]), tr.data(&b[0]);
        w.close();
        EXPECT_EQ(tr.untagged(), 1u);
    }
    std::vector<Entry> e = read_all(path);
    std::remove(path.c_str());
    ASSERT_EQ(e.size(), 5u);
    EXPECT_EQ(e[0].size(), PageSize::k2M);
    EXPECT_EQ(e[1].size(), PageSize::k1G);
    EXPECT_EQ(e[1].kind(), Ref::sw_walk);
    EXPECT_EQ(e[2].size(), PageSize::k2M);
    EXPECT_EQ(e[3].size(), PageSize::k4K);
    EXPECT_EQ(e[4].size(), PageSize::k1G);
    EXPECT_EQ(e[0].addr(), line(&a[3]));
}

TEST(TraceWindowPlan, RepeatsShortPassesAndRewindowsTinyOnes) {
    auto p = lab::translation::plan(100, 25, 100);  // 2 passes fill W + N, the rest counted
    EXPECT_EQ(p.passes, 2u);
    EXPECT_EQ(p.window.warmup, 25u);
    EXPECT_EQ(p.window.refs, 100u);
    EXPECT_TRUE(p.capped);
    p = lab::translation::plan(10, 25, 100);  // 8 passes are 80 refs: one warms up, 70 counted
    EXPECT_EQ(p.passes, lab::translation::kMaxPasses);
    EXPECT_EQ(p.window.warmup, 10u);
    EXPECT_EQ(p.window.refs, 70u);
    EXPECT_FALSE(p.capped);
}

TEST(TraceMachine, UnknownCpuStillGetsAMachineAndSaysWhy) {
    // A CPU of an unknown vendor: leaf 0 names it, leaf 1 gives family 1 model 2.
    auto cpuid = [](std::uint32_t leaf, std::uint32_t) {
        physmem::tlbsim::CpuidRegs r;
        if (leaf == 0) {
            r.eax = 1;
            std::memcpy(&r.ebx, "NoSu", 4);
            std::memcpy(&r.edx, "chVe", 4);
            std::memcpy(&r.ecx, "ndor", 4);
        } else if (leaf == 1) {
            r.eax = (1u << 8) | (2u << 4);
        }
        return r;
    };
    lab::translation::Machine m = lab::translation::machine_for_choice(physmem::tlbsim::choose_machine(cpuid));
    ASSERT_TRUE(m.config.has_value());
    lab::translation::Json j = lab::translation::machine_json(m);
    EXPECT_EQ(j["preset"], "skylake");
    EXPECT_EQ(j["source"], "nearest");
    EXPECT_NE(j["reason"].get<std::string>().find("NoSuchVendor"), std::string::npos) << j["reason"];
    EXPECT_EQ(j["chosen"], "auto");
}

// A context whose command line asked for zen5 and a trace file.
struct TracedContext {
    explicit TracedContext(const std::string& trace) {
        settings.variant = "array-4k";
        settings.size_bytes = 1;
        settings.sim.simulate = "zen5";
        settings.sim.trace = trace;
        settings.sim.refs = 1000;
    }
    lab::ProgramSpec spec{.name = "test", .experiment = "test", .unit = "element", .kinds = {lab::Kind::array},
                          .traceable = true};
    lab::Settings settings;
};

// The page size of every reference to buf in the trace, or nullopt when there is none.
std::set<PageSize> sizes_of(const std::vector<Entry>& e, const void* lo, std::size_t bytes) {
    std::set<PageSize> out;
    for (Entry x : e)
        if (x.addr() - line(lo) < bytes) out.insert(x.size());
    return out;
}

TEST(Tracer, ContextTagsEachBufferWithItsBacking) {
    const std::string path = temp_path("context");
    TracedContext tc(path);
    lab::Context ctx(tc.spec, tc.settings);
    auto small = ctx.array<std::uint64_t>("small", 4096, physmem::Backing::page_4k);
    std::span<std::uint64_t> big;
    PageSize want = PageSize::k2M;
    std::string why;
    try {
        big = ctx.array<std::uint64_t>("big", (4u << 20) / 8, physmem::Backing::page_2m);
    } catch (const physmem::backing_unavailable& e) {
        why = e.what();
        big = ctx.array<std::uint64_t>("big", (4u << 20) / 8, physmem::Backing::thp);
    }
    for (auto& x : big) x = 1;  // fault in (THP: huge pages, if the kernel gives them)
    std::vector<std::uint64_t> heap(8);
    ctx.simulate(3, [&](lab::Tracer& tr) {
        tr.data(&small[100]);
        tr.data(&big[(2u << 20) / 8 + 5]);
        tr.data(&heap[0]);
    });
    lab::Json rec = ctx.finish();
    std::vector<Entry> e = read_all(path);
    std::remove(path.c_str());
    ASSERT_TRUE(rec.contains("translation"));
    const lab::Json& window = rec["translation"]["window"];  // a 3-reference pass: 8 passes traced
    EXPECT_EQ(window["untagged_refs"], window["passes_traced"]) << window.dump();  // the heap's, once a pass
    EXPECT_EQ(sizes_of(e, small.data(), small.size_bytes()), std::set<PageSize>{PageSize::k4K});
    EXPECT_EQ(sizes_of(e, heap.data(), 64), std::set<PageSize>{PageSize::k4K});
    const lab::Json& bigs = rec["translation"]["buffers"][1];
    ASSERT_EQ(bigs["name"], "big");
    if (bigs["page_size"] != "2m")
        GTEST_SKIP() << "no 2 MiB page for the big buffer (2m: " << why << "; THP gave 4 KiB pages)";
    EXPECT_EQ(sizes_of(e, big.data(), big.size_bytes()), std::set<PageSize>{want});
}

// A tree of depth 3 on 4 KiB blocks (512 words a leaf, 512 slots an inner block).
struct SmallTree {
    SmallTree() : pool({.block_size = 4096, .capacity = 16 << 20, .backing = physmem::Backing::page_4k}), t(n, pool) {
        for (std::size_t i = 0; i < n; ++i) t[i] = i;
    }
    static constexpr std::size_t n = (std::size_t{1} << 18) + 4096;
    physmem::BlockPool pool;
    physmem::TreeArray<std::uint64_t> t;
};

TEST(TracedViews, TreeWalkLoadsTheRealWalksSlotsAndReachesTheElement) {
    SmallTree s;
    ASSERT_EQ(s.t.depth(), 3u);
    std::set<std::uintptr_t> leaves;
    for (std::size_t k = 0; k < s.t.leaf_count(); ++k) leaves.insert(reinterpret_cast<std::uintptr_t>(s.t.leaf_data(k)));
    const std::string path = temp_path("walk");
    physmem::tlbsim::TraceWriter w(path);
    lab::Tracer tr({}, {0, ~std::uint64_t{0} / 2}, nullptr, &w);
    lab::TracedTree<std::uint64_t> v(s.t, tr);
    for (std::size_t i = 0; i < s.n; ++i) ASSERT_EQ(&v[i], &s.t[i]) << i;
    w.close();
    std::vector<Entry> e = read_all(path);
    std::remove(path.c_str());
    ASSERT_EQ(e.size(), s.n * s.t.depth());
    for (std::size_t i = 0; i < s.n; ++i) {
        const Entry* x = &e[i * 3];
        ASSERT_EQ(x[0].kind(), Ref::sw_walk);
        ASSERT_EQ(x[1].kind(), Ref::sw_walk);
        ASSERT_EQ(x[2].kind(), Ref::data);
        ASSERT_EQ(x[2].addr(), line(&s.t[i])) << i;
        // root slot, then the slot of the leaf's parent: inner blocks, owned, not leaves
        ASSERT_EQ(x[0].addr() & ~std::uint64_t{4095}, reinterpret_cast<std::uintptr_t>(s.t.root())) << i;
        std::uintptr_t parent = x[1].addr() & ~std::uint64_t{4095};
        ASSERT_TRUE(s.pool.owns(reinterpret_cast<void*>(parent)));
        ASSERT_FALSE(leaves.count(parent)) << i;
        // the leaf's parent slot holds the leaf's entry (its address less k leaves' bytes,
        // TreeArray::leaf_entry): the slot the real walk loads
        std::size_t k = i >> s.t.shape().leaf_shift;
        auto* slot = reinterpret_cast<void* const*>(parent) + (k & s.t.shape().fan_mask());
        ASSERT_EQ(line(slot), x[1].addr());
        ASSERT_EQ(reinterpret_cast<std::uintptr_t>(*slot) + (k << s.t.shape().leaf_shift) * sizeof(std::uint64_t),
                  reinterpret_cast<std::uintptr_t>(s.t.leaf_data(k))) << i;
    }
}

// References of each kind a traced pass makes.
struct Counts {
    std::uint64_t data = 0, walk = 0, sum = 0;
};
template <class Pass>
Counts count(Pass pass) {
    const std::string path = temp_path("count");
    Counts c;
    {
        physmem::tlbsim::TraceWriter w(path);
        lab::Tracer tr({}, {0, ~std::uint64_t{0} / 2}, nullptr, &w);
        c.sum = pass(tr);
        w.close();
    }
    for (Entry x : read_all(path)) ++(x.kind() == Ref::data ? c.data : c.walk);
    std::remove(path.c_str());
    return c;
}

TEST(TracedViews, ScanKernelsAgreeAndWalkAsTheRealCodeDoes) {
    using namespace lab::scan;
    const std::size_t n = (std::size_t{1} << 18) + 77;  // depth 2 on 4 KiB blocks: 257 leaves
    physmem::BlockPool pool({.block_size = 4096, .capacity = 16 << 20, .backing = physmem::Backing::page_4k});
    Tree t(n, pool);
    std::vector<Elem> flat(n);
    for (std::size_t i = 0; i < n; ++i) t[i] = flat[i] = value_at(i);
    ASSERT_EQ(t.depth(), 2u);
    const std::uint64_t leaves = t.leaf_count(), want = expected_linear(n);
    auto tree = [&](auto kernel) {
        return count([&](lab::Tracer& tr) { return kernel(lab::TracedTree<const Elem>(t, tr)); });
    };
    Counts c = tree([](auto v) { return linear_index(v); });
    EXPECT_EQ(c.sum, want);
    EXPECT_EQ(c.data, n);
    EXPECT_EQ(c.walk, n);  // a walk per element
    c = tree([](auto v) { return linear_fixed(v); });
    EXPECT_EQ(c.sum, want);
    EXPECT_EQ(c.walk, n);
    c = tree([](auto v) { return linear_iter(v); });
    EXPECT_EQ(c.sum, want);
    EXPECT_EQ(c.data, n);
    EXPECT_EQ(c.walk, leaves + 1);  // a walk per leaf entered, and end()'s into the partial last leaf
    c = tree([](auto v) { return linear_seg(v); });
    EXPECT_EQ(c.sum, want);
    EXPECT_EQ(c.walk, leaves);
    const auto offsets = column_offsets(4);
    c = tree([&](auto v) { return strided_seg(v, offsets); });
    EXPECT_EQ(c.sum, strided_index(t, offsets));
    EXPECT_EQ(c.data, strided_reads(n, offsets));
    EXPECT_EQ(c.walk, c.data);  // a 4 KiB stride reads once per 4 KiB leaf: one walk per read
    c = tree([&](auto v) { return strided_iter(v, offsets); });
    EXPECT_EQ(c.sum, strided_index(t, offsets));
    // every stride crosses a leaf; begin() walks once a column, and the step past the end
    // walks when it lands in the last (partial) leaf, as TreeIterator does
    EXPECT_GE(c.walk, c.data);
    EXPECT_LE(c.walk, c.data + 2 * offsets.size());
    std::span<const Elem> f = flat;
    c = count([&](lab::Tracer& tr) { return linear(lab::TracedSpan<const Elem>(f, tr)); });
    EXPECT_EQ(c.sum, want);
    EXPECT_EQ(c.data, n);
    EXPECT_EQ(c.walk, 0u);
}

}  // namespace
