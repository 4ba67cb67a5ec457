// lab/algorithms/main.cpp — the algorithms suite's programs (issue 22): physmem_lab_algorithms_o2
// and _o3, this file linked with kernels*.cpp compiled at -O2 or at -O3 (lab/cmake/algorithms.cmake).
//
//   physmem_lab_algorithms_o3 --variant tree-thp --size 128M
//
// n = size / 8 64-bit words in each of two arrays a and b of the variant's container,
// and a contiguous array `side` beside them (copies to and from a vector):
//   array-B   std::vector<uint64_t> in a mapping strictly on B (an allocator handing out
//             the lab's array)
//   tree-B    physmem::TreeArray on a BlockPool strictly on B
//   paged-B   physmem::PagedArray, frames and table in a pool strictly on B, budget 1x
//             (every leaf fits: nothing pages after the first touch), its file in --param dir
// Every kernel of kernels_impl.hpp (the loops people write, std::sort, random a[i], the
// segmented algorithms) runs on the same data: the first, range_for, is the record's
// main timing, every other one a phase named after it. Before a kernel is timed, one pass
// of it runs from the initial data on the containers and on reference std::vectors: its
// result and every array it writes must equal the vector's, or the record is unverified
// (exit 1) and names the kernel (array-B: the vector is the reference, its pass only).
// That pass is the kernel's warm-up. std_sort sorts the
// first min(work, n) words (the prefix restored, untimed, before each pass); random_index
// makes `work` updates a pass. A tree or paged run also holds a std::vector's three arrays
// on the same backing and times each kernel in turn on both (a repetition of each at a
// time): the vector's timing is the phase "<kernel>@vector", and the record's
// "interleaved" pairs them. The record's "algorithms" field lists the kernels (group,
// what, ops per pass), the build's flags, what was timed beside the container and the
// order the kernels were timed in (timing_order).
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "algorithms/kernels.hpp"
#include "context.hpp"
#include "kernels/tree_sizing.hpp"
#include "physmem/tree_shape.hpp"

