// SetAssoc against a plain reference LRU (a recency list per set), for set-associative,
// fully associative (hash-indexed) and non-power-of-two set counts, every way count up to 16
// (SmallSets: one and two fingerprint words, 16 ways filling the order word) and wider
// (WideSets: fingerprints up to 32 ways, 32 filling their mask; the filter; the scan).
#include <gtest/gtest.h>

#include <algorithm>
#include <list>
#include <random>
#include <string>
#include <vector>

#include "tlbsim/set_assoc.hpp"

namespace {

using physmem::tlbsim::SetAssoc;

struct ReferenceLru {
    unsigned sets, ways;
    std::vector<std::list<std::uint64_t>> lists;
    ReferenceLru(unsigned entries, unsigned w) : sets(entries / (w ? w : entries)), ways(w ? w : entries), lists(sets) {}
    bool access(std::uint64_t key) {
        auto& l = lists[(key & 0xFFFFFFFFu) % sets];
        auto it = std::find(l.begin(), l.end(), key);
        bool hit = it != l.end();
        if (hit) l.erase(it);
        else if (l.size() == ways) l.pop_back();
        l.push_front(key);
        return hit;
    }
};

TEST(SetAssoc, MatchesAReferenceLruHitForHit) {
    struct Case {
        unsigned entries, ways, keys;
    };
    for (Case c : {Case{64, 4, 100}, Case{96, 0, 150}, Case{1536, 12, 2500}, Case{48, 4, 70}, Case{72, 0, 73},
                   Case{1, 0, 3}, Case{3072, 24, 4000}, Case{16, 16, 40}, Case{32, 16, 60}, Case{9, 9, 20},
                   Case{2048, 16, 3000}, Case{24, 3, 40}, Case{30, 15, 45}, Case{17, 17, 25}, Case{4, 1, 9},
                   Case{8, 8, 12}, Case{256, 0, 400}, Case{64, 32, 100}, Case{33, 33, 50}, Case{960, 20, 1500},
                   Case{300, 0, 450}}) {
        SetAssoc a(c.entries, c.ways);
        ReferenceLru r(c.entries, c.ways);
        std::mt19937_64 rng(c.entries);
        unsigned hits = 0;
        for (int i = 0; i < 200000; ++i) {
            std::uint64_t key = rng() % c.keys + (std::uint64_t(rng() & 1) << 40);  // high bits: not the index
            bool want = r.access(key);
            ASSERT_EQ(a.access(key), want) << c.entries << "x" << c.ways << " at " << i;
            hits += want;
        }
        EXPECT_GT(hits, 0u);
    }
}

// A walk's pattern: a lookup that misses keeps its hint while other keys go through the same
// array (some in the same set and filter bucket, evicting and inserting), then inserts with it.
// A: SetAssoc or WideSets; `what` names the array in a failure.
template <class A>
void old_hints_match_the_reference(A& a, ReferenceLru& r, unsigned keys, const std::string& what) {
    std::mt19937_64 rng(keys);
    unsigned held = 0;
    for (int i = 0; i < 100000; ++i) {
        std::uint64_t key = rng() % keys;
        typename A::Hint h;
        if (a.lookup(key, h)) {
            ASSERT_TRUE(r.access(key)) << what << " at " << i;
            continue;
        }
        for (int k = int(rng() % 3); k > 0; --k) {  // others meanwhile, never `key`
            std::uint64_t other = rng() % keys;
            if (other == key) continue;
            ASSERT_EQ(a.access(other), r.access(other)) << what << " at " << i;
        }
        ASSERT_FALSE(r.access(key)) << what << " at " << i;
        a.insert(key, h);
        ++held;
    }
    EXPECT_GT(held, 0u) << what;
}

TEST(SetAssoc, AnInsertWithAnOldHintMatchesTheReference) {
    struct Case {
        unsigned entries, ways, keys;
    };
    for (Case c : {Case{3072, 24, 4000}, Case{72, 0, 90}, Case{64, 0, 80}, Case{1536, 12, 2500}, Case{64, 4, 100},
                   Case{17, 17, 25}}) {
        SetAssoc a(c.entries, c.ways);
        ReferenceLru r(c.entries, c.ways);
        old_hints_match_the_reference(a, r, c.keys, std::to_string(c.entries) + "x" + std::to_string(c.ways));
    }
}

TEST(SetAssoc, FlushEmptiesAndLookupDoesNotInsert) {
    SetAssoc a(8, 0);
    EXPECT_FALSE(a.lookup(5));
    EXPECT_FALSE(a.lookup(5));
    a.insert(5);
    EXPECT_TRUE(a.lookup(5));
    a.flush();
    EXPECT_FALSE(a.lookup(5));
}

// WideSets' own hint (set and fingerprint or filter bucket) kept across other keys' traffic,
// as the compiled paths keep it across a walk (SetAssoc's wide lookup ignores its hint).
TEST(WideSets, AnInsertWithAnOldHintMatchesTheReference) {
    using physmem::tlbsim::WideSets;
    struct Case {
        unsigned sets, ways, keys;
    };
    for (Case c : {Case{128, 24, 4000}, Case{2, 32, 90}, Case{1, 72, 90}, Case{1, 300, 400}}) {
        WideSets a(c.sets, c.ways);
        ReferenceLru r(c.sets * c.ways, c.ways);
        old_hints_match_the_reference(a, r, c.keys, std::to_string(c.sets) + " sets x" + std::to_string(c.ways));
    }
}

}  // namespace
