// lab/kernels/blackscholes.hpp — European option prices by the Black-Scholes formula,
// as PARSEC's blackscholes computes them (the seed paper's Fig. 5, the blog's test).
//
//   d1 = (ln(S/K) + (r + v^2/2) T) / (v sqrt(T)),   d2 = d1 - v sqrt(T)
//   call = S N(d1) - K e^(-rT) N(d2),                put = K e^(-rT) (1 - N(d2)) - S (1 - N(d1))
//
// N() is the cumulative normal distribution by the polynomial approximation of
// Abramowitz & Stegun 26.2.17 (what PARSEC uses). Everything is float.
//
// exp, log and sqrt are written here from plain arithmetic (range reduction plus a short
// polynomial, Newton steps for sqrt): with the lab's flags (-O3 -march=native, errno
// semantics kept) GCC vectorizes no loop that calls the libm functions, and this kernel
// must vectorize over a span. They are accurate to a few float ulps over the inputs used
// here (see the tests); the reference uses the same functions.
//
// One scalar function prices one option; the span kernels are plain loops over it, used
// unchanged by the contiguous array and by each tree leaf (for_each_segment).
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

namespace lab::blackscholes {

// One option, array-of-structs layout: 5 float inputs, the type, the output (28 bytes).
struct Option {
    float spot, strike, rate, volatility, time;
    std::int32_t type;  // 0 call, 1 put
    float price;
};
static_assert(sizeof(Option) == 28);
inline constexpr std::size_t kBytesPerOption = 28;

// The formula's functions are inlined always: a loop over price() vectorizes only with
// price() inlined into it, which g++ 12 (-O3 -march=native) does not always do. It left
// price() a call in the structure-of-arrays kernel once that kernel was compiled out of
// line in the lab's experiment (whose translation unit calls price() from many places),
// and the loop ran scalar, one call an option: ~15x slower on a CPU of the lab's (the
// commit that made this change gives the figures).
// ---- float math without libm ----------------------------------------------------------

// e^x for x in [-87, 88] (clamped outside): x = n ln2 + r, |r| <= ln2/2, degree-7 Taylor.
[[gnu::always_inline]] inline float exp_approx(float x) noexcept {
    x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
    constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer (to even)
    float n = (x * 1.44269504088896341f + kRound) - kRound;
    float r = x - n * 0.693145751953125f - n * 1.428606765330187e-06f;  // ln2 in two parts
    float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720 + r * (1.0f / 5040)))))));
    return p * std::bit_cast<float>((static_cast<std::int32_t>(n) + 127) << 23);
}

// ln x for normal positive x: x = m 2^e with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s),
// s = (m - 1)/(m + 1), odd series to s^11. pre: x > 0, finite, normal.
[[gnu::always_inline]] inline float log_approx(float x) noexcept {
    std::int32_t bits = std::bit_cast<std::int32_t>(x);
    std::int32_t e = ((bits >> 23) & 0xff) - 127;
    float m = std::bit_cast<float>((bits & 0x007fffff) | 0x3f800000);  // [1, 2)
    bool high = m > 1.41421356f;
    m = high ? m * 0.5f : m;
    e += high;
    float s = (m - 1.0f) / (m + 1.0f), s2 = s * s;
    float series = s * (2.0f + s2 * (2.0f / 3 + s2 * (2.0f / 5 + s2 * (2.0f / 7 + s2 * (2.0f / 9 + s2 * (2.0f / 11))))));
    return series + static_cast<float>(e) * 0.693147180559945309f;
}

// sqrt x for normal positive x: reciprocal square root by the bit estimate and three
// Newton steps, then x * rsqrt(x). pre: x > 0, finite, normal.
[[gnu::always_inline]] inline float sqrt_approx(float x) noexcept {
    float y = std::bit_cast<float>(0x5f3759df - (std::bit_cast<std::int32_t>(x) >> 1));
    for (int i = 0; i < 3; ++i) y = y * (1.5f - 0.5f * x * y * y);
    return x * y;
}

// ---- the formula ------------------------------------------------------------------------

// Cumulative normal distribution N(x), Abramowitz & Stegun 26.2.17 (|error| < 7.5e-8).
[[gnu::always_inline]] inline float cndf(float x) noexcept {
    float ax = x < 0 ? -x : x;
    float k = 1.0f / (1.0f + 0.2316419f * ax);
    float poly = k * (0.319381530f + k * (-0.356563782f + k * (1.781477937f + k * (-1.821255978f + k * 1.330274429f))));
    float n = 1.0f - 0.398942280401432678f * exp_approx(-0.5f * ax * ax) * poly;
    return x < 0 ? 1.0f - n : n;
}

