// lab/experiments/prefault_latency.cpp — seed 003's containers: the latency of each
// insert into a reserved std::vector, a reserved std::unordered_map and a std::map, with
// std::allocator against physmem::prefault_allocator.
//
//   physmem_lab_prefault_latency --variant pool-thp --size 32M --param container=map
//
// Variants: malloc-4k = std::allocator (glibc malloc; THP madvise-only, so 4 KiB pages);
// pool-thp = physmem::prefault_allocator (its mappings take the best huge-page rung:
// hugetlb 2 MiB when reserved, else THP; the rung is the allocator's, not asserted here).
// Elements: vector n = size / 8 (uint64 push_backs); unordered_map and map n = size / 64
// (uint64 -> uint64 inserts; a node with its allocator overhead is about 64 bytes).
// Each repetition builds a fresh container (untimed: construction, reserve() and, for
// prefault_allocator, prefault_reserve() of the nodes' bytes) and times one pass of n
// inserts. Containers of earlier repetitions are kept until the end so that every
// repetition gets memory the process has not touched before (the first-use case the
// seed is about; a warm heap would hide the faults). Every insert is timed on its own
// with TickClock (rdtsc, calibrated against steady_clock over the run) into a histogram:
// "latency_ns" in the record holds p50, p99, p99.9 and max over the timed repetitions.
// Verified: size and the sum of keys and values of the last container.
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "context.hpp"
#include "kernels/prefault.hpp"
#include "physmem/prefault_allocator.hpp"

namespace {

using namespace lab::prefault;
using Key = std::uint64_t;
constexpr std::size_t kNodeBytes = 64;

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_prefault_latency",
    .experiment = "prefault_latency",
    .unit = "element",
    .kinds = {lab::Kind::malloc, lab::Kind::pool},
    .default_block_size = 2 << 20,
    .params = {{"container", "vector", {"vector", "unordered_map", "map"}, "what is inserted into"}},
};

template <class A> using Vec = std::vector<Key, A>;
template <class A> using UMap = std::unordered_map<Key, Key, std::hash<Key>, std::equal_to<Key>,
                                                   typename std::allocator_traits<A>::template rebind_alloc<std::pair<const Key, Key>>>;
template <class A> using OMap = std::map<Key, Key, std::less<Key>,
                                         typename std::allocator_traits<A>::template rebind_alloc<std::pair<const Key, Key>>>;

// Key of insert i: a bijective mix, so map inserts land in random places.
Key key_at(std::uint64_t i) noexcept { return lab::rnd::mix(i); }

// reserve() where the container has one (vector, unordered_map; not map).
template <class C> void reserve(C& c, std::size_t n) {
    if constexpr (requires { c.reserve(n); }) c.reserve(n);
}
template <class C> constexpr bool kIsVector = requires(C& m) { m.push_back(Key{}); };
template <class C> void insert(C& c, std::uint64_t i) {
    if constexpr (kIsVector<C>) c.push_back(key_at(i));
    else c.emplace(key_at(i), i);
}
template <class C> Key total(const C& c) {
    Key s = 0;
    if constexpr (kIsVector<C>) for (Key k : c) s += k;
    else for (auto& [k, v] : c) s += k + v;
    return s;
}

// n inserts into c, each timed into h (ticks).
template <class C>
void timed_inserts(C& c, std::size_t n, Histogram& h) {
    for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t t0 = TickClock::now();
        insert(c, i);
        h.record(TickClock::now() - t0);
    }
}

Key expected_total(bool is_vector, std::size_t n) {
    Key s = 0;
    for (std::size_t i = 0; i < n; ++i) s += key_at(i) + (is_vector ? 0 : i);
    return s;
}

lab::Json percentiles(const Histogram& h, double ticks_per_ns) {
    auto ns = [&](std::uint64_t t) { return static_cast<double>(t) / ticks_per_ns; };
    return lab::Json{{"p50", ns(h.percentile(0.50))}, {"p99", ns(h.percentile(0.99))},
                     {"p99_9", ns(h.percentile(0.999))}, {"max", ns(h.max())}, {"samples", h.count()}};
}

template <class C, bool kPrefault>
void run_container(lab::Context& ctx, std::size_t n, bool is_vector) {
    const lab::Settings& s = ctx.settings();
    std::vector<std::unique_ptr<C>> kept;
    std::vector<Histogram> per_pass;
    TickClock clock;
    clock.start();
    auto reset = [&] {
        if constexpr (kPrefault) if (!is_vector) physmem::prefault_reserve(n * kNodeBytes);
        kept.push_back(std::make_unique<C>());
        reserve(*kept.back(), n);
        per_pass.emplace_back();
    };
    ctx.measure(n, [&] { timed_inserts(*kept.back(), n, per_pass.back()); return Key{kept.back()->size()}; }, reset);
    Histogram all;
    for (std::size_t i = s.warmup; i < per_pass.size(); ++i) all.merge(per_pass[i]);
    double tpn = clock.ticks_per_ns();
    ctx.set_field("latency_ns", percentiles(all, tpn));
    ctx.set_field("clock", lab::Json{{"name", TickClock::name()}, {"ticks_per_ns", tpn},
                                     {"calibration", "against steady_clock over the whole run"}});
    if constexpr (kPrefault) {
        auto st = physmem::prefault_stats();   // while the containers are alive
        ctx.note("prefault_allocator: " + std::to_string(st.chunks) + " arena chunks, " +
                 std::to_string(st.large_mappings) + " large mappings, " + std::to_string(st.bytes_prefaulted) +
                 " bytes prefaulted");
    }
    Key got = total(*kept.back());
    ctx.checksum(got);
    ctx.verify(kept.back()->size() == n && got == expected_total(is_vector, n),
               "the last container holds n elements whose keys (and values) sum to the reference");
}

template <class A>
void dispatch(lab::Context& ctx, const std::string& container, std::size_t size) {
    constexpr bool kPrefault = !std::is_same_v<A, std::allocator<Key>>;
    if (container == "vector") {
        ctx.set_elements(std::max<std::size_t>(size / sizeof(Key), 1));
        run_container<Vec<A>, kPrefault>(ctx, std::max<std::size_t>(size / sizeof(Key), 1), true);
    } else if (container == "unordered_map") {
        ctx.set_elements(std::max<std::size_t>(size / kNodeBytes, 1));
        run_container<UMap<A>, kPrefault>(ctx, std::max<std::size_t>(size / kNodeBytes, 1), false);
    } else {
        ctx.set_elements(std::max<std::size_t>(size / kNodeBytes, 1));
        run_container<OMap<A>, kPrefault>(ctx, std::max<std::size_t>(size / kNodeBytes, 1), false);
    }
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    bool want_prefault = s.kind == lab::Kind::pool;
    if (want_prefault ? s.backing != physmem::Backing::thp : s.backing != physmem::Backing::page_4k)
        lab::usage_error(kSpec, "--variant: malloc-4k (std::allocator) or pool-thp (prefault_allocator) only");
    if (want_prefault) dispatch<physmem::prefault_allocator<Key>>(ctx, s.param("container"), s.size_bytes);
    else dispatch<std::allocator<Key>>(ctx, s.param("container"), s.size_bytes);
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
