// lab/experiments/hashtable.cpp — the seed paper's deepsjeng analogue (Fig. 5): a
// transposition table probed at random, contiguous array vs tree array (operator[]).
//
//   physmem_lab_hashtable --variant tree-index-1g --size 1G [--param probes=4M]
//
// size / 64 buckets of 4 16-byte entries (`elements` = entries); a pass makes `probes`
// probes (ops_per_pass; unit "probe") of the same seeded key sequence, on the table as
// earlier passes left it (kernels/hashtable.hpp). Verified: from an empty table, one
// pass of the measured kernel gives the hit, miss and replacement counts, the sum of
// the data read and the table checksum of a plain run on a contiguous vector.
#include <algorithm>
#include <string>
#include <vector>

#include "context.hpp"
#include "tree_walk.hpp"
#include "kernels/hashtable.hpp"
#include "kernels/tree_sizing.hpp"
#include "physmem/prefault_allocator.hpp"

namespace {

using namespace lab::hashtable;
using Tree = physmem::TreeArray<Bucket>;
using Reference = std::vector<Bucket, physmem::prefault_allocator<Bucket>>;

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_hashtable",
    .experiment = "hashtable",
    .unit = "probe",
    .kinds = {lab::Kind::array, lab::Kind::tree_index},
    .default_block_size = 2 << 20,  // depth 2 up to 256 GiB; the root stays in cache
    .params = {{"probes", "4194304", {}, "probes per pass"},
               lab::walk_param()},
};

std::string describe(const Stats& s) {
    return std::to_string(s.hits) + " hits, " + std::to_string(s.misses) + " misses, " + std::to_string(s.replaced) +
           " replacements";
}

// Measures the probes on `access` (a view of `store`), then verifies one pass from an
// empty table against the contiguous reference.
template <class Store, class Access>
void measure_and_verify(lab::Context& ctx, Store& store, Access& access, const Stream& stream, std::uint64_t probes) {
    auto pass = [&] {
        Stats s = probe_pass(access, stream, probes);
        return s.hits ^ s.sum;
    };
    clear(store);  // faults the table in, in order, outside the timed region
    ctx.measure(probes, pass);
    clear(store);
    const Stats got = probe_pass(access, stream, probes);
    const std::uint64_t sum = checksum(store);
    Reference ref(store.size());
    const Stats want = reference_pass(ref, stream, probes);
    std::span<Bucket> ref_view(ref);
    const std::uint64_t want_sum = checksum(ref_view);
    ctx.set_param("hits", got.hits);
    ctx.set_param("misses", got.misses);
    ctx.set_param("replaced", got.replaced);
    ctx.checksum(sum);
    ctx.verify(got == want && sum == want_sum,
               "one pass from an empty table: " + describe(got) + " (contiguous reference: " + describe(want) +
                   "), data read and table checksum " + (sum == want_sum ? "equal" : "DIFFER from") + " the reference's");
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const std::uint64_t nb = std::max<std::uint64_t>(s.size_bytes / sizeof(Bucket), 1);
    const std::uint64_t probes = s.param_size("probes");
    if (probes == 0) lab::usage_error(kSpec, "--param probes: must be positive");
    ctx.set_elements(nb * kWays);
    ctx.set_param("probes", probes);
    ctx.set_param("buckets", nb);
    const Stream stream{s.seed, 2 * nb * kWays};
    if (s.kind == lab::Kind::array) {
        std::span<Bucket> a = ctx.array<Bucket>("table", nb);
        measure_and_verify(ctx, a, a, stream, probes);
        return;
    }
    Tree t(nb, ctx.pool("table", lab::tree_bytes<Bucket>(s.block_size, nb)));
    ctx.set_tree(s.block_size, t.depth(), t.leaf_length());
    lab::with_walk(s, t, [&](auto& access) { measure_and_verify(ctx, t, access, stream, probes); });
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
