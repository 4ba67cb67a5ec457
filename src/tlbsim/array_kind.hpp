// src/tlbsim/array_kind.hpp — one kind of set-associative array (SmallSets or WideSets) behind
// one interface, reached from a SetAssoc without its per-call dispatch: the simulator's paths
// compiled for a machine shape take these as template arguments (simulator_paths.hpp).
//
// Each operation has SetAssoc's contract (set_assoc.hpp). A Hint is where a lookup found the
// key's set, for the insert after a miss.
#pragma once

#include <cstdint>

#include "tlbsim/set_assoc.hpp"

namespace physmem::tlbsim {

struct SmallKind {
    static constexpr const char* kName = "small";
    using Sets = SmallSets;
    using Hint = SmallSets::Hint;
    static bool holds(const SetAssoc& a) noexcept { return !a.empty() && !a.is_wide(); }
    static Sets& of(SetAssoc& a) noexcept { return a.small_sets(); }
    static bool access(Sets& s, std::uint64_t key) noexcept { return s.access(key); }
    static bool lookup(Sets& s, std::uint64_t key, Hint& h) noexcept { return s.lookup(key, h); }
    static void insert(Sets& s, std::uint64_t key, const Hint& h) noexcept { s.insert(key, h); }
};

struct WideKind {
    static constexpr const char* kName = "wide";
    using Sets = WideSets;
    using Hint = WideSets::Hint;
    static bool holds(const SetAssoc& a) noexcept { return a.is_wide(); }
    static Sets& of(SetAssoc& a) noexcept { return a.wide_sets(); }
    static bool access(Sets& s, std::uint64_t key) noexcept { return s.access(key); }
    static bool lookup(Sets& s, std::uint64_t key, Hint& h) noexcept { return s.lookup(key, h); }
    static void insert(Sets& s, std::uint64_t key, const Hint& h) noexcept { s.insert(key, h); }
};

}  // namespace physmem::tlbsim
