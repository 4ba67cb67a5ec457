// src/tlbsim/compiled_paths.cpp — translation paths compiled for the shapes of the presets'
// machines: the generic path (simulator_impl.hpp) reads the machine's shape from its
// configuration on every reference and reaches each array through SetAssoc's dispatch; these
// have the shape in their code and each array's kind (and a set's way count, where it is a
// common one) as template arguments, so a reference that misses L1 costs fewer instructions.
// Each counts exactly as the generic path (tests/tlbsim/test_engines.cpp holds every preset to
// it). Chosen per page size (route) at construction; a route no path fits keeps the generic one.
#include <tuple>

#include "tlbsim/array_kind.hpp"
#include "tlbsim/simulator_impl.hpp"

namespace physmem::tlbsim {

// How AMD's page directory cache (64 entries, fully associative) finds a key.
constexpr WideSets::Mode kPdcMode = WideSets::Mode::filter;

// Split walk caches (Intel's paging-structure caches, Arm's walk cache): no array caches
// two levels or sits in a TLB, so each miss inserts at once. L1: r.l1's kind; L2: r.l2's
// (unused when the route has none). pre: shape_split(), r.l1.
template <class L1, class L2>
[[gnu::flatten]] unsigned Simulator::Impl::page_split(const Route& r, std::uint64_t addr, std::uint64_t key) noexcept {
    last_page = key;
    if (L1::access(L1::of(*r.l1), key)) return kL1Hit;
    if (r.l2 && L2::access(L2::of(*r.l2), key)) return kL2Hit;
    const unsigned top = cfg.levels;
    for (unsigned lv = r.leaf + 1; lv <= top; ++lv) {
        SetAssoc& p = pwc_split[lv];
        if (p.empty()) continue;
        const std::uint64_t key = entry_prefix(addr, lv);
        const bool hit = lv >= 3 ? p.small_sets().access<0, true>(key) : p.small_sets().access(key);
        if (hit) return kWalkFrom + lv - 1;
    }
    return kWalkFrom + top;
}

// AMD's walk caches: level-2 entries in the L2 TLB array (pwc_of[2], its keys tagged
// pwc_tag[2]), levels 3 and up in one wide page directory cache tagged by level. L1: r.l1's
// kind; L2: pwc_of[2]'s, which is r.l2. As translate_page: every lookup first, then the
// inserts, walk caches from the lowest level, the page's translation last. pre: shape_amd(),
// r.l1, r.l2 (a route without an L2 array keeps the generic path).
template <class L1, class L2>
[[gnu::flatten]] unsigned Simulator::Impl::page_amd(const Route& r, std::uint64_t addr, std::uint64_t key) noexcept {
    last_page = key;
    if (L1::access(L1::of(*r.l1), key)) return kL1Hit;
    typename L2::Hint h, hp;
    typename L2::Sets& l2 = L2::of(*r.l2);
    if (L2::lookup(l2, key, h)) return kL2Hit;
    const unsigned top = cfg.levels, leaf = r.leaf;
    const std::uint64_t pde = entry_prefix(addr, 2) | pwc_tag[2];
    const bool pde_missed = leaf == 1 && !L2::lookup(l2, pde, hp);
    unsigned start = leaf == 1 && !pde_missed ? 1 : top;
    WideSets& pdc = pwc_unified.wide_sets();
    const unsigned first = leaf + 1 > 3 ? leaf + 1 : 3;
    if (start == top)
        for (unsigned lv = first; lv <= top; ++lv)
            if (pdc.lookup<kPdcMode>(entry_prefix(addr, lv) | pwc_tag[lv])) {
                start = lv - 1;
                break;
            }
    if (pde_missed) L2::insert(l2, pde, hp);
    for (unsigned lv = first; lv <= start; ++lv) pdc.insert<kPdcMode>(entry_prefix(addr, lv) | pwc_tag[lv]);
    L2::insert(l2, key, h);
    return kWalkFrom + start;
}

bool Simulator::Impl::shape_split() const noexcept {
    if (!pwc_unified.empty() || cfg.pwc.pde_in_l2_tlb) return false;
    for (unsigned lv = 2; lv <= 5; ++lv)
        if (!pwc_split[lv].empty() && pwc_split[lv].is_wide()) return false;
    return true;
}

bool Simulator::Impl::shape_amd() const noexcept {
    const unsigned upper = (1u << (cfg.levels + 1)) - (1u << 3);  // levels 3..top
    if (!cfg.pwc.pde_in_l2_tlb || !pwc_of[2] || pwc_unified.empty() || !pwc_unified.is_wide()) return false;
    if (pwc_unified.wide_sets().mode() != kPdcMode) return false;
    if ((cfg.pwc.unified_levels & upper) != upper) return false;
    return std::all_of(routes.begin(), routes.end(), [&](const Route& r) { return !r.l2 || r.l2 == pwc_of[2]; });
}

template <bool Amd, class L1, class L2>
Simulator::Impl::Paths Simulator::Impl::compiled_path() noexcept {
    if constexpr (Amd) return {&Impl::page_amd<L1, L2>, &Impl::run_with<&Impl::page_amd<L1, L2>>};
    else return {&Impl::page_split<L1, L2>, &Impl::run_with<&Impl::page_split<L1, L2>>};
}

namespace {

// The kinds each shape's paths are compiled for, the most specific first: the way counts the
// presets' set-associative TLBs have, then any count, then wide sets; only what a shape's
// machines have (each pair is two functions to compile): Intel's and Arm's L1 TLBs are small
// or fully associative (wide: 40-96 ways, the filter) and their L2 small, AMD's L1 fully
// associative and its L2 small or wide (24 ways: fingerprints).
template <bool Amd>
struct Kinds {
    using L1 = std::tuple<SmallKind<4>, SmallKind<8>, SmallKind<0>, WideFilter>;
    using L2 = std::tuple<SmallKind<8>, SmallKind<12>, SmallKind<16>, SmallKind<0>>;
};
template <>
struct Kinds<true> {
    using L1 = std::tuple<WideFilter>;
    using L2 = std::tuple<SmallKind<8>, SmallKind<12>, SmallKind<16>, SmallKind<0>, WideFingerprints>;
};

// The compiled path (Impl::compiled_path) for the first kinds that hold l1 and l2 (l2 null:
// the route has no L2 array, any kind will do), and its kinds' names; false if none fits.
// (Im is Simulator::Impl, deduced: a private name the caller may use and this may not.)
template <bool Amd, class L1, class Im, class Path, class... L2>
bool find_l2(Im& im, SetAssoc* l2, Path& path, std::string& name, std::tuple<L2...>*) {
    auto fits = [&](auto k) {
        using K = decltype(k);
        if (l2 && !K::holds(*l2)) return false;
        path = im.template compiled_path<Amd, L1, K>();
        name = "L1 " + L1::name() + (l2 ? ", L2 " + K::name() : "");
        return true;
    };
    return (fits(L2{}) || ...);
}
template <bool Amd, class Im, class Path, class... L1>
bool find_path(Im& im, SetAssoc& l1, SetAssoc* l2, Path& path, std::string& name, std::tuple<L1...>*) {
    auto fits = [&](auto k) {
        using K = decltype(k);
        return K::holds(l1) && find_l2<Amd, K>(im, l2, path, name, static_cast<typename Kinds<Amd>::L2*>(nullptr));
    };
    return (fits(L1{}) || ...);
}

}  // namespace

void Simulator::Impl::choose_path() {
    if (!caches.empty() || !cfg.translate) return;  // the compiled walks read nothing through caches
    const bool split = shape_split(), amd = !split && shape_amd();
    if (!split && !amd) return;
    std::string described;
    for (unsigned s = 0; s < kPageSizes; ++s) {
        Route& r = routes[s];
        std::string name;
        Paths path{};
        const bool found = r.l1 && (amd ? r.l2 && find_path<true>(*this, *r.l1, r.l2, path, name, static_cast<Kinds<true>::L1*>(nullptr))
                                         : find_path<false>(*this, *r.l1, r.l2, path, name, static_cast<Kinds<false>::L1*>(nullptr)));
        if (!found) continue;
        r.page = path.page;
        if (s == 0) run_translated = path.run;
        described += std::string(described.empty() ? "" : "; ") + std::string(to_string(PageSize(s))) + ": " + name;
    }
    if (!described.empty()) engine = (split ? "split walk caches; " : "page directory cache, PDEs in L2; ") + described;
}

}  // namespace physmem::tlbsim
