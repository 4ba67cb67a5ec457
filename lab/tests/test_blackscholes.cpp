// Black-Scholes kernel: the hand-written math against libm, prices against a double
// reference of the formula, span kernels over arrays and tree leaves against the scalar
// formula, and the checks catching a wrong price.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/blackscholes.hpp"
#include "physmem/segments.hpp"
#include "physmem/tree_array.hpp"

namespace {

using namespace lab::blackscholes;

TEST(BlackScholesMath, ApproximationsMatchLibm) {
    for (float x = -80.0f; x < 80.0f; x += 0.37f)
        EXPECT_NEAR(exp_approx(x), std::exp(x), 4e-7f * std::exp(x)) << x;
    for (float x = 1e-3f; x < 1e4f; x *= 1.07f) {
        EXPECT_NEAR(log_approx(x), std::log(x), 3e-7f * std::max(1.0f, std::fabs(std::log(x)))) << x;
        EXPECT_NEAR(sqrt_approx(x), std::sqrt(x), 3e-7f * std::sqrt(x)) << x;
    }
    for (float x = -8.0f; x < 8.0f; x += 0.013f)
        EXPECT_NEAR(cndf(x), 0.5 * std::erfc(-x / std::sqrt(2.0)), 3e-7) << x;  // A&S 7.5e-8 + float rounding
}

// The formula in double with libm: the float kernel must agree to float accuracy.
double price_double(const Option& o, int type) {
    double s = o.spot, k = o.strike, r = o.rate, v = o.volatility, t = o.time;
    double d1 = (std::log(s / k) + (r + v * v / 2) * t) / (v * std::sqrt(t)), d2 = d1 - v * std::sqrt(t);
    auto n = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
    return type ? k * std::exp(-r * t) * n(-d2) - s * n(-d1) : s * n(d1) - k * std::exp(-r * t) * n(d2);
}

TEST(BlackScholesFormula, PricesMatchDoubleReferenceAndParity) {
    for (std::size_t i = 0; i < 5000; ++i) {
        Option o = make_option(9, i);
        for (int type : {0, 1}) {
            float got = price(o.spot, o.strike, o.rate, o.volatility, o.time, type);
            EXPECT_NEAR(got, price_double(o, type), 2e-5 * (o.spot + o.strike)) << i;
        }
        EXPECT_TRUE(parity_holds(o)) << i;
    }
    // A textbook value: S = K = 100, r = 5 %, v = 20 %, T = 1: call 10.4506, put 5.5735.
    EXPECT_NEAR(price(100, 100, 0.05f, 0.2f, 1, 0), 10.4506f, 2e-3f);
    EXPECT_NEAR(price(100, 100, 0.05f, 0.2f, 1, 1), 5.5735f, 2e-3f);
}

TEST(BlackScholesFormula, InputsAreDeterministicAndInRange) {
    for (std::size_t i = 0; i < 1000; ++i) {
        Option a = make_option(3, i), b = make_option(3, i);
        EXPECT_EQ(a.spot, b.spot);
        EXPECT_GE(a.spot, 10.0f);
        EXPECT_LE(a.spot, 200.0f);
        EXPECT_GT(a.volatility, 0.0f);
        EXPECT_GT(a.time, 0.0f);
        EXPECT_TRUE(a.type == 0 || a.type == 1);
    }
    EXPECT_NE(make_option(3, 0).spot, make_option(4, 0).spot);
}

// SoA over spans and over tree leaves (several block sizes), AoS over both: every output
// equals the scalar formula's within the experiment's tolerance.
TEST(BlackScholesKernels, SpansAndTreeLeavesAgreeWithScalar) {
    const std::size_t n = 10000;
    std::vector<float> want(n);
    std::vector<Option> opts(n);
    for (std::size_t i = 0; i < n; ++i) {
        opts[i] = make_option(5, i);
        want[i] = price(opts[i].spot, opts[i].strike, opts[i].rate, opts[i].volatility, opts[i].time, opts[i].type);
    }
    // contiguous SoA
    std::vector<float> sp(n), st(n), ra(n), vo(n), ti(n), out(n);
    std::vector<std::int32_t> ty(n);
    for (std::size_t i = 0; i < n; ++i)
        sp[i] = opts[i].spot, st[i] = opts[i].strike, ra[i] = opts[i].rate, vo[i] = opts[i].volatility,
        ti[i] = opts[i].time, ty[i] = opts[i].type;
    price_soa({sp, st, ra, vo, ti, ty, out});
    for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(close(out[i], want[i], st[i])) << i;
    // contiguous AoS
    std::vector<Option> aos = opts;
    price_aos(aos);
    for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(close(aos[i].price, want[i], st[i])) << i;
    // trees: leaf k of each column together, and AoS per leaf
    for (std::size_t block : {std::size_t{4096}, std::size_t{16384}}) {
        physmem::BlockPool pool({.block_size = block, .capacity = 8 << 20, .backing = physmem::Backing::page_4k});
        physmem::TreeArray<float> tsp(n, pool), tst(n, pool), tra(n, pool), tvo(n, pool), tti(n, pool), tout(n, pool);
        physmem::TreeArray<std::int32_t> tty(n, pool);
        for (std::size_t i = 0; i < n; ++i)
            tsp[i] = sp[i], tst[i] = st[i], tra[i] = ra[i], tvo[i] = vo[i], tti[i] = ti[i], tty[i] = ty[i];
        for (std::size_t k = 0; k < tout.leaf_count(); ++k)
            price_soa({tsp.segment(k), tst.segment(k), tra.segment(k), tvo.segment(k), tti.segment(k), tty.segment(k),
                       tout.segment(k)});
        for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(close(tout[i], want[i], st[i])) << block << " " << i;
        physmem::TreeArray<Option> taos(n, pool);
        for (std::size_t i = 0; i < n; ++i) taos[i] = opts[i];
        physmem::for_each_segment(taos, [](std::span<Option> s) { price_aos(s); });
        for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(close(taos[i].price, want[i], st[i])) << block << " " << i;
    }
}

TEST(BlackScholesChecks, DetectWrongPrices) {
    Option o{100, 100, 0.05f, 0.2f, 1, 0, 0};  // call worth 10.45
    float p = price(o.spot, o.strike, o.rate, o.volatility, o.time, o.type);
    EXPECT_TRUE(close(p, p, o.strike));
    EXPECT_FALSE(close(p * 1.001f, p, o.strike));  // 0.1 % off
    EXPECT_FALSE(close(p + 0.01f * o.strike, p, o.strike));
    float other = price(o.spot, o.strike, o.rate, o.volatility, o.time, 1 - o.type);  // call for put
    EXPECT_FALSE(close(other, p, o.strike));
    // A price computed from a swapped input (a wrong element in a leaf) is caught.
    float swapped = price(o.spot, o.strike, o.rate, o.time, o.volatility, o.type);
    EXPECT_FALSE(close(swapped, p, o.strike));
}

}  // namespace