namespace {

namespace A = lab::algorithms;
using lab::Kind;
using physmem::Backing;

const lab::ProgramSpec kSpec{
    .name = PHYSMEM_ALGO_PROGRAM,
    .experiment = PHYSMEM_ALGO_EXPERIMENT,
    .unit = "element",
    .kinds = {Kind::array, Kind::tree, Kind::paged},
    .default_block_size = 64 << 10,
    .params = {{"work", "262144", {}, "std_sort: words sorted per pass (at most n); random_index: updates per pass"},
               {"dir", "", {}, "paged: directory of the files (default $TMPDIR, else /var/tmp)"},
               {"corrupt", "", {}, "testing: alter this kernel's checked result, so the record must come out unverified"},
               {"order", "shuffled", {"shuffled", "listed"},
                "the order the kernels are timed in: shuffled anew in each process (the record's algorithms.order), "
                "or as kernels_impl.hpp lists them"},
               {"order-seed", "0", {}, "shuffled: the shuffle's seed (0: a new one each process; the record's "
                                       "algorithms.order_seed repeats a run's order)"}},
};

// The order the kernels are timed in. A process's speed drifts while it runs (where this
// was found, a kernel's tree / vector ratio followed its place in the list: generate at
// 1.05-1.09x as the 38th of 40 kernels, at 0.95-0.98x as the 35th, three processes each),
// so by default each process times them in an order of its own: the two rounds of a
// point then differ, and a kernel's verdict is UNSTABLE where its place decided it. A
// kernel of group "floor" (random_floor, random_index's control) stays right after the
// kernel listed before it. seed: the shuffle's, drawn from the system when 0 (then set).
std::vector<std::size_t> timing_order(const std::vector<A::Kernel>& ks, bool shuffled, std::uint64_t& seed) {
    std::vector<std::vector<std::size_t>> units;
    for (std::size_t k = 0; k < ks.size(); ++k) {
        if (ks[k].group == "floor" && !units.empty()) units.back().push_back(k);
        else units.push_back({k});
    }
    if (shuffled) {
        if (seed == 0) seed = (std::uint64_t{std::random_device{}()} << 32 | std::random_device{}()) | 1;
        std::mt19937_64 rng(seed);
        std::shuffle(units.begin(), units.end(), rng);
    }
    std::vector<std::size_t> order;
    for (const auto& u : units) order.insert(order.end(), u.begin(), u.end());
    return order;
}

// Pool bytes for two paged arrays of n words, each with every leaf in its budget.
std::size_t paged_pool_bytes(std::size_t block, std::size_t n, std::size_t budget) {
    physmem::TreeShape shape = physmem::TreeShape::make(block, sizeof(A::Word));
    std::size_t table = (shape.leaves_for(n) / (std::size_t{1} << shape.fan_shift) + 2) * block;
    return 2 * (budget + table);
}

// n, work and the side array (named prefix + "side") on the run's backing.
A::Setup common_setup(lab::Context& ctx, std::size_t n, const std::string& prefix) {
    A::Setup st;
    st.n = n;
    st.work = ctx.settings().param_size("work");
    if (st.work == 0) lab::usage_error(kSpec, "--param work: must be at least 1");
    st.side = ctx.array<A::Word>(prefix + "side", n);
    return st;
}

// A std::vector's: a and b beside the side array, on the run's backing (prefix: as above).
A::Setup vector_setup(lab::Context& ctx, std::size_t n, const std::string& prefix) {
    A::Setup st = common_setup(ctx, n, prefix);
    st.container = A::Container::vector;
    st.a = ctx.array<A::Word>(prefix + "a", n);
    st.b = ctx.array<A::Word>(prefix + "b", n);
    return st;
}

A::Setup setup_of(lab::Context& ctx, std::size_t n) {
    const lab::Settings& s = ctx.settings();
    A::Setup st = s.kind == Kind::array ? vector_setup(ctx, n, "") : common_setup(ctx, n, "");
    st.corrupt = s.param("corrupt");
    switch (s.kind) {
        case Kind::array:
            break;
        case Kind::tree:
            st.container = A::Container::tree;
            // a and b, and physmem::sort's scratch (the sorted words, on the array's pool)
            st.pool = &ctx.pool("trees", 2 * lab::tree_bytes<A::Word>(s.block_size, n) +
                                             lab::tree_bytes<A::Word>(s.block_size, std::min(st.work, n)));
            break;
        default: {
            st.container = A::Container::paged;
            physmem::TreeShape shape = physmem::TreeShape::make(s.block_size, sizeof(A::Word));
            st.budget = shape.leaves_for(n) * s.block_size;  // 1x: every leaf
            st.dir = lab::data_dir(s);
            st.pool = &ctx.pool("frames", paged_pool_bytes(s.block_size, n, st.budget));
            ctx.set_param("block_size", s.block_size);
        }
    }
    return st;
}

// Times kernel k of w: alone (the vector run), or in turn with the same kernel on the
// vector v, a repetition of each at a time (measure_interleaved), v's timing the phase
// "<kernel>@vector": the container's ratio to the vector then pairs repetitions that ran
// side by side in one process. (Timed in separate processes, the ratios of a kernel flipped
// between runs: a plain scan of a fresh 64 MiB array ran 0.28 or 0.35-0.50 ns a word for
// its first second or more, as the machine under the VM chose, and a kernel whose
// repetitions fell in that window in one process and not in the other doubled its ratio.)
lab::Timing time_kernel(lab::Context& ctx, A::Workload& w, A::Workload* v, std::size_t k) {
    const A::Kernel& kn = w.kernels()[k];
    auto pass = [&w, k] { return w.run(k); };
    std::function<void()> reset;
    if (kn.resets) reset = [&w, k] { w.reset(k); };
    const std::string phase = k == 0 ? "" : kn.name;
    if (!v) return phase.empty() ? ctx.measure(kn.ops, pass, reset) : ctx.measure_phase(phase, kn.ops, pass, reset);
    (void)v->check(k);  // the vector's pass from the initial data: its warm-up
    std::function<void()> vreset;
    if (kn.resets) vreset = [v, k] { v->reset(k); };
    return ctx.measure_interleaved({{phase, {pass, kn.ops, reset}},
                                    {kn.name + "@vector", {[v, k] { return v->run(k); }, kn.ops, vreset}}})[0];
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const std::size_t n = std::max<std::size_t>(s.size_bytes / sizeof(A::Word), 8);
    ctx.set_elements(n);
    std::unique_ptr<A::Workload> w = A::make(setup_of(ctx, n));
    std::unique_ptr<A::Workload> v;  // tree and paged runs: the vector timed beside them
    if (s.kind != Kind::array) {
        ctx.set_tree(s.block_size, w->depth(), w->leaf_length());
        v = A::make(vector_setup(ctx, n, "vector_"));
    }

    lab::Json kernels = lab::Json::array(), timed = lab::Json::array();
    std::string failed;
    std::uint64_t sum = 0;
    const auto& ks = w->kernels();
    const bool shuffled = s.param("order") == "shuffled";
    std::uint64_t seed = s.param_size("order-seed");
    for (std::size_t k : timing_order(ks, shuffled, seed)) {
        std::string why = w->check(k);
        if (!why.empty()) failed += (failed.empty() ? "" : "; ") + ks[k].name + ": " + why;
        lab::Timing t = time_kernel(ctx, *w, v.get(), k);
        sum ^= t.result;
        timed.push_back(ks[k].name);
    }
    for (std::size_t k = 0; k < ks.size(); ++k)
        kernels.push_back({{"name", ks[k].name}, {"group", ks[k].group}, {"what", ks[k].what},
                           {"ops_per_pass", ks[k].ops}, {"phase", k == 0 ? lab::Json(nullptr) : lab::Json(ks[k].name)}});
    ctx.checksum(sum);
    if (s.kind == Kind::array)
        ctx.verify(true, "std::vector is the reference the tree and paged variants are checked against");
    else
        ctx.verify(failed.empty(), "each of " + std::to_string(ks.size()) + " kernels' result and the arrays it "
                                   "writes equal std::vector's after one pass from the same data" +
                                       (failed.empty() ? "" : " (" + failed + ")"));
    ctx.set_field("algorithms", {{"build", PHYSMEM_ALGO_BUILD},
                                 {"kernel_flags", A::build_flags()},
                                 {"container", s.kind == Kind::array ? "std::vector" : s.kind == Kind::tree
                                                                                           ? "physmem::TreeArray"
                                                                                           : "physmem::PagedArray"},
                                 {"work", s.param_size("work")},
                                 {"beside", v ? lab::Json("std::vector") : lab::Json(nullptr)},
                                 {"kernels", kernels},
                                 {"order", timed},
                                 {"order_seed", shuffled ? lab::Json(seed) : lab::Json(nullptr)}});
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
