// lab/alias/conv_main.cpp — seed 002's convolution offset sweep, four builds, and where each
// allocator's default allocations land.
//
//   physmem_lab_alias_conv --variant array-4k --size 4M [--param offsets=0:1024:4]
//   physmem_lab_alias_conv --variant malloc-4k --size 4M --param alloc=jemalloc
//
// n = size / 4 floats (>= 8). The kernel (lab/kernels/alias_conv.hpp) is compiled four
// times (lab/cmake/alias.cmake: -O2, -O2 + restrict, -O3, -O3 + restrict; no -march).
//   array-B   one mapping on backing B; in at its start (page aligned), out at a later
//             page start plus `offset` floats, for each offset of the list: out's low 12
//             bits are offset * 4 bytes past in's. Every build timed at every offset
//             (interleaved), ns per element; the top-level timing is build o2 at the
//             first offset. Field "conv": offsets and, per build, the timing per offset.
//             `rounds` times over: every timing is taken once per round, rounds one after
//             the other, and combined (min and max over all repetitions of all rounds,
//             median of the rounds' medians), so that interference from other processes,
//             which comes in bursts, is unlikely to hit every round of one offset.
//   malloc-4k in = malloc(n * 4), out = malloc(n * 4), in that order, under `alloc`
//             (lab/common/preload.hpp re-executes under it; exit 3 when not installed).
//             Every build timed on those buffers in `rounds` rounds (top level: o2). Field "conv": where out
//             landed relative to in (offset in floats mod 1024) and the builds' timings.
// Where the machine counts them (lab/alias/counted.hpp), one extra pass per timing is
// counted: "cycles_per_elem" and "alias_per_elem" (4K-alias events), beside "counters"
// saying what was available and why not.
// Verified: every build's output equals the double-precision reference within 1e-5
// relative, the two end elements on each side untouched (array: at the first and last
// offset).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "builds.hpp"
#include "context.hpp"
#include "counted.hpp"
#include "kernels/alias_conv.hpp"
#include "preload.hpp"
#include "process.hpp"

namespace {

using lab::Json;
using namespace lab::alias;

constexpr float kSentinel = -7.0f;

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_alias_conv",
    .experiment = "alias_conv",
    .unit = "element",
    .kinds = {lab::Kind::array, lab::Kind::malloc},
    .params = {{"offsets", "0:1024:4", {}, "array: offsets of out in floats, comma-separated, each an offset or 'a:b:step' (a <= o < b); < 1024"},
               {"alloc", "glibc", {"glibc", "jemalloc", "tcmalloc", "mimalloc", "physmem"}, "malloc: the allocator"},
               {"rounds", "3", {}, "times the whole set of timings is repeated, interleaved (>= 1)"}},
};

// One item of --param offsets: "o" or "a:b:step" (a <= o < b), appended to out.
void parse_item(const std::string& item, std::vector<std::size_t>& out) {
    unsigned long a = 0, b = 0, st = 0;
    char tail = 0;
    int got = std::sscanf(item.c_str(), "%lu:%lu:%lu%c", &a, &b, &st, &tail);
    if (got == 3) {
        if (st == 0 || a >= b) lab::usage_error(kSpec, "--param offsets: '" + item + "' needs a < b and step >= 1");
        for (unsigned long o = a; o < b; o += st) out.push_back(o);
        return;
    }
    char* stop = nullptr;
    unsigned long v = std::strtoul(item.c_str(), &stop, 10);
    if (item.empty() || *stop || item.find(':') != std::string::npos)
        lab::usage_error(kSpec, "--param offsets: not an offset or a:b:step range: '" + item + "'");
    out.push_back(v);
}

// Comma-separated items of parse_item; every offset < 1024.
std::vector<std::size_t> parse_offsets(const std::string& text) {
    std::vector<std::size_t> out;
    std::size_t pos = 0;
    for (;;) {
        std::size_t end = text.find(',', pos);
        parse_item(text.substr(pos, end == std::string::npos ? std::string::npos : end - pos), out);
        if (end == std::string::npos) break;
        pos = end + 1;
    }
    for (auto o : out)
        if (o >= 1024) lab::usage_error(kSpec, "--param offsets: " + std::to_string(o) + " is not < 1024");
    return out;
}

