// lab/experiments/rbtree.cpp — the seed paper's red-black tree (Fig. 4): the same tree
// code on nodes from glibc malloc (4 KiB pages) or from pool blocks on huge pages.
//
//   physmem_lab_rbtree --variant pool-1g --size 512M --block-size 2M
//
// n = size / sizeof(Node) (48 bytes) keys from splitmix64(seed). Phase "insert": all n
// keys into an empty tree (the reset before each pass empties it, untimed). Main
// measure: one in-order traversal summing key + payload of every node (unit "node").
// Verified: red-black invariants, strictly increasing in-order keys and node count after
// the insert phase; the traversal's sum equals the sum over the sorted distinct keys.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <malloc.h>
#include <map>
#include <string>

#include "context.hpp"
#include "kernels/rbtree.hpp"

namespace {

using namespace lab::rbtree;

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_rbtree",
    .experiment = "rbtree",
    .unit = "node",
    .kinds = {lab::Kind::malloc, lab::Kind::pool},
    .default_block_size = 2 << 20,
    .params = {{"insert_reps", "auto", {}, "timed insert passes: a count, or auto = --reps/--warmup up to 2^22 "
                                           "nodes, 1 pass without warm-up above (a 512 MiB build takes ~15 s)"}},
    .traceable = true,
};

// The /proc/self/smaps entry of the mapping holding p, in one line ("" if not found):
// what backs memory the context cannot see (malloc's heap).
std::string smaps_line(const void* p) {
    std::FILE* f = std::fopen("/proc/self/smaps", "re");
    if (!f) return "";
    auto addr = reinterpret_cast<std::uintptr_t>(p);
    char line[512];
    std::string out;
    bool inside = false;
    while (std::fgets(line, sizeof line, f)) {
        unsigned long lo = 0, hi = 0;
        char perms[8];
        if (std::sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3) {  // a mapping's header line
            if (inside) break;
            inside = addr >= lo && addr < hi;
            if (inside) {
                line[std::strcspn(line, "\n")] = 0;
                out = std::string(line) + ";";
            }
            continue;
        }
        if (!inside) continue;
        for (const char* key : {"Rss:", "AnonHugePages:", "KernelPageSize:", "THPeligible:"})
            if (std::strncmp(line, key, std::strlen(key)) == 0) {
                line[std::strcspn(line, "\n")] = 0;
                std::string s(line);
                s.erase(std::unique(s.begin(), s.end(), [](char a, char b) { return a == ' ' && b == ' '; }), s.end());
                out += " " + s + ";";
            }
    }
    std::fclose(f);
    return out;
}

constexpr std::size_t kAutoRepeatNodes = std::size_t{1} << 22;

// b - a in bytes (signed).
long long distance(const Node* a, const Node* b) {
    return static_cast<long long>(reinterpret_cast<std::uintptr_t>(b)) - static_cast<long long>(reinterpret_cast<std::uintptr_t>(a));
}

// Notes on where malloc put the nodes (its mapping's backing, from smaps), its chunk
// size, and the commonest distance between nodes of consecutively inserted keys.
template <class Tree>
void note_malloc_backing(lab::Context& ctx, const Tree& t, const std::vector<std::uint64_t>& keys) {
    const Node* first = t.find(keys.front());
    std::string line = smaps_line(first);
    ctx.note("malloc-4k: node mapping from /proc/self/smaps: " + (line.empty() ? "not found (unverified)" : line));
    std::map<long long, std::size_t> seen;
    for (std::size_t i = 1; i < std::min<std::size_t>(keys.size(), 1001); ++i) ++seen[distance(t.find(keys[i - 1]), t.find(keys[i]))];
    if (seen.empty()) return;
    auto most = std::max_element(seen.begin(), seen.end(), [](auto& a, auto& b) { return a.second < b.second; });
    ctx.note("malloc-4k: malloc_usable_size(node) = " + std::to_string(malloc_usable_size(const_cast<Node*>(first))) +
             "; consecutively inserted keys' nodes are " + std::to_string(most->first) + " bytes apart in " +
             std::to_string(most->second) + " of the first " + std::to_string(std::min<std::size_t>(keys.size(), 1001) - 1) + " pairs");
}

// Insert phase, invariant check, traversal measure and sum check, on one allocator.
template <class Alloc>
void run_tree(lab::Context& ctx, Alloc& alloc, const std::vector<std::uint64_t>& keys, std::size_t distinct,
              std::uint64_t expected) {
    RbTree<Alloc> t(alloc);
    auto build = [&] {
        for (std::uint64_t k : keys) t.insert(k, payload_of(k));
        return std::uint64_t{t.size()};
    };
    const lab::Settings& s = ctx.settings();
    unsigned reps = s.reps, warmup = s.warmup;
    if (s.param("insert_reps") != "auto") reps = static_cast<unsigned>(std::max<std::size_t>(s.param_size("insert_reps"), 1));
    else if (keys.size() > kAutoRepeatNodes) reps = 1, warmup = 0;
    ctx.measure_phase("insert", keys.size(), build, [&] { t.clear(); }, reps, warmup);
    Check c = check(t.root(), t.size());
    ctx.verify(c.ok && t.size() == distinct,
               "after insert: red-black invariants (black root, no red-red, equal black height " +
                   std::to_string(c.black_height) + "), parent links, strictly increasing in-order keys, " +
                   std::to_string(t.size()) + " nodes = distinct keys " + std::to_string(distinct) +
                   (c.ok ? "" : " (" + c.error + ")"));
    ctx.measure(t.size(), [&] { return traverse_sum(t.root()); });
    std::uint64_t got = traverse_sum(t.root());
    ctx.checksum(got);
    ctx.verify(got == expected, "in-order sum of key + payload equals the sum over the sorted distinct keys");
    bool traced_ok = true;  // the traced pass: every node field the traversal loads, as data
    ctx.simulate(t.size(), [&](lab::Tracer& tr) {
        traced_ok = traced_ok && traverse_sum(t.root(), [&tr](const void* p) { tr.data(p); }) == expected;
    });
    if (!traced_ok) ctx.verify(false, "the traced traversal's sum equals it too");
    if constexpr (!Alloc::bulk_release)
        note_malloc_backing(ctx, t, keys);
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const std::size_t n = std::max<std::size_t>(s.size_bytes / sizeof(Node), 1);
    std::vector<std::uint64_t> keys = make_keys(n, s.seed);
    std::size_t distinct = 0;
    const std::uint64_t expected = reference_sum(keys, &distinct);
    ctx.set_elements(distinct);
    if (s.kind == lab::Kind::malloc) {
        if (s.backing != physmem::Backing::page_4k) lab::usage_error(kSpec, "malloc is only offered as malloc-4k");
        MallocNodes alloc;
        run_tree(ctx, alloc, keys, distinct, expected);
        return;
    }
    physmem::BlockPool& pool = ctx.pool("nodes", PoolNodes::blocks_for(n, s.block_size) * s.block_size);
    PoolNodes alloc(pool);
    ctx.note("pool: " + std::to_string(alloc.nodes_per_block()) + " nodes of " + std::to_string(sizeof(Node)) +
             " bytes per block, bump-allocated in insertion order (same order as malloc)");
    run_tree(ctx, alloc, keys, distinct, expected);
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
