// tests/test_backing_ladder.cpp — the one backing ladder (core/backing.hpp) as the pool and
// the malloc walk it: first_rung then next_rung down to 4k. The one difference between
// them, which hugetlb pages `best` may take, is the BestHugetlb argument.
#include <gtest/gtest.h>

#include <vector>

#include "core/backing.hpp"

namespace {

using physmem::Backing;
using physmem::core::BestHugetlb;

// The rungs a request tries, in order, as both front-ends walk them.
std::vector<Backing> walk(Backing requested, BestHugetlb policy, bool reserved) {
    std::vector<Backing> out;
    for (Backing r = physmem::core::first_rung(requested, policy, reserved);; r = physmem::next_rung(r)) {
        out.push_back(r);
        if (r == Backing::page_4k) return out;
    }
}

const std::vector<Backing> kFromTop = {Backing::page_1g, Backing::page_2m, Backing::thp, Backing::page_4k};

TEST(BackingLadder, PoolBestStartsAtTheTop) {
    EXPECT_EQ(walk(Backing::best, BestHugetlb::any_free, false), kFromTop);
    EXPECT_EQ(physmem::core::first_rung(Backing::best), Backing::page_1g);  // the default: the pool's
}

TEST(BackingLadder, MallocBestTakesHugetlbOnlyWhenItReserved) {
    EXPECT_EQ(walk(Backing::best, BestHugetlb::only_reserved, false),
              (std::vector<Backing>{Backing::thp, Backing::page_4k}));
    EXPECT_EQ(walk(Backing::best, BestHugetlb::only_reserved, true), kFromTop);
}

TEST(BackingLadder, AnExplicitRungIsTheSameForBoth) {
    for (Backing b : {Backing::page_1g, Backing::page_2m, Backing::thp, Backing::page_4k})
        for (bool reserved : {false, true}) {
            auto pool = walk(b, BestHugetlb::any_free, reserved);
            EXPECT_EQ(pool, walk(b, BestHugetlb::only_reserved, reserved));
            EXPECT_EQ(pool.front(), b);
            EXPECT_EQ(pool.back(), Backing::page_4k);
        }
    EXPECT_EQ(walk(Backing::page_2m, BestHugetlb::only_reserved, false),
              (std::vector<Backing>{Backing::page_2m, Backing::thp, Backing::page_4k}));
}

}  // namespace
