// src/tlbsim/array_kind.hpp — one kind of set-associative array (SmallSets of W ways, or of
// any count for W = 0, or WideSets finding keys one way: WideSets::Mode) behind one interface, reached from a SetAssoc without its
// per-call dispatch: the simulator's compiled paths take these as template arguments
// (compiled_paths.cpp).
//
// Each operation has SetAssoc's contract (set_assoc.hpp). A Hint is where a lookup found the
// key's set, for the insert after a miss (it depends on the key alone).
#pragma once

#include <cstdint>
#include <string>

#include "tlbsim/set_assoc.hpp"

namespace physmem::tlbsim {

template <unsigned W>
struct SmallKind {
    using Sets = SmallSets;
    using Hint = SmallSets::Hint;
    static std::string name() { return W ? "small " + std::to_string(W) + "-way" : std::string("small"); }
    static bool holds(SetAssoc& a) noexcept { return !a.empty() && !a.is_wide() && (W == 0 || a.small_sets().ways() == W); }
    static Sets& of(SetAssoc& a) noexcept { return a.small_sets(); }
    static bool access(Sets& s, std::uint64_t key) noexcept { return s.template access<W>(key); }
    static bool lookup(Sets& s, std::uint64_t key, Hint& h) noexcept { return s.template lookup<W>(key, h); }
    static void insert(Sets& s, std::uint64_t key, const Hint& h) noexcept { s.template insert<W>(key, h); }
};

template <WideSets::Mode M>
struct WideKind {
    using Sets = WideSets;
    using Hint = WideSets::Hint;
    static std::string name() { return M == WideSets::Mode::fingerprints ? "wide (fingerprints)" : "wide (filter)"; }
    static bool holds(SetAssoc& a) noexcept { return a.is_wide() && a.wide_sets().mode() == M; }
    static Sets& of(SetAssoc& a) noexcept { return a.wide_sets(); }
    static bool access(Sets& s, std::uint64_t key) noexcept { return s.template access<M>(key); }
    static bool lookup(Sets& s, std::uint64_t key, Hint& h) noexcept { return s.template lookup<M>(key, h); }
    static void insert(Sets& s, std::uint64_t key, const Hint& h) noexcept { s.template insert<M>(key, h); }
};
using WideFingerprints = WideKind<WideSets::Mode::fingerprints>;
using WideFilter = WideKind<WideSets::Mode::filter>;

}  // namespace physmem::tlbsim