// The price of one option. pre: spot, strike, volatility, time > 0 (normal floats).
[[gnu::always_inline]] inline float price(float spot, float strike, float rate, float vol, float time, std::int32_t type) noexcept {
    float vt = vol * sqrt_approx(time);
    float d1 = (log_approx(spot / strike) + (rate + 0.5f * vol * vol) * time) / vt;
    float d2 = d1 - vt;
    float discounted = strike * exp_approx(-rate * time);
    float n1 = cndf(d1), n2 = cndf(d2);
    float call = spot * n1 - discounted * n2;
    float put = discounted * (1.0f - n2) - spot * (1.0f - n1);
    return type ? put : call;
}

// ---- span kernels (one loop each, used by arrays and by tree leaves alike) -------------

// Structure of arrays: seven spans of equal length n.
struct SoaSpans {
    std::span<const float> spot, strike, rate, volatility, time;
    std::span<const std::int32_t> type;
    std::span<float> price;
};

// Prices every option of the spans once. pre: all spans have price.size() elements and
// price does not overlap the inputs.
inline void price_soa(const SoaSpans& s) noexcept {
    const float* __restrict sp = s.spot.data();
    const float* __restrict st = s.strike.data();
    const float* __restrict ra = s.rate.data();
    const float* __restrict vo = s.volatility.data();
    const float* __restrict ti = s.time.data();
    const std::int32_t* __restrict ty = s.type.data();
    float* __restrict out = s.price.data();
    for (std::size_t i = 0, n = s.price.size(); i < n; ++i) out[i] = price(sp[i], st[i], ra[i], vo[i], ti[i], ty[i]);
}

// Array of structs: prices every option of the span once (writes Option::price).
inline void price_aos(std::span<Option> opts) noexcept {
    for (Option& o : opts) o.price = price(o.spot, o.strike, o.rate, o.volatility, o.time, o.type);
}

// ---- inputs ------------------------------------------------------------------------------

// splitmix64, the seeded generator.
constexpr std::uint64_t splitmix64(std::uint64_t& state) noexcept {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Option i of the input set seeded with `seed` (a pure function of both), in ranges like
// PARSEC's inputs: spot 10..200, strike 0.5..1.5 x spot, rate 1..10 %, volatility
// 5..65 %, time 0.05..2 years, calls and puts equally likely. price = 0.
inline Option make_option(std::uint64_t seed, std::size_t i) noexcept {
    std::uint64_t state = seed ^ (0xA0761D6478BD642Full * (i + 1));
    auto unit = [&state] { return static_cast<float>(splitmix64(state) >> 40) * (1.0f / 16777216.0f); };  // [0, 1)
    Option o{};
    o.spot = 10.0f + 190.0f * unit();
    o.strike = o.spot * (0.5f + unit());
    o.rate = 0.01f + 0.09f * unit();
    o.volatility = 0.05f + 0.60f * unit();
    o.time = 0.05f + 1.95f * unit();
    o.type = static_cast<std::int32_t>(splitmix64(state) & 1);
    return o;
}

// ---- checks ------------------------------------------------------------------------------

// Agreement of a computed price with the reference: |got - want| <= 1e-5 max(|want|, 1e-3 strike).
// Not bit-exact: the vectorized loop and the scalar reference may contract a*b+c into
// FMAs differently (-ffp-contract=fast), which moves results by an ulp or so.
inline bool close(float got, float want, float strike) noexcept {
    float scale = std::fabs(want) > 1e-3f * strike ? std::fabs(want) : 1e-3f * strike;
    return std::fabs(got - want) <= 1e-5f * scale;
}

// Put-call parity for one option's inputs: C - P = S - K e^(-rT), within float rounding
// of prices of size S and K. Uses the scalar formula.
inline bool parity_holds(const Option& o) noexcept {
    float c = price(o.spot, o.strike, o.rate, o.volatility, o.time, 0);
    float p = price(o.spot, o.strike, o.rate, o.volatility, o.time, 1);
    float want = o.spot - o.strike * std::exp(-o.rate * o.time);  // libm here: independent of exp_approx
    return std::fabs((c - p) - want) <= 1e-5f * (o.spot + o.strike);
}

}  // namespace lab::blackscholes
