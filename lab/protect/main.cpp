// lab/protect/main.cpp — the protect suite's programs (issue 24, item 5): physmem_lab_protect,
// and physmem_lab_protect_asan (the same sources built with -fsanitize=address, the anchor:
// lab/cmake/protect.cmake).
//
//   physmem_lab_protect --variant tree-thp --size 64M
//   physmem_lab_protect --seeded-bug oob_element       (one seeded bug: seeded.hpp)
//
// n = size / 8 words in `a`, size / 4 / 28 options (blackscholes' 28-byte structs) and
// size / 4 / 32 red-black tree nodes (rbtree.hpp: linked by slot number):
//   array-B  both in mappings on B (std::span): the plain code, no checks
//   tree-B   both as CheckedTreeArrays on one tagged pool strictly on B (PoolOptions::tags).
//            Every kernel runs twice on the same blocks, side by side: on the checked
//            array's unchecked() TreeArray (phase <kernel>) and through the checked array
//            (phase <kernel>_checked), the two ways in turn a repetition at a time
//            (Context::measure_interleaved: a drift of the machine falls on both); each
//            pass of a scan (segments, iterator, index, blackscholes) after an untimed
//            read of another buffer of the array's size (scan_reset), one pass a
//            repetition (segments: sixteen, the ways' in turn: passes_of).
// `a` holds one random cycle through all n slots (the chase's links), so every scan's sum
// is n(n-1)/2. Kernels (kernels.hpp): segments (the record's main timing, unchecked),
// iterator, index, chase (`work` steps, each pass on from where the last ended), gups (`work`
// random updates, each pass from another seed), blackscholes, rbtree (`work` lookups of
// random keys, each pass others; the tree built once, unchecked, by insertion). The checked
// way's chase starts half the cycle on and its gups and rbtree seeds 2^32 on (start_of):
// timed in turn, neither way's pass meets the lines the other's just left in the caches.
// Before timing, one pass of each way is checked: the sums, the chase's end, a sample of
// prices (reset first) against the scalar formula, a gups pass that breaks the cycle and a
// second one that restores it, the lookups' payloads (and once, the tree's red-black
// rules, key order and node count). A false positive of checked mode ends the run in physmem's report.
// rbtree also runs a third way in turn with the two: phase rbtree_floor, the unchecked tree
// behind the cheapest bounds check (rbtree.hpp's BoundsFloor), checked once like the others.
// tree-B also runs the seeded bugs (seeded.hpp) in children and records whether each was
// caught (not under ASan), and the protection metadata's bytes.
#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "context.hpp"
#include "kernels/chase.hpp"
#include "kernels/tree_sizing.hpp"
#include "physmem/checked_tree_array.hpp"
#include "physmem/domain.hpp"
#include "process.hpp"
#include "protect/kernels.hpp"
#include "protect/rbtree.hpp"
#include "protect/seeded.hpp"
#include "protect/switches.hpp"

