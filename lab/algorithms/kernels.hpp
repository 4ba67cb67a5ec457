// lab/algorithms/kernels.hpp — the algorithms suite's kernels (issue 22): the loops and
// algorithms people write over an array, on one container, checked against std::vector.
//
// kernels.cpp is compiled once per build (-O2, -O3: lab/cmake/algorithms.cmake) into its
// own program, so the code measured — the kernels and every template they instantiate
// (iterators, std::sort's internals) — is that build's alone. Nothing here names a
// container type: the program (main.cpp, the lab's flags) only hands over memory.
//
// A Workload owns the measured containers: a and b (two arrays of the same kind, for the
// algorithms over two ranges) and side (a plain contiguous array beside them: copies to
// and from a vector), plus reference std::vectors that every kernel's result is checked
// against. Every array starts as init(i) (checked() restores what an earlier kernel
// changed, on both sides, before comparing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "physmem/pool.hpp"

namespace lab::algorithms {

using Word = std::uint64_t;

enum class Container { vector, tree, paged };

// Where the measured data lives. vector: a and b are the arrays' memory (n words each);
// tree, paged: their blocks come from pool (paged: each array's budget = budget bytes,
// its file in dir, "" = the default). side: n words beside every container.
struct Setup {
    Container container = Container::vector;
    std::size_t n = 0;
    std::size_t work = 0;  // elements sorted and random updates per pass (sorted: min(work, n))
    std::span<Word> a, b, side;
    physmem::BlockPool* pool = nullptr;
    std::size_t budget = 0;
    std::string dir;
    std::string corrupt;  // a test hook: this kernel's checked result is altered, so its check fails
};

// One kernel: its name (the record's phase), the goal group it belongs to (loop, index,
// random, sort, segmented), what it does in words, ops per pass, and whether each pass
// consumes its input (then reset() runs, untimed, before every pass).
struct Kernel {
    std::string name, group, what;
    std::uint64_t ops = 0;
    bool resets = false;
};

class Workload {
  public:
    virtual ~Workload() = default;
    virtual const std::vector<Kernel>& kernels() const = 0;
    // One pass of kernel k over the measured containers; returns its result (a sum, an
    // index, a count; 0 for kernels that only write).
    virtual Word run(std::size_t k) = 0;
    // Puts back what kernel k's pass consumes (the sorted prefix). Untimed.
    virtual void reset(std::size_t k) = 0;
    // One pass of kernel k on the containers and on the reference vectors, both from
    // init: "" when the results and every array the kernel writes agree, else what
    // differed. Leaves the containers as that pass left them (a warm start). The vector
    // container is the reference itself: its pass only, "".
    virtual std::string check(std::size_t k) = 0;
    // The containers' tree depth and leaf length (0, 0 for the vector).
    virtual unsigned depth() const = 0;
    virtual std::size_t leaf_length() const = 0;
};

// pre: s.a, s.b (vector) or s.pool (tree, paged) and s.side hold n words each.
std::unique_ptr<Workload> make(const Setup& s);

// The flags this build's kernels were compiled with (e.g. "-O2").
const char* build_flags() noexcept;

}  // namespace lab::algorithms
