// src/pool/validate.hpp — the accepted range of every PoolOptions field, checked in one
// place: BlockPool's constructor throws on the first field out of range, and the
// environment front-end (options.cpp) names the variable the field came from. The ranges
// are stated with PoolOptions (physmem/pool.hpp), the two limits that need a reason here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/give_back.hpp"
#include "physmem/pool.hpp"

namespace physmem {

// Blocks in one region, at most: Slab stores block indexes as std::uint32_t.
inline constexpr std::uint64_t kMaxRegionBlocks = std::uint64_t{1} << 32;
// give_back_delay_ms, at most: the core's one limit, shared with the malloc.
using core::kMaxGiveBackDelayMs;

// The largest region of `block_size` blocks, in bytes. pre: block_size valid.
constexpr std::size_t max_region_bytes(std::size_t block_size) noexcept {
    return static_cast<std::size_t>(kMaxRegionBlocks) * block_size;
}

// What is wrong with one field.
struct OptionProblem {
    const char* field;            // the PoolOptions member, e.g. "capacity"
    const char* other = nullptr;  // the member its range depends on, if any ("block_size")
    std::string value;            // its value as printed, e.g. "18446744073709551615"
    std::string why;              // what is wrong and what is accepted
};

// The first field of o out of its range (in declaration order), or nullopt.
std::optional<OptionProblem> find_problem(const PoolOptions& o);

// "PoolOptions::<field> = <value>: <why>".
std::string describe(const OptionProblem& p);

// Throws std::invalid_argument(describe(problem)) when o has a problem.
void validate(const PoolOptions& o);

}  // namespace physmem
