// lab/experiments/low12.cpp — seed 002's allocator table: the low 12 bits of equal
// buffers from one allocator, sizes 64 B up to --size (powers of two).
//
//   physmem_lab_low12 --variant malloc-4k --size 8M --param alloc=jemalloc --param live=8
//
// The program re-executes itself under the allocator asked for (lab/common/preload.hpp)
// and says which one served malloc ("allocator"). For each size, `live` buffers are held
// at once (kernels/low12.hpp); the record's "sizes" lists, per size, their low 12 bits,
// whether the first pair shares them and how many distinct values the live ones have.
// Timed (top level): one pass over every size, allocating and freeing the buffers
// (unit: allocation). Verified: every buffer was non-null, writable at both ends and
// disjoint from the others.
#include <string>

#include "context.hpp"
#include "kernels/low12.hpp"
#include "preload.hpp"

namespace {

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_low12",
    .experiment = "low12",
    .unit = "allocation",
    .kinds = {lab::Kind::malloc},
    .params = {{"alloc", "glibc", {"glibc", "jemalloc", "tcmalloc", "mimalloc", "physmem"}, "the malloc to probe"},
               {"live", "8", {}, "buffers of each size held at once (>= 2)"}},
};

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    if (s.backing != physmem::Backing::page_4k) lab::usage_error(kSpec, "--variant: only malloc-4k (the allocator's own pages)");
    lab::preload::ensure(s.param("alloc"));
    ctx.set_field("allocator", lab::preload::active());
    const std::size_t live = s.param_size("live");
    if (live < 2 || live > 4096) lab::usage_error(kSpec, "--param live: 2..4096");
    const auto sizes = lab::low12::sizes(s.size_bytes);
    if (sizes.empty()) lab::usage_error(kSpec, "--size: at least 64");
    bool ok = true;
    std::uint64_t sum = 0;   // checksum: the low-12 values, position-weighted
    lab::Json table = lab::Json::array();
    for (std::size_t size : sizes) {
        lab::low12::Result r = lab::low12::probe(size, live);
        ok = ok && r.ok;
        for (unsigned b : r.low12) sum = sum * 31 + b;
        table.push_back(lab::Json{{"size", size}, {"low12", r.low12}, {"pair_shares", r.pair_shares},
                                  {"distinct", r.distinct}});
    }
    ctx.set_field("sizes", std::move(table));
    ctx.set_elements(sizes.size() * live);
    ctx.measure(sizes.size() * live, [&] {
        std::uint64_t good = 0;
        for (std::size_t size : sizes) good += lab::low12::probe(size, live).ok;
        ok = ok && good == sizes.size();
        return good;
    });
    ctx.checksum(sum);
    ctx.verify(ok, "every buffer non-null, writable at both ends, disjoint from the others held with it");
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
