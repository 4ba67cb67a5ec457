// lab/experiments/dgemv.cpp — seed 002's BLAS case: cblas_dgemv (A = I, x[i] = i) with y
// placed at byte offsets from a 4 KiB boundary, through OpenBLAS or the reference BLAS.
//
//   physmem_lab_dgemv --variant array-4k --size 8M --param blas=openblas --param offsets=0:4080:16
//
// --size is the bytes of A: M = N = floor(sqrt(size / 8)) (8M: 1024, the seed's size).
// The BLAS is loaded with dlopen from Debian's package path (kernels/dgemv.hpp), one
// thread (OPENBLAS_NUM_THREADS=1, set before loading). A, x and y share one mapping on
// the variant's backing. Unit: element (one multiply-add of A).
// Timed: the top level at offset 0 (x, y and A's columns share their low 12 bits), then
// every offset of the sweep, each like the top level (reps, warm-up, min-rep-ms), under
// the record's "sweep": [{"offset", "y_low12", "median_ns", "min_ns", "max_ns",
// "rel_spread"}]. Verified: y == x exactly after every timed offset.
#include <cmath>
#include <cstdlib>
#include <string>

#include "context.hpp"
#include "kernels/dgemv.hpp"
#include "process.hpp"

namespace {

using namespace lab::dgemv;

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_dgemv",
    .experiment = "dgemv",
    .unit = "element",
    .kinds = {lab::Kind::array},
    .params = {{"blas", "openblas", {"openblas", "reference"}, "which BLAS serves cblas_dgemv"},
               {"offsets", "0:4080:16", {}, "y offsets in bytes, LO:HI:STEP (multiples of 8, below 4096)"}},
};

struct Sweep {
    std::size_t lo, hi, step;
};

Sweep parse_sweep(const std::string& v) {
    Sweep s{};
    char tail = 0;
    if (std::sscanf(v.c_str(), "%zu:%zu:%zu%c", &s.lo, &s.hi, &s.step, &tail) != 3 || s.step == 0 || s.step % 8 ||
        s.lo % 8 || s.lo > s.hi || s.hi >= kPage)
        lab::usage_error(kSpec, "--param offsets: '" + v + "' is not LO:HI:STEP, multiples of 8, HI < 4096");
    return s;
}

DgemvFn load(const std::string& blas, std::string* path) {
    ::setenv("OPENBLAS_NUM_THREADS", "1", 1);
    for (const Library& l : kLibraries) {
        if (blas != l.name) continue;
        std::string why;
        void* f = lab::process::library_symbol(l.path, "cblas_dgemv", &why);
        if (!f) throw physmem::backing_unavailable(std::string(l.name) + " BLAS: " + why);
        *path = lab::process::object_of(f);
        return reinterpret_cast<DgemvFn>(f);
    }
    throw std::invalid_argument("unknown BLAS " + blas);
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const std::size_t n = static_cast<std::size_t>(std::sqrt(static_cast<double>(s.size_bytes / sizeof(double))));
    if (n < 16) lab::usage_error(kSpec, "--size: A needs at least 16 x 16 doubles (2K)");
    const Sweep sw = parse_sweep(s.param("offsets"));
    std::string path;
    DgemvFn f = load(s.param("blas"), &path);
    ctx.set_field("blas_library", path);
    ctx.set_field("matrix", lab::Json{{"m", n}, {"n", n}});
    ctx.set_elements(n * n);
    auto arena = ctx.array<std::byte>("operands", arena_bytes(n));
    std::size_t bad = 0;
    auto at = [&](std::size_t off) {
        Operands o = place(arena.data(), n, off);
        init(o, n);
        return o;
    };
    Operands o0 = at(0);
    ctx.measure(n * n, [&] { run(f, o0, n); return std::uint64_t{1}; });
    bad += mismatches(o0, n);
    lab::Json sweep = lab::Json::array();
    for (std::size_t off = sw.lo; off <= sw.hi; off += sw.step) {
        Operands o = at(off);
        lab::Json p = ctx.sweep_point(n * n, [&] { run(f, o, n); return std::uint64_t{1}; });
        bad += mismatches(o, n);
        p["offset"] = off;
        p["y_low12"] = lab::process::low12(o.y);
        sweep.push_back(std::move(p));
    }
    ctx.set_field("sweep", std::move(sweep));
    ctx.checksum(bad);
    ctx.verify(bad == 0, "y equals x exactly (A = I) after the top level and every offset of the sweep");
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