void fill_input(float* in, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) in[i] = conv_input(i);
}

// Runs `b` once on a sentinel-filled out and compares with the reference.
bool check(const ConvBuild& b, const float* in, float* out, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) out[i] = kSentinel;
    b.fn(in, out, n);
    bool ok = out[0] == kSentinel && out[1] == kSentinel && out[n - 2] == kSentinel && out[n - 1] == kSentinel;
    for (std::size_t i = 2; ok && i + 2 < n; ++i) {
        double want = conv_expected(i);
        ok = std::fabs(out[i] - want) <= 1e-5 * std::max(1.0, std::fabs(want));
    }
    return ok;
}

std::uint64_t keep(const float* out, std::size_t n) {
    std::uint32_t bits;
    std::memcpy(&bits, &out[n / 2], sizeof bits);
    return bits;
}

Json build_json(const ConvBuild& b) {
    return Json{{"name", b.name}, {"flags", b.flags}, {"restrict", b.restrict_}};
}

// One timing from its rounds (each a sweep_point summary): the best and worst repetition
// over all rounds, the median of the rounds' medians, and each round's best.
Json combine(const std::vector<Json>& rounds) {
    std::vector<double> med, best;
    double lo = rounds[0]["min_ns"], hi = rounds[0]["max_ns"];
    for (const Json& r : rounds) {
        med.push_back(r["median_ns"]);
        best.push_back(r["min_ns"]);
        lo = std::min(lo, r["min_ns"].get<double>());
        hi = std::max(hi, r["max_ns"].get<double>());
    }
    std::sort(med.begin(), med.end());
    double m = med[med.size() / 2];
    return Json{{"median_ns", m}, {"min_ns", lo}, {"max_ns", hi}, {"rel_spread", (hi - lo) / m},
                {"round_min_ns", best}};
}

// One counted pass of build b (cycles and alias events per element) into j's lists, when
// the machine counts either; nothing otherwise.
void count_into(Json& j, const AliasCounters& hw, const ConvBuild& b, const float* in, float* out, std::size_t n,
                bool list) {
    if (!hw.any()) return;
    AliasCounters::Delta d = hw.count(static_cast<double>(n), [&] { b.fn(in, out, n); });
    if (list) {
        j["cycles_per_elem"].push_back(AliasCounters::json(d.cycles));
        j["alias_per_elem"].push_back(AliasCounters::json(d.alias));
    } else {
        j["cycles_per_elem"] = AliasCounters::json(d.cycles);
        j["alias_per_elem"] = AliasCounters::json(d.alias);
    }
}

// --param rounds (exits 2 unless 1..100).
unsigned rounds_of(const lab::Settings& s) {
    std::size_t r = s.param_size("rounds");
    if (r < 1 || r > 100) lab::usage_error(kSpec, "--param rounds: 1 .. 100");
    return static_cast<unsigned>(r);
}

// ----------------------------------------------------------------- offset sweep

