// tests/test_checked_paged_array.cpp — PagedArray in checked mode (issue 24, item 3): each
// violation caught under the throwing policy (bounds through every access path, iterators
// past the end, into a destroyed or moved-from array, default-constructed; another
// domain) and, once, under the fatal policy in a child with the report naming the array;
// the ordinary work (scans, updates, a sort at a budget of two leaves, the segment
// algorithms, two reader threads) raises nothing and gives the unchecked array's results.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "physmem/checked_paged_array.hpp"
#include "physmem/domain.hpp"
#include "support.hpp"
#include "violation.hpp"

using namespace physmem;

namespace {

constexpr std::size_t kBlock = 4096;  // 512 uint64 a leaf
constexpr std::size_t kN = 9 * 512 + 100;
using u64 = std::uint64_t;
using Checked = CheckedPagedArray<u64>;

static_assert(std::random_access_iterator<Checked::iterator>);
static_assert(std::random_access_iterator<Checked::const_iterator>);
static_assert(std::sortable<Checked::iterator>);

PagingOptions two_leaves() { return {.budget = 2 * kBlock, .readahead = 0, .direct = false}; }

using physmem_test::caught;

struct Fixture : ::testing::Test {
    BlockPool pool{physmem_test::pool_options(kBlock, 4 << 20)};
    Checked a{kN, pool, two_leaves(), Policy::throw_error, "weights"};
    void SetUp() override {
        for (std::size_t i = 0; i < kN; ++i) a.set(i, i);
    }
};
using CheckedPaged = Fixture;

TEST_F(CheckedPaged, EveryAccessPathChecksBounds) {
    EXPECT_EQ(caught([&] { (void)a[kN]; }), Violation::bounds);
    EXPECT_EQ(caught([&] { (void)std::as_const(a)[kN + 512]; }), Violation::bounds);
    EXPECT_EQ(caught([&] { (void)a.at(~std::size_t{0}); }), Violation::bounds);
    EXPECT_EQ(caught([&] { (void)a.get(kN); }), Violation::bounds);
    EXPECT_EQ(caught([&] { a.set(kN, 1); }), Violation::bounds);
    std::vector<std::size_t> batch{1, 2, kN};
    EXPECT_EQ(caught([&] { a.prefetch(batch); }), Violation::bounds);
    EXPECT_EQ(caught([&] { for_each_segment(a, 10, kN + 1, [](auto) {}); }), Violation::bounds);
    EXPECT_EQ(caught([&] { for_each_segment(a, 20, 10, [](auto) {}); }), Violation::bounds);
    EXPECT_EQ(a.get(kN - 1), kN - 1);  // nothing written by the attempts
}

TEST_F(CheckedPaged, IteratorsOutsideTheArrayAreCaught) {
    EXPECT_EQ(caught([&] { (void)*a.end(); }), Violation::bounds);
    EXPECT_EQ(caught([&] { (void)*(a.cbegin() - 1); }), Violation::bounds);
    EXPECT_EQ(caught([&] { (void)a.begin()[kN]; }), Violation::bounds);
    auto it = a.begin();
    EXPECT_EQ(caught([&] {
                  for (std::size_t i = 0; i <= kN; ++i) (void)u64(*it++);
              }),
              Violation::bounds);
}

TEST_F(CheckedPaged, IteratorsIntoADestroyedArrayAreCaught) {
    Checked::iterator it;
    Checked::const_iterator cit;
    {
        Checked gone(kN, pool, two_leaves(), Policy::throw_error, "gone");
        it = gone.begin() + 3;
        cit = gone.cbegin() + 2000;
        EXPECT_EQ(u64(*it), 0u);
    }
    EXPECT_EQ(caught([&] { (void)u64(*it); }), Violation::stale);
    EXPECT_EQ(caught([&] { (void)*cit; }), Violation::stale);
    EXPECT_EQ(caught([&] { (void)iter_move(it); }), Violation::stale);
    // A new array that reuses the identity word does not revive them.
    Checked next(16, pool, two_leaves(), Policy::throw_error, "next");
    EXPECT_EQ(caught([&] { (void)*cit; }), Violation::stale);
}

TEST_F(CheckedPaged, IteratorsIntoAMovedFromArrayAreCaughtTheMovedArrayWorks) {
    auto it = a.begin() + 700;
    auto cit = a.cbegin() + 5;
    Checked b = std::move(a);
    EXPECT_EQ(caught([&] { (void)u64(*it); }), Violation::stale);
    EXPECT_EQ(caught([&] { (void)*cit; }), Violation::stale);
    EXPECT_EQ(a.size(), 0u);
    EXPECT_EQ(caught([&] { (void)a.get(0); }), Violation::bounds);
    EXPECT_EQ(b.get(700), 700u);
    EXPECT_EQ(*(b.cbegin() + 5), 5u);
    Checked c(10, pool, two_leaves(), Policy::throw_error, "c");
    auto old = c.cbegin();
    c = std::move(b);  // c's own iterators: caught; b's data in c
    EXPECT_EQ(caught([&] { (void)*old; }), Violation::stale);
    EXPECT_EQ(c.size(), kN);
    EXPECT_EQ(*(c.cend() - 1), kN - 1);
    // The moved-from arrays: empty, nothing to visit, every access reported.
    for (Checked* gone : {&a, &b}) {
        std::size_t visits = 0;
        for_each_segment(*gone, [&](auto s) { visits += s.size(); });
        for_each_strided(std::as_const(*gone), 0, 1, [&](u64) { ++visits; });
        EXPECT_EQ(visits, 0u);
        EXPECT_EQ(caught([&] { (void)(*gone)[0]; }), Violation::bounds);
    }
}

TEST_F(CheckedPaged, AMoveCarriesTheNameAndDomainAndLeavesDomainZero) {
    a.set_domain(7);
    Checked b = std::move(a);
    EXPECT_EQ(b.name(), "weights");
    EXPECT_EQ(b.domain(), 7u);
    EXPECT_EQ(a.domain(), 0u);
    EXPECT_EQ(caught([&] { (void)b.get(1); }), Violation::domain);
    DomainScope scope(7);
    EXPECT_EQ(b.get(1), 1u);
}

TEST_F(CheckedPaged, AnotherDomainIsRefusedUntilTheThreadHoldsIt) {
    auto it = a.cbegin() + 9;
    a.set_domain(9);
    EXPECT_EQ(caught([&] { (void)a.get(1); }), Violation::domain);
    EXPECT_EQ(caught([&] { (void)*it; }), Violation::domain);
    EXPECT_EQ(caught([&] { for_each_segment(std::as_const(a), [](auto) {}); }), Violation::domain);
    {
        DomainScope scope(9);
        EXPECT_EQ(a.get(1), 1u);
        EXPECT_EQ(*it, 9u);  // the iterator made before set_domain: same array, now allowed
    }
    EXPECT_EQ(caught([&] { a[3] = 1; }), Violation::domain);
    EXPECT_THROW(a.set_domain(64), std::invalid_argument);
    a.set_domain(0);
    EXPECT_EQ(a.get(3), 3u);
}

TEST_F(CheckedPaged, OrdinaryWorkRaisesNothingAndMatchesTheUncheckedArray) {
    std::mt19937_64 rng(5);
    std::vector<u64> want(kN);
    for (std::size_t i = 0; i < kN; ++i) a.set(i, want[i] = rng() % 1000);
    EXPECT_EQ(std::accumulate(a.cbegin(), a.cend(), u64{0}), std::accumulate(want.begin(), want.end(), u64{0}));
    std::sort(a.begin(), a.end());  // two leaves of budget: every access may evict
    std::sort(want.begin(), want.end());
    EXPECT_TRUE(std::equal(a.cbegin(), a.cend(), want.begin()));
    std::ranges::reverse(a);
    std::reverse(want.begin(), want.end());
    u64 sum = 0, strided = 0;
    for_each_segment(std::as_const(a), [&](std::span<const u64> s) { sum += std::accumulate(s.begin(), s.end(), u64{0}); });
    for_each_strided(std::as_const(a), 3, 512, [&](u64 v) { strided += v; });
    u64 want_strided = 0;
    for (std::size_t i = 3; i < kN; i += 512) want_strided += want[i];
    EXPECT_EQ(sum, std::accumulate(want.begin(), want.end(), u64{0}));
    EXPECT_EQ(strided, want_strided);
    for (std::size_t i = 0; i < kN; i += 97) EXPECT_EQ(a.at(i), want[i]);
    std::vector<std::size_t> batch;
    for (std::size_t i = 0; i < kN; i += 300) batch.push_back(i);
    a.prefetch(batch);
    for (std::size_t i : batch) EXPECT_EQ(a.get(i), want[i]);
}

TEST_F(CheckedPaged, ReaderThreadsRaiseNothing) {
    std::vector<std::thread> readers;
    std::vector<u64> sums(2);
    for (int t = 0; t < 2; ++t)
        readers.emplace_back([&, t] {
            for (std::size_t i = 0; i < kN; ++i) sums[t] += a.get(i);
        });
    for (auto& r : readers) r.join();
    EXPECT_EQ(sums[0], u64{kN} * (kN - 1) / 2);
    EXPECT_EQ(sums[1], sums[0]);
}

TEST(CheckedPagedDeathTest, FatalPolicyReportsTheArrayTheAccessAndTheIndex) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            BlockPool pool(physmem_test::pool_options(kBlock, 4 << 20));
            Checked a(100, pool, two_leaves(), Policy::fatal, "ledger");
            (void)a.get(100);
        },
        "physmem: fatal: checked array ledger .*out of bounds.*get at index 100 \\(size 100\\)");
    EXPECT_DEATH(
        {
            Checked::const_iterator none;  // no array, so no policy but the default: fatal
            (void)*none;
        },
        "physmem: fatal: checked array iterator .*stale.*iterator \\*");
}

}  // namespace
