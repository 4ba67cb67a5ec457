// src/pool/validate.cpp — see validate.hpp.
#include "validate.hpp"

#include <cstdio>
#include <stdexcept>

#include "core/parse.hpp"

namespace physmem {

namespace {

bool is_pow2(std::size_t x) noexcept { return x && !(x & (x - 1)); }

std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

std::optional<OptionProblem> check_block_size(const PoolOptions& o) {
    std::size_t b = o.block_size;
    if (is_pow2(b) && b >= (4u << 10) && b <= (std::size_t{1} << 30)) return std::nullopt;
    return OptionProblem{"block_size", nullptr, std::to_string(b), "not a power of two from 4 KiB to 1 GiB"};
}

// pre: block_size valid.
std::optional<OptionProblem> check_capacity(const PoolOptions& o) {
    std::size_t b = o.block_size, c = o.capacity;
    if (c < b)
        return OptionProblem{"capacity", "block_size", std::to_string(c),
                             "smaller than one block (block_size = " + format_size(b) + ")"};
    if (c / b + (c % b != 0) > kMaxRegionBlocks)
        return OptionProblem{"capacity", "block_size", std::to_string(c),
                             "more than 2^32 blocks of " + format_size(b) + " (at most " +
                                 format_size(max_region_bytes(b)) + " with this block_size)"};
    return std::nullopt;
}

std::optional<OptionProblem> check_max_capacity(const PoolOptions& o) {
    if (o.max_capacity == 0 || o.max_capacity >= o.capacity) return std::nullopt;
    return OptionProblem{"max_capacity", "capacity", std::to_string(o.max_capacity),
                         "smaller than capacity (" + format_size(o.capacity) + "); 0 means no cap"};
}

std::optional<OptionProblem> check_backing(const PoolOptions& o) {
    auto v = static_cast<unsigned>(o.backing);
    if (v <= static_cast<unsigned>(Backing::page_4k)) return std::nullopt;
    return OptionProblem{"backing", nullptr, std::to_string(v),
                         "not a Backing (best, page_1g, page_2m, thp or page_4k)"};
}

std::optional<OptionProblem> check_give_back_delay(const PoolOptions& o) {
    if (o.give_back_delay_ms <= kMaxGiveBackDelayMs) return std::nullopt;
    return OptionProblem{"give_back_delay_ms", nullptr, std::to_string(o.give_back_delay_ms),
                         "more than one day (" + std::to_string(kMaxGiveBackDelayMs) + " ms)"};
}

std::optional<OptionProblem> check_compact_threshold(const PoolOptions& o) {
    double t = o.compact_threshold;
    if (t >= 0 && t <= 1) return std::nullopt;  // false for NaN
    return OptionProblem{"compact_threshold", nullptr, number(t), "not a fraction from 0 to 1"};
}

std::optional<OptionProblem> check_domain(const PoolOptions& o) {
    if (o.domain > BlockTag::kDomainMask)
        return OptionProblem{"domain", nullptr, std::to_string(o.domain), "not a domain from 0 to 63"};
    if (o.domain != 0 && !o.tags)
        return OptionProblem{"domain", "tags", std::to_string(o.domain),
                             "needs tags = true (the checks read the domain from the block's tag)"};
    return std::nullopt;
}

std::optional<OptionProblem> check_protection_keys(const PoolOptions& o) {
    if (!o.protection_keys || o.domain != 0) return std::nullopt;
    return OptionProblem{"protection_keys", "domain", "true",
                         "needs a domain from 1 to 63 (domain 0 is everyone's and has no key)"};
}

}  // namespace

std::optional<OptionProblem> find_problem(const PoolOptions& o) {
    // In declaration order; each check may assume the ones before it passed.
    for (auto check : {check_block_size, check_capacity, check_max_capacity, check_backing,
                       check_give_back_delay, check_compact_threshold, check_domain, check_protection_keys})
        if (auto p = check(o)) return p;
    return std::nullopt;
}

std::string describe(const OptionProblem& p) {
    return std::string("PoolOptions::") + p.field + " = " + p.value + ": " + p.why;
}

void validate(const PoolOptions& o) {
    if (auto p = find_problem(o)) throw std::invalid_argument(describe(*p));
}

}  // namespace physmem
