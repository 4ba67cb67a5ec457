// lab/experiments/gups.cpp — Fig. 4 of the seed paper: HPCC RandomAccess (GUPS) on a
// contiguous array vs a tree array read with operator[] (a software walk per update).
//
//   physmem_lab_gups --variant tree-index-1g --size 1G [--param updates=4M|official]
//
// The table is N = 2^floor(log2(size / 8)) 64-bit words (`elements`). A pass makes
// `updates` updates (ops_per_pass; unit "update"): HPCC's official count is 4N, the
// default caps it at 2^22 so big tables stay affordable (recorded, with a note). The
// update sequence and the verification are HPCC's (kernels/gups.hpp); verification also
// compares a position-sensitive signature of the table with the stream's.
//
// pair=on (tree-index variants): the same updates also on two contiguous tables, one on
// 4 KiB pages and one on the variant's backing, the three timed in turn a repetition at a
// time (Context::measure_interleaved): the tree is the record's main timing, the tables
// phases "array-4k" and "array-<backing>". The share of the translation cost the tree
// recovers, (array-4k - tree) / (array-4k - array-<backing>), is then a ratio of timings
// that ran side by side, not of three processes (whose placement alone moved GUPS by
// 10-50% between runs on the development VM). Each table is verified as the tree is.
#include <algorithm>
#include <bit>
#include <string>

#include "context.hpp"
#include "traced.hpp"
#include "tree_walk.hpp"
#include "kernels/gups.hpp"
#include "kernels/tree_sizing.hpp"

namespace {

using namespace lab::gups;
using Tree = physmem::TreeArray<std::uint64_t>;

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_gups",
    .experiment = "gups",
    .unit = "update",
    .kinds = {lab::Kind::array, lab::Kind::tree_index},
    .default_block_size = 2 << 20,  // depth 2 up to 512 GiB; the root stays in cache
    .params = {{"updates", "4194304", {}, "updates per pass: a count (rounded up to a multiple of 128, "
                                          "at most 4N) or official (4N)"},
               lab::walk_param(),
               {"prefetch", "on", {"on", "off"}, "look-ahead: find and prefetch 128 slots, then update them "
                                                 "(on), or update each as it is made (off)"},
               {"pair", "off", {"off", "on"}, "tree-index: also time the updates on contiguous tables on 4k "
                                              "and on the variant's backing, in turn (phases array-4k, "
                                              "array-<backing>)"}},
    .traceable = true,
};

// Words in the table: the largest power of two that fits size_bytes (at least 1).
std::uint64_t table_words(std::size_t size_bytes) {
    return std::bit_floor(std::max<std::uint64_t>(size_bytes / sizeof(std::uint64_t), 1));
}

// Updates per pass from --param updates; records updates, official_updates and a note.
std::uint64_t choose_updates(lab::Context& ctx, std::uint64_t n) {
    const std::uint64_t official = 4 * n;
    const std::string& want = ctx.settings().param("updates");
    std::uint64_t u = official;
    if (want != "official") {
        std::uint64_t asked = ctx.settings().param_size("updates");
        if (asked == 0) lab::usage_error(kSpec, "--param updates: must be positive or official");
        u = std::min(asked, official);
    }
    u = round_updates(u);
    ctx.set_param("updates", u);
    ctx.set_param("official_updates", official);
    if (u < official)
        ctx.note("updates capped: " + std::to_string(u) + " per pass instead of HPCC's official 4N = " +
                 std::to_string(official));
    return u;
}

// One pass of the kernel on t, with look-ahead or without (--param prefetch).
template <class Table>
std::uint64_t run_pass(Table& t, const Plan& plan, std::uint64_t mask, bool prefetch) {
    return prefetch ? update_pass<true>(t, plan, mask) : update_pass<false>(t, plan, mask);
}

// The tree's updates through the TLB simulator (a no-op unless --simulate or --trace asked).
template <class Traced>
void simulate(lab::Context& ctx, const Plan& plan, std::uint64_t mask, Traced traced) {
    const bool prefetch = ctx.settings().param("prefetch") == "on";
    ctx.simulate(plan.updates, [&](lab::Tracer& tr) {
        auto view = traced(tr);
        run_pass(view, plan, mask, prefetch);
    });
}

