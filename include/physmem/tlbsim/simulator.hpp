// physmem/tlbsim/simulator.hpp — a TLB, page-walk and (optional) data-cache simulator.
//
// Feed it the data accesses of a program, each tagged with the page size backing it and
// whether it is an ordinary data reference or a load of a software walk's inner block (a
// tree array's table entry); it counts what the modelled machine's translation hardware
// would do:
//
//   L1 TLB lookup (the array holding that page size) -> hit: done
//   miss -> L2 TLB lookup -> hit: fill L1, done
//   miss -> page walk: the page-walk caches give the lowest cached level; the walk reads one
//           entry per level below it down to the leaf (1 for 4 KiB, 2 for 2 MiB, 3 for
//           1 GiB); each read goes through the data caches when modelled; fills L2, L1, PWC.
//
// On a what-if machine (MachineConfig::what_if_shift, what_if.hpp) every reference is
// translated on that machine's one page size, whatever size its entry carries; the
// per-size miss and walk counts then all fall under 4k (the arrays that hold the pages).
//
// With translate = false (the physically addressed machine) only the references and the
// data caches are counted. Page-table entries get synthetic addresses laid out as if each
// level's tables were one array indexed by the virtual address bits above that level, so
// entries of neighbouring pages share cache lines as they do in real tables.
//
// Cost: a repeated access to the page of the previous one is a few instructions; otherwise
// one set lookup per structure visited. Not thread-safe: one simulator per thread.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "physmem/tlbsim/config.hpp"
#include "physmem/tlbsim/trace.hpp"

namespace physmem::tlbsim {

// What the simulator counted. Arrays indexed by PageSize or by page-table level (1..5).
struct Stats {
    std::uint64_t accesses = 0;       // every reference fed in
    std::uint64_t sw_walk_loads = 0;  // of them, software walk (inner block) loads
    std::array<std::uint64_t, kPageSizes> accesses_by_size{};
    std::array<std::uint64_t, kPageSizes> l1_misses_by_size{};
    std::uint64_t l1_misses = 0;
    std::uint64_t l2_hits = 0;
    std::uint64_t walks = 0;  // L2 misses: completed page walks
    std::array<std::uint64_t, kPageSizes> walks_by_size{};
    std::uint64_t walk_refs = 0;  // page-table entries read by walks
    std::array<std::uint64_t, 6> walk_refs_by_level{};
    // Walks that started below the root thanks to a page-walk-cache hit on a level-L entry.
    std::array<std::uint64_t, 6> pwc_hits_by_level{};
    // Data-cache model (zeros without one): hits per cache level of walk refs and of the
    // program's references; a reference missing every level goes to memory.
    std::array<std::uint64_t, 4> walk_ref_cache_hits{};
    std::uint64_t walk_ref_memory = 0;
    std::array<std::uint64_t, 4> data_cache_hits{};
    std::uint64_t data_memory = 0;
    // Of the program's references, the software walk's loads: hits per level and to memory.
    std::array<std::uint64_t, 4> sw_walk_cache_hits{};
    std::uint64_t sw_walk_memory = 0;

    Stats& operator+=(const Stats& o) noexcept;
};

// How a simulator translates a reference to a page other than the last one. `fastest`: a
// path compiled for the machine's shape where it has one of the shapes the presets have
// (split walk caches as Intel's and Arm's; AMD's page directory cache with PDEs in the L2
// TLB; each with the kinds of its TLB arrays fixed), else the generic path; `generic`: the
// one path every configuration can take, which reads the shape from the configuration on
// every reference. Both count the same (the tests hold every preset to it).
enum class Engine : std::uint8_t { fastest, generic };

class Simulator {
  public:
    // Throws std::invalid_argument for an invalid configuration (validate()).
    explicit Simulator(const MachineConfig& m, Engine engine = Engine::fastest);
    ~Simulator();
    Simulator(Simulator&&) noexcept;
    Simulator& operator=(Simulator&&) noexcept;

    const MachineConfig& config() const noexcept;
    // The path taken: "generic", or the compiled shape and its arrays' kinds, e.g.
    // "split walk caches, L1 small, L2 small".
    const std::string& engine() const noexcept;

    // One reference at virtual address `addr` on a page of `size`.
    void access(std::uint64_t addr, PageSize size, Ref kind = Ref::data) noexcept;
    void access(Entry e) noexcept { access(e.addr(), e.size(), e.kind()); }
    // Every entry in order (one call: cheaper per reference than access() in a loop).
    void run(std::span<const Entry> trace) noexcept;

    // The counts so far (brings its totals up to date: like every member, not to be called
    // while another thread uses the simulator).
    const Stats& stats() const noexcept;
    // Zeroes the counts, keeps every structure's contents (e.g. after a warm-up).
    void reset_stats() noexcept;
    // Empties every TLB, page-walk cache and data cache (counts kept).
    void flush() noexcept;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace physmem::tlbsim