namespace {

namespace P = lab::protect;
namespace bs = lab::blackscholes;
using lab::Kind;
using P::Word;
using Option = bs::Option;
using RbNode = P::rb::Node;

#ifdef PHYSMEM_PROTECT_ASAN
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif

const lab::ProgramSpec kSpec{
    .name = PHYSMEM_PROTECT_PROGRAM,
    .experiment = PHYSMEM_PROTECT_EXPERIMENT,
    .unit = "element",
    .kinds = {Kind::array, Kind::tree},
    .default_block_size = 64 << 10,
    .params = {{"work", "262144", {}, "chase: steps per pass; gups: random updates per pass"},
               {"detect", "on", {"on", "off"}, "tree: run the seeded bugs in children (off under ASan)"}},
};

constexpr Word kSeed = 0x5eed;

// The measured data of one variant: plain spans, or checked arrays (and their unchecked trees).
struct Data {
    std::size_t n = 0, m = 0, r = 0;
    std::span<Word> a;
    std::span<Option> opts;
    std::span<RbNode> nodes;
    std::unique_ptr<physmem::CheckedTreeArray<Word>> ca;
    std::unique_ptr<physmem::CheckedTreeArray<Option>> co;
    std::unique_ptr<physmem::CheckedTreeArray<RbNode>> cn;
    std::uint32_t root = P::rb::kNil;
};

Data make_data(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    Data d;
    d.n = std::max<std::size_t>(s.size_bytes / sizeof(Word), 64);
    d.m = std::max<std::size_t>(s.size_bytes / 4 / sizeof(Option), 64);
    d.r = std::clamp<std::size_t>(s.size_bytes / 4 / sizeof(RbNode), 64, P::rb::kNil - 1);
    if (s.kind == Kind::array) {
        d.a = ctx.array<Word>("a", d.n);
        d.opts = ctx.array<Option>("options", d.m);
        d.nodes = ctx.array<RbNode>("nodes", d.r);
    } else {
        std::size_t bytes = lab::tree_bytes<Word>(s.block_size, d.n) + lab::tree_bytes<Option>(s.block_size, d.m) +
                            lab::tree_bytes<RbNode>(s.block_size, d.r);
        physmem::BlockPool& pool = ctx.pool("checked", bytes, false, /*tags=*/true);
        d.ca = std::make_unique<physmem::CheckedTreeArray<Word>>(d.n, pool, physmem::Policy::fatal, "a");
        d.co = std::make_unique<physmem::CheckedTreeArray<Option>>(d.m, pool, physmem::Policy::fatal, "options");
        d.cn = std::make_unique<physmem::CheckedTreeArray<RbNode>>(d.r, pool, physmem::Policy::fatal, "nodes");
    }
    return d;
}

// The kernels over one container: name, ops per pass, a pass, and its one-pass check.
struct Kernel {
    std::string name;
    std::uint64_t ops;
    std::function<Word()> pass;
};

// The random kernels' seed for their pass p: kSeed first (the checked pass), then others,
// so each timed pass meets other elements than the last (not the `work` lines the last
// pass left in the caches: those passes measured cache hits, 0.2-6x apart).
Word seed_of(Word p) {
    Word s = kSeed + p * 0x9e3779b97f4a7c15ULL;
    return s ? s : 1;  // xorshift never leaves 0
}

// Where one way's random kernels start: the unchecked way (0) at the cycle's start and
// seed 0, the checked way (1) half the cycle on and 2^32 seeds on. Timed in turn, a pass
// of one way must not meet the lines the other's pass just left in the caches (with the
// same start the checked chase followed the unchecked one's steps: 0.30x its time).
struct Start {
    std::uint64_t chase_step;
    Word seed;
};
Start start_of(int way, std::size_t n) { return way ? Start{n / 2, Word{1} << 32} : Start{0, 0}; }

// The chase goes on from where its last pass ended (its first pass from the way's start).
template <class A, class O, class N>
std::vector<Kernel> kernels(A& a, O& opts, N& nodes, std::uint32_t root, std::uint64_t work,
                            const lab::chase::RandomOrder& order, Start st) {
    return {{"segments", a.size(), [&a] { return P::segments(a); }},
            {"iterator", a.size(), [&a] { return P::iterator(a); }},
            {"index", a.size(), [&a] { return P::index(a); }},
            {"chase", work,
             [&a, pos = Word(order(st.chase_step % order.size())), work]() mutable { return pos = P::chase(a, pos, work); }},
            {"gups", work, [&a, work, p = st.seed]() mutable { return P::gups(a, work, seed_of(p++)); }},
            {"blackscholes", opts.size(), [&opts] { return P::blackscholes(opts); }},
            {"rbtree", work,
             [&nodes, root, work, p = st.seed]() mutable { return P::rb::lookups(nodes, root, work, seed_of(p++)); }}};
}

// One pass of each kernel of ks checked; "" or what was wrong (kernel: why).
template <class A, class O>
std::string check(std::vector<Kernel>& ks, A& a, O& opts, std::size_t nodes, std::uint64_t work,
                  const lab::chase::RandomOrder& order, Start st) {
    std::string bad;
    auto fail = [&bad](const std::string& k, const std::string& why) { bad += (bad.empty() ? "" : "; ") + k + ": " + why; };
    const std::size_t n = a.size();
    const Word sum = n % 2 ? (n - 1) / 2 * n : n / 2 * (n - 1);
    for (Kernel& k : ks) {
        if (k.name == "segments" || k.name == "iterator" || k.name == "index") {
            if (k.pass() != sum) fail(k.name, "sum is not n(n-1)/2");
        } else if (k.name == "chase") {
            if (k.pass() != lab::chase::expected_end(order, st.chase_step + work))
                fail(k.name, "ends elsewhere than the cycle says");
        } else if (k.name == "gups") {  // the kernel the pass runs, with its first seed twice
            P::gups(a, work, seed_of(0));  // work >= 1 distinct non-zero updates: the cycle is broken...
            if (lab::chase::is_single_cycle(a, order)) fail(k.name, "a pass changed nothing");
            P::gups(a, work, seed_of(0));  // ...and the same updates again undo them
            if (!lab::chase::is_single_cycle(a, order)) fail(k.name, "two passes did not restore the array");
        } else if (k.name == "rbtree") {
            if (k.pass() != P::rb::expected_lookups(nodes, work, seed_of(st.seed)))
                fail(k.name, "a lookup missed its payload");
        } else {
            for (std::size_t i = 0; i < opts.size(); i += 97) opts[i].price = -1.0f;  // no price: not this pass's
            k.pass();
            for (std::size_t i = 0; i < opts.size(); i += 97) {
                const Option& o = opts[i];
                if (!bs::close(o.price, bs::price(o.spot, o.strike, o.rate, o.volatility, o.time, o.type), o.strike))
                    fail(k.name, "option " + std::to_string(i) + " mispriced");
            }
        }
    }
    return bad;
}

// Fills the data and builds the tree; "" or what is wrong with the tree.
std::string fill(Data& d, const lab::chase::RandomOrder& order) {
    auto each = [&](auto& a, auto& opts, auto& nodes) {
        lab::chase::link(a, order);
        for (std::size_t i = 0; i < opts.size(); ++i) opts[i] = bs::make_option(kSeed, i);
        d.root = P::rb::build(nodes);
        std::size_t reached = 0;
        int h = P::rb::black_height(nodes, d.root, -1, static_cast<__int128>(1) << 64, reached);
        return h > 0 && reached == nodes.size() ? std::string() : "rbtree: the built tree breaks a red-black rule";
    };
    return d.ca ? each(d.ca->unchecked(), d.co->unchecked(), d.cn->unchecked()) : each(d.a, d.opts, d.nodes);
}

// The kernels that read all of their array in order, the same elements every pass.
bool is_scan(const std::string& kernel) {
    return kernel == "segments" || kernel == "iterator" || kernel == "index" || kernel == "blackscholes";
}

// The tree variant's reset before every pass of a scan, either way: a read of another
// buffer of the array's size (at least twice the last-level cache at the suite's sizes),
// so each pass starts with none of the array in the caches. Without it a pass read part of
// what the other way's pass had left in the last-level cache, and how much depended on the
// build (the commit that added the reset gives the measurements).
std::function<void()> scan_reset(std::size_t words) {
    auto buf = std::make_shared<std::vector<Word>>(words, Word{1});
    return [buf] {
        Word s = 0;
        for (Word v : *buf) s += v;
        lab::sink(s);
    };
}

// Timed passes a repetition of a scan, each after its reset, the two ways' in turn
// (Job::passes). The segments scan is the shortest pass (one read of the array at memory
// bandwidth) and its goal the tightest (protect-2: 1.05x): one pass a repetition leaves
// each paired ratio to one short stretch of the machine's noise, several times the
// checks' true cost, and a round's median of a few crossed the goal on unchanged code.
// Sixteen alternating passes average that noise within each repetition at a cost of
// about one more scan's time per pass (the resets). The measured spreads: 95441af's message.
unsigned passes_of(const std::string& kernel) { return kernel == "segments" ? 16 : 1; }

void time_one(lab::Context& ctx, const Kernel& k, const std::string& phase) {
    if (phase == "segments") ctx.measure(k.ops, k.pass);
    else ctx.measure_phase(phase, k.ops, k.pass);
}

// What the CPU and kernel offer for protection keys; whether a keyed pool got one, and
// why not, are time_switches' to say (the tree variant's).
lab::Json protection_keys() {
    physmem::ProtectionKeys pk = physmem::protection_keys();
    return {{"cpu", pk.cpu}, {"os", pk.os}, {"usable", false}, {"why", "not tried: no keyed pool in this variant"}};
}

// Domain switches (switches.hpp), 2^16 a pass: phase domain_switch (software), and
// domain_switch_keyed side by side where the keyed pool got its key (keys["usable"],
// keys["why"] say whether and why not). Returns the kernel name for the record's list.
std::string time_switches(lab::Context& ctx, lab::Json& keys) {
    constexpr std::uint64_t kSwitches = 1 << 16;
    auto pools = std::make_shared<P::SwitchPools>();
    const physmem::BlockPool::KeyEnforcement k = pools->keyed.key_enforcement();
    keys["usable"] = k.on;
    keys["why"] = k.why;
    lab::Job soft{[pools] { return P::domain_switches(P::kSoftDomain, pools->soft_block, kSwitches); }, kSwitches, {}};
    if (!k.on) {
        ctx.measure_phase("domain_switch", kSwitches, soft.pass);
        return "domain_switch";
    }
    keys["key"] = k.key;
    lab::Job keyed{[pools] { return P::domain_switches(P::kKeyedDomain, pools->keyed_block, kSwitches); },
                   kSwitches, {}};
    ctx.measure_interleaved({{"domain_switch", soft}, {"domain_switch_keyed", keyed}});
    return "domain_switch";
}

lab::Json detection(const std::string& self) {
    lab::Json out = lab::Json::array();
    for (const P::Detection& d : P::detect_all(self))
        out.push_back({{"bug", d.bug}, {"expected", d.expected_to_fail ? "caught" : "silent"}, {"ok", d.ok},
                       {"status", d.status}, {"report", d.report}});
    return out;
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const std::uint64_t work = s.param_size("work");
    if (work == 0) lab::usage_error(kSpec, "--param work: must be at least 1");
    lab::Json keys = protection_keys();
    Data d = make_data(ctx);
    ctx.set_elements(d.n);
    const lab::chase::RandomOrder order(d.n, kSeed);
    std::string bad = fill(d, order);
    lab::Json names = lab::Json::array();
    Word sum = 0;
    if (!d.ca) {
        std::vector<Kernel> ks = kernels(d.a, d.opts, d.nodes, d.root, work, order, start_of(0, d.n));
        bad += check(ks, d.a, d.opts, d.r, work, order, start_of(0, d.n));
        sum = P::segments(d.a);
        for (const Kernel& k : ks) {
            time_one(ctx, k, k.name);
            names.push_back(k.name);
        }
    } else {
        ctx.set_tree(s.block_size, d.ca->unchecked().depth(), d.ca->leaf_length());
        std::vector<Kernel> plain =
            kernels(d.ca->unchecked(), d.co->unchecked(), d.cn->unchecked(), d.root, work, order, start_of(0, d.n));
        std::vector<Kernel> checked = kernels(*d.ca, *d.co, *d.cn, d.root, work, order, start_of(1, d.n));
        bad += check(plain, d.ca->unchecked(), d.co->unchecked(), d.r, work, order, start_of(0, d.n));
        std::string bc = check(checked, *d.ca, *d.co, d.r, work, order, start_of(1, d.n));
        sum = P::segments(d.ca->unchecked());
        if (!bc.empty()) bad += (bad.empty() ? "checked " : "; checked ") + bc;
        const std::function<void()> evict = scan_reset(d.n);
        const P::rb::BoundsFloor<physmem::TreeArray<RbNode>> floor{d.cn->unchecked(), d.r};
        const Word floor_seed = Word{1} << 33;  // apart from both ways' seeds (start_of)
        if (P::rb::lookups(floor, d.root, work, seed_of(floor_seed)) != P::rb::expected_lookups(d.r, work, seed_of(floor_seed)))
            bad += std::string(bad.empty() ? "" : "; ") + "rbtree_floor: a lookup missed its payload";
        for (std::size_t k = 0; k < plain.size(); ++k) {  // the ways in turn, a repetition at a time
            std::string way = plain[k].name == "segments" ? "" : plain[k].name;
            std::function<void()> reset = is_scan(plain[k].name) ? evict : nullptr;
            const unsigned passes = passes_of(plain[k].name);
            std::vector<lab::Context::Named> group{
                {way, {plain[k].pass, plain[k].ops, reset, passes}},
                {plain[k].name + "_checked", {checked[k].pass, checked[k].ops, reset, passes}}};
            if (plain[k].name == "rbtree")  // the control: the cheapest bounds check on the same lookups
                group.push_back({"rbtree_floor", {[&, p = floor_seed + 1]() mutable {
                                                      return P::rb::lookups(floor, d.root, work, seed_of(p++));
                                                  }, work, nullptr}});
            ctx.measure_interleaved(group);
            names.push_back(plain[k].name);
        }
        names.push_back(time_switches(ctx, keys));
        physmem::BlockPool& pool = d.ca->pool();
        std::size_t table = d.ca->metadata_bytes() + d.co->metadata_bytes() + d.cn->metadata_bytes();
        ctx.set_field("protect_metadata", {{"pool_tag_bytes", pool.tag_bytes()},
                                           {"array_table_bytes", table},
                                           {"pool_bytes", pool.stats().bytes_mapped}});
    }
    ctx.checksum(sum);  // before the timed gups passes (their number varies)
    ctx.verify(bad.empty(), "each kernel's pass (both ways on the tree) checked: scans sum to n(n-1)/2, the chase "
                            "ends where the cycle says, two gups passes restore the cycle, every 97th price equals "
                            "the scalar formula's, every rbtree lookup finds its payload (the tree obeys the "
                            "red-black rules)" + (bad.empty() ? std::string() : " (" + bad + ")"));
    lab::Json info = {{"kernels", names}, {"work", work}, {"asan", kAsan}, {"protection_keys", keys}};
    if (d.ca && !kAsan && s.param("detect") == "on") info["detection"] = detection(lab::process::own_argv().at(0));
    ctx.set_field("protect", info);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::strcmp(argv[1], "--seeded-bug") == 0) return P::run_seeded_bug(argv[2]);
    return lab::run(kSpec, argc, argv, body);
}