// Measures the kernel on `access` (a view of `store`), verifies it HPCC's way, then runs
// it on `traced(tracer)` (the same table's traced view) when --simulate or --trace asked.
template <class Store, class Access, class Traced>
void measure_and_verify(lab::Context& ctx, Store& store, Access& access, const Plan& plan, Traced traced) {
    const std::uint64_t mask = store.size() - 1;
    const bool prefetch = ctx.settings().param("prefetch") == "on";
    auto pass = [&] { return run_pass(access, plan, mask, prefetch); };
    reset(store);
    ctx.measure(plan.updates, pass);
    Check c = verify(store, plan.updates, pass);
    ctx.set_param("errors", c.errors);
    ctx.checksum(c.signature);
    ctx.verify(c.ok(store.size()),
               "HPCC: after one pass from T[i] = i and a sequential replay, " + std::to_string(c.errors) +
                   " entries differ from i (pass: <= 1% of N); table signature after the pass " +
                   (c.signature_ok ? "equals" : "DIFFERS from") + " the one computed from the stream");
    simulate(ctx, plan, mask, traced);
}

// pair=on: the tree (`access`, a view of `store`) and contiguous tables on 4k and on the
// variant's backing, timed in turn; each verified HPCC's way (the tree's signature is the
// checksum). The tree's updates are simulated as measure_and_verify's are.
template <class Store, class Access, class Traced>
void measure_paired(lab::Context& ctx, Store& store, Access& access, const Plan& plan, Traced traced) {
    const lab::Settings& s = ctx.settings();
    const std::uint64_t n = store.size(), mask = n - 1;
    const bool prefetch = s.param("prefetch") == "on";
    const std::string b(physmem::to_string(s.backing)), same = "array-" + b;
    std::span<std::uint64_t> a4 = ctx.array<std::uint64_t>("table_4k", n, physmem::Backing::page_4k);
    std::span<std::uint64_t> as = ctx.array<std::uint64_t>("table_" + b, n);
    auto pass_on = [&](auto& t) {
        return [&t, &plan, mask, prefetch]() -> std::uint64_t { return run_pass(t, plan, mask, prefetch); };
    };
    auto tree = pass_on(access), p4 = pass_on(a4), ps = pass_on(as);
    reset(store), reset(a4), reset(as);
    ctx.measure_interleaved({{"", {tree, plan.updates, nullptr}},
                             {"array-4k", {p4, plan.updates, nullptr}},
                             {same, {ps, plan.updates, nullptr}}});
    const Check c = verify(store, plan.updates, tree), c4 = verify(a4, plan.updates, p4), cs = verify(as, plan.updates, ps);
    ctx.set_param("errors", c.errors);
    ctx.checksum(c.signature);
    auto line = [](const char* what, const Check& k) {
        return std::string(what) + ": " + std::to_string(k.errors) + " errors, signature " +
               (k.signature_ok ? "equals" : "DIFFERS from") + " the stream's";
    };
    ctx.verify(c.ok(n) && c4.ok(n) && cs.ok(n),
               "HPCC, each of the tree and the two tables: after one pass from T[i] = i and a sequential "
               "replay at most 1% of N entries differ from i, and the signature after the pass equals the "
               "one computed from the stream (" + line("tree", c) + "; " + line("array-4k", c4) + "; " +
               line(same.c_str(), cs) + ")");
    simulate(ctx, plan, mask, traced);
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const std::uint64_t n = table_words(s.size_bytes);
    ctx.set_elements(n);
    const Plan plan = make_plan(choose_updates(ctx, n));
    if (s.kind == lab::Kind::array) {
        if (s.param("pair") == "on") lab::usage_error(kSpec, "--param pair=on: tree-index variants only");
        std::span<std::uint64_t> a = ctx.array<std::uint64_t>("table", n);
        measure_and_verify(ctx, a, a, plan, [a](lab::Tracer& tr) { return lab::TracedSpan<std::uint64_t>(a, tr); });
        return;
    }
    Tree t(n, ctx.pool("table", lab::tree_bytes<std::uint64_t>(s.block_size, n)));
    ctx.set_tree(s.block_size, t.depth(), t.leaf_length());
    // walk=fixed and walk=loop load the same slots: one traced walk serves both (traced.hpp).
    auto traced = [&t](lab::Tracer& tr) { return lab::TracedTree<std::uint64_t>(t, tr); };
    lab::with_walk(s, t, [&](auto& access) {
        if (s.param("pair") == "on") measure_paired(ctx, t, access, plan, traced);
        else measure_and_verify(ctx, t, access, plan, traced);
    });
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
