// lab/kernels/hashtable.hpp — a deepsjeng-like transposition table probed at random.
//
// The table is an array of 64-byte buckets (one cache line) of 4 entries {key, data}, as
// chess engines lay out their transposition tables; key 0 marks an empty entry. Probe i
// looks up a pseudo-random 64-bit key drawn from a universe of twice the table's
// entries (so keys come back and some probes hit): it hashes the key to a bucket, reads
// the bucket and compares the 4 keys. A hit reads the entry's data; a miss stores the
// key over the entry of least "depth" (data's low byte; an empty entry has depth 0),
// a replacement when that entry was in use.
//
// Look-ahead as an engine does it: the bucket of probe i + kAhead is prefetched (found
// by the walk, for a tree) before probe i. The same code runs on every variant; the
// reference is a plain loop over a contiguous vector.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "kernels/random.hpp"
#include "physmem/segments.hpp"

namespace lab::hashtable {

struct Entry {
    std::uint64_t key = 0;   // 0: empty
    std::uint64_t data = 0;  // low byte: depth (replacement priority)
};
inline constexpr unsigned kWays = 4;
struct alignas(64) Bucket {
    Entry way[kWays];
};
static_assert(sizeof(Bucket) == 64);
inline constexpr std::uint64_t kAhead = 16;  // probes of prefetch look-ahead

// What a pass did. sum: of the data read on hits (wraps).
struct Stats {
    std::uint64_t hits = 0, misses = 0, replaced = 0, sum = 0;
    bool operator==(const Stats&) const = default;
};

// The probe sequence: seeded, over a universe of keys. pre: universe > 0.
struct Stream {
    std::uint64_t seed = 0;
    std::uint64_t universe = 1;
    // Key of probe i: one of `universe` nonzero keys, picked at random.
    std::uint64_t key(std::uint64_t i) const noexcept {
        return rnd::mix(rnd::below(rnd::mix(seed + i), universe) ^ (seed << 32)) | 1;
    }
};

// Bucket of a key among nb (the key's high bits, any nb > 0).
constexpr std::uint64_t bucket_of(std::uint64_t key, std::uint64_t nb) noexcept { return rnd::below(key, nb); }

// One probe of `key` in bucket b, counted in st. pre: key != 0.
inline void probe(Bucket& b, std::uint64_t key, Stats& st) noexcept {
    unsigned victim = 0;
    for (unsigned w = 0; w < kWays; ++w) {
        if (b.way[w].key == key) {
            ++st.hits;
            st.sum += b.way[w].data;
            return;
        }
        if ((b.way[w].data & 0xff) < (b.way[victim].data & 0xff)) victim = w;
    }
    ++st.misses;
    st.replaced += b.way[victim].key != 0;
    b.way[victim] = {key, (rnd::mix(key) & ~std::uint64_t{0xff}) | (key >> 56)};
}

// A copy of a cheap view (span, FixedDepthView) the compiler keeps in registers; a
// TreeArray is used in place (copying it is deep).
template <class Table>
decltype(auto) local_view(Table& t) noexcept {
    if constexpr (std::is_trivially_copyable_v<Table>) return Table(static_cast<const Table&>(t));
    else return (t);
}

// The measured kernel: probes 0 .. probes-1 of s on t (t.size() buckets, > 0), each
// bucket prefetched kAhead probes early.
template <class Table>
Stats probe_pass(Table& table, const Stream& s, std::uint64_t probes) noexcept {
    decltype(auto) t = local_view(table);
    const std::uint64_t nb = t.size();
    Stats st;
    for (std::uint64_t i = 0; i < probes; ++i) {
        if (i + kAhead < probes) __builtin_prefetch(&t[bucket_of(s.key(i + kAhead), nb)], 1);
        std::uint64_t key = s.key(i);
        probe(t[bucket_of(key, nb)], key, st);
    }
    return st;
}

// The reference: the same probes, in order, on a contiguous table, no look-ahead.
inline Stats reference_pass(std::span<Bucket> t, const Stream& s, std::uint64_t probes) noexcept {
    Stats st;
    for (std::uint64_t i = 0; i < probes; ++i) {
        std::uint64_t key = s.key(i);
        probe(t[bucket_of(key, t.size())], key, st);
    }
    return st;
}

// Every entry emptied.
template <class Table>
void clear(Table& t) {
    physmem::for_each_segment(t, [](std::span<Bucket> s) {
        for (Bucket& b : s) b = Bucket{};
    });
}

// A position-sensitive checksum of the whole table (wraps).
template <class Table>
std::uint64_t checksum(Table& t) {
    std::uint64_t i = 0, sum = 0;
    physmem::for_each_segment(t, [&](std::span<Bucket> s) {
        for (const Bucket& b : s)
            for (const Entry& e : b.way) sum += rnd::mix(e.key + i++) ^ e.data;
    });
    return sum;
}

}  // namespace lab::hashtable