void sweep_body(lab::Context& ctx, std::size_t n) {
    const auto offsets = parse_offsets(ctx.settings().param("offsets"));
    const std::size_t page = 1024, span = (n + page - 1) / page * page + page;
    std::span<float> mem = ctx.array<float>("conv", 2 * span + page);
    float* in = mem.data();
    fill_input(in, n);
    const ConvBuild* builds = conv_builds();
    auto out_at = [&](std::size_t off) { return mem.data() + span + off; };
    ctx.measure(n, [&] { builds[0].fn(in, out_at(offsets[0]), n); return keep(out_at(offsets[0]), n); });
    // got[offset index][build]: one summary per round; rounds sweep every offset in turn, so
    // a burst of interference from other processes hits one round of an offset, not all.
    const unsigned rounds = rounds_of(ctx.settings());
    std::vector<std::vector<std::vector<Json>>> got(offsets.size(), std::vector<std::vector<Json>>(kConvBuildCount));
    for (unsigned r = 0; r < rounds; ++r)
        for (std::size_t o = 0; o < offsets.size(); ++o)
            for (std::size_t b = 0; b < kConvBuildCount; ++b) {
                float* out = out_at(offsets[o]);
                got[o][b].push_back(ctx.sweep_point(n, [&] { builds[b].fn(in, out, n); return keep(out, n); }));
            }
    std::vector<Json> per(kConvBuildCount);
    AliasCounters hw;
    for (std::size_t b = 0; b < kConvBuildCount; ++b) {
        per[b] = build_json(builds[b]);
        for (std::size_t o = 0; o < offsets.size(); ++o) {
            Json t = combine(got[o][b]);
            for (const char* k : {"median_ns", "min_ns", "max_ns", "rel_spread"}) per[b][k].push_back(t[k]);
            count_into(per[b], hw, builds[b], in, out_at(offsets[o]), n, true);
        }
    }
    bool ok = true;
    for (std::size_t b = 0; b < kConvBuildCount; ++b)
        ok = ok && check(builds[b], in, out_at(offsets.front()), n) && check(builds[b], in, out_at(offsets.back()), n);
    ctx.set_field("conv", Json{{"mode", "offsets"}, {"n", n}, {"rounds", rounds}, {"in_low12", lab::process::low12(in)},
                               {"offsets", offsets}, {"counters", hw.availability()}, {"builds", per}});
    ctx.checksum(keep(out_at(offsets.back()), n));
    ctx.verify(ok, "every build's output equals the reference within 1e-5 relative at the first and last offset, ends untouched");
}

// ----------------------------------------------------------------- default allocations

void malloc_body(lab::Context& ctx, std::size_t n) {
    const std::string alloc = ctx.settings().param("alloc");
    lab::preload::ensure(alloc);
    const std::string active = lab::preload::active();
    auto* in = static_cast<float*>(std::malloc(n * sizeof(float)));
    auto* out = static_cast<float*>(std::malloc(n * sizeof(float)));
    if (!in || !out) throw std::bad_alloc();
    fill_input(in, n);
    const ConvBuild* builds = conv_builds();
    ctx.measure(n, [&] { builds[0].fn(in, out, n); return keep(out, n); });
    const unsigned rounds = rounds_of(ctx.settings());
    std::vector<std::vector<Json>> got(kConvBuildCount);
    for (unsigned r = 0; r < rounds; ++r)
        for (std::size_t b = 0; b < kConvBuildCount; ++b)
            got[b].push_back(ctx.sweep_point(n, [&] { builds[b].fn(in, out, n); return keep(out, n); }));
    Json per = Json::array();
    AliasCounters hw;
    bool ok = true;
    for (std::size_t b = 0; b < kConvBuildCount; ++b) {
        Json j = build_json(builds[b]);
        Json t = combine(got[b]);
        for (auto& [k, v] : t.items()) j[k] = v;
        count_into(j, hw, builds[b], in, out, n, false);
        per.push_back(j);
        ok = ok && check(builds[b], in, out, n);
    }
    auto diff = static_cast<long long>(reinterpret_cast<std::uintptr_t>(out) - reinterpret_cast<std::uintptr_t>(in));
    ctx.set_field("conv", Json{{"mode", "malloc"}, {"n", n}, {"rounds", rounds}, {"alloc", alloc}, {"active", active},
                               {"in_low12", lab::process::low12(in)}, {"out_low12", lab::process::low12(out)},
                               {"out_minus_in_bytes", diff}, {"offset_floats", offset_floats(in, out)},
                               {"counters", hw.availability()}, {"builds", per}});
    ctx.note("malloc served by " + active);
    ctx.checksum(keep(out, n));
    std::free(out);
    std::free(in);
    ctx.verify(ok, "every build's output on the malloc'd buffers equals the reference within 1e-5 relative, ends untouched");
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const std::size_t n = s.size_bytes / sizeof(float);
    if (n < 8) lab::usage_error(kSpec, "--size: at least 32 bytes (8 floats)");
    if (s.kind == lab::Kind::malloc && s.backing != physmem::Backing::page_4k)
        lab::usage_error(kSpec, "--variant: malloc-4k only (the allocator picks its pages)");
    ctx.set_elements(n);
    if (s.kind == lab::Kind::malloc) malloc_body(ctx, n);
    else sweep_body(ctx, n);
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
