// lab/experiments/chase.cpp — the seed blog's pointer chase: dependent loads around one
// random cycle, contiguous array vs tree array (a software walk before every load).
//
//   physmem_lab_chase --variant tree-index-1g --size 1G [--param steps=2M]
//
// n = size / 8 slots (`elements`) hold one pseudo-random cycle (kernels/chase.hpp,
// seeded by --seed); a pass makes min(n, steps) steps from the same start (ops_per_pass;
// unit "step"). params.regime is "small" when the table fits one block (size <=
// block size: the tree is a single leaf) and "large" otherwise. Verified: the table is
// one cycle through all n slots (every link read from the array or tree itself), and
// the measured pass ends where the order says it must.
#include <algorithm>
#include <string>
#include <vector>

#include "context.hpp"
#include "traced.hpp"
#include "tree_walk.hpp"
#include "kernels/chase.hpp"
#include "kernels/tree_sizing.hpp"

namespace {

using namespace lab::chase;
using Tree = physmem::TreeArray<std::uint64_t>;

// Below this many slots the cycle is also walked once in full (milliseconds).
constexpr std::uint64_t kFullWalkMax = std::uint64_t{1} << 22;

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_chase",
    .experiment = "chase",
    .unit = "step",
    .kinds = {lab::Kind::array, lab::Kind::tree_index},
    .default_block_size = 2 << 20,  // depth 2 up to 512 GiB; the root stays in cache
    .params = {{"steps", "2097152", {}, "steps per pass (at most n)"},
               lab::walk_param()},
    .traceable = true,
};

// Measures the chase on `access` (the array, the tree or its fixed-depth view, holding
// the cycle of `order`) and verifies, on the same, the cycle and the end of a pass; then
// chases on `traced(tracer)` (the table's traced view) when --simulate or --trace asked.
template <class Access, class Traced>
void measure_and_verify(lab::Context& ctx, Access& access, const RandomOrder& order, std::uint64_t steps,
                        Traced traced) {
    const std::uint64_t start = order(0);
    ctx.measure(steps, [&] { return chase(access, start, steps); });
    const std::uint64_t end = chase(access, start, steps), want = expected_end(order, steps);
    bool cycle = is_single_cycle(access, order);
    std::string how = "every link of one cycle through all " + std::to_string(order.size()) +
                      " slots read back from the table (" + (cycle ? "holds" : "BROKEN") + ")";
    if (order.size() <= kFullWalkMax) {
        bool full = cycle_length(access, start, order.size()) == order.size();
        cycle = cycle && full;
        how += std::string(", a full walk returns to the start after exactly n steps (") + (full ? "yes" : "NO") + ")";
    }
    ctx.checksum(end);
    ctx.verify(cycle && end == want, how + "; a pass of " + std::to_string(steps) + " steps ends at slot " +
                                         std::to_string(end) + ", the order's says " + std::to_string(want));
    bool traced_ok = true;
    ctx.simulate(steps, [&](lab::Tracer& tr) {
        auto view = traced(tr);
        traced_ok = traced_ok && chase(view, start, steps) == want;
    });
    if (!traced_ok) ctx.verify(false, "the traced pass ends there too");
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const std::uint64_t n = std::max<std::uint64_t>(s.size_bytes / sizeof(std::uint64_t), 1);
    const std::uint64_t asked = s.param_size("steps");
    if (asked == 0) lab::usage_error(kSpec, "--param steps: must be positive");
    const std::uint64_t steps = std::min(n, asked);
    ctx.set_elements(n);
    ctx.set_param("steps", steps);
    ctx.set_param("regime", s.size_bytes <= s.block_size ? "small" : "large");
    const RandomOrder order(n, s.seed);
    if (s.kind == lab::Kind::array) {
        std::span<std::uint64_t> a = ctx.array<std::uint64_t>("table", n);
        std::fill(a.begin(), a.end(), 0);  // fault it in in order, as the tree's constructor does
        link(a, order);
        measure_and_verify(ctx, a, order, steps, [a](lab::Tracer& tr) { return lab::TracedSpan<std::uint64_t>(a, tr); });
        return;
    }
    Tree t(n, ctx.pool("table", lab::tree_bytes<std::uint64_t>(s.block_size, n)));
    ctx.set_tree(s.block_size, t.depth(), t.leaf_length());
    // walk=fixed and walk=loop load the same slots: one traced walk serves both (traced.hpp).
    auto traced = [&t](lab::Tracer& tr) { return lab::TracedTree<std::uint64_t>(t, tr); };
    lab::with_walk(s, t, [&](auto& access) {
        link(access, order);
        measure_and_verify(ctx, access, order, steps, traced);
    });
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
