// src/tlbsim/simulator_impl.hpp — the simulator's state and its generic lookup path: L1 TLB,
// L2 TLB, page walk through the page-walk caches, data caches (see simulator.hpp for the
// order and what is counted). simulator.cpp builds and runs it; compiled_paths.cpp adds the
// paths compiled for the shapes of the presets' machines.
#pragma once

#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <vector>

#include "physmem/tlbsim/simulator.hpp"
#include "tlbsim/set_assoc.hpp"

namespace physmem::tlbsim {


inline constexpr std::uint64_t kNone = SetAssoc::kEmpty;

// A TLB level: its arrays and which array holds each page size (-1: none).
struct TlbLevel {
    std::vector<SetAssoc> arrays;
    std::array<int, kPageSizes> of_size{-1, -1, -1};

    explicit TlbLevel(const TlbLevelConfig& c) {
        for (const ArrayConfig& a : c.arrays) {
            for (unsigned s = 0; s < kPageSizes; ++s)
                if (a.sizes & size_bit(PageSize(s))) of_size[s] = int(arrays.size());
            arrays.emplace_back(a.entries, a.ways);
        }
    }
    SetAssoc* holding(PageSize s) noexcept {
        int i = of_size[unsigned(s)];
        return i < 0 ? nullptr : &arrays[unsigned(i)];
    }
    void flush() noexcept {
        for (SetAssoc& a : arrays) a.flush();
    }
};

// A TLB entry's key: the virtual page number, the page size in the top bits (so sizes
// sharing an array never match each other; the set index is the page number's low bits).
inline std::uint64_t tlb_key(std::uint64_t addr, unsigned shift, PageSize s) noexcept {
    return (addr >> shift) | (std::uint64_t(s) << 60);
}

// How a page size is translated: the page's shift, the level of its leaf entry, and the
// size whose TLB arrays hold it (and whose counts it adds to). The hardware maps each tag
// to the granule's page or block (config.hpp, page_shift(m, s)); a what-if machine maps
// every size to its one page size in the 4 KiB arrays.
struct Geometry {
    std::array<unsigned, kPageSizes> shift{}, leaf{};
    std::array<PageSize, kPageSizes> held_as{};
    // log2 of the span of a level-1 entry: the granule on the hardware; with what-if pages
    // of 2^b the span that puts the leaf level's entries at 2^b (what_if.hpp).
    unsigned base_shift = 12;
    unsigned bits = 9;  // index bits a level resolves (level_bits of the granule)
};

// The geometry of m's page sizes (simulator.cpp).
Geometry geometry(const MachineConfig& m);

struct Simulator::Impl {
    MachineConfig cfg;
    TlbLevel l1, l2;
    std::array<SetAssoc, 6> pwc_split;
    SetAssoc pwc_unified;
    std::vector<SetAssoc> caches;
    Stats st;
    // The references by tagged size, kind (data, software walk) and path: kL1Hit (or not
    // translated), kL2Hit, or kWalkFrom + the level the page walk started at. One count a
    // reference: the totals by size and level follow from these (total()), where counting
    // each as it happens would be several chains of stores and reloads through memory a
    // reference.
    static constexpr unsigned kL1Hit = 0, kL2Hit = 1, kWalkFrom = 2, kPaths = kWalkFrom + 6;
    std::array<std::uint64_t, kPageSizes * 2 * kPaths> outcome{};
    std::uint64_t last_page = kNone;  // key of the page the last reference hit as L1's MRU entry
    std::uint64_t last_line = kNone;  // line the last reference left most recently used in L1d

    Geometry geo;

    explicit Impl(const MachineConfig& m) : cfg(m), l1(m.l1), l2(m.l2), geo(geometry(m)) {
        for (unsigned lv = 2; lv <= 5; ++lv)
            if (m.pwc.split[lv].entries) pwc_split[lv] = SetAssoc(m.pwc.split[lv].entries, m.pwc.split[lv].ways);
        if (m.pwc.unified) pwc_unified = SetAssoc(m.pwc.unified->entries, m.pwc.unified->ways);
        if (m.model_caches)
            for (const CacheConfig& c : m.caches) caches.emplace_back(unsigned(c.bytes / 64), c.ways);
        place_pwc();
    }

    // Per level: the array caching its entries (nullptr: none) and the tag its keys carry
    // in the top bits. Level-2 entries with pde_in_l2_tlb go to the L2 TLB's 4 KiB array,
    // tagged with size code 3, which no page uses; a unified cache tags keys by level.
    std::array<SetAssoc*, 6> pwc_of{};
    std::array<std::uint64_t, 6> pwc_tag{};
    std::array<unsigned, 6> level_shift{};  // entry_prefix's shift per level
    // Where a lookup that misses may insert at once (SetAssoc::access) instead of after the
    // walk: the walk caches when no two levels share an array, the L2 array of a page size
    // when it holds no walk entries. The result is the same: nothing reads the array between.
    bool pwc_fused = true;
    // Per tagged page size, what translate needs: its arrays, geometry and path in one place.
    // A path translates a reference to a page other than the last one: translate_page for
    // any machine, or one compiled for the machine's shape (compiled_paths.cpp), which
    // counts the same.
    struct Route;
    using PagePath = unsigned (Impl::*)(const Route&, std::uint64_t addr, std::uint64_t key) noexcept;
    struct Route {
        SetAssoc* l1 = nullptr;  // the L1 array holding the size (nullptr: none)
        SetAssoc* l2 = nullptr;  // the L2 array, likewise
        bool l2_fused = false;   // l2 holds no walk entries: a miss may insert at once
        PageSize held = PageSize::k4K;
        unsigned shift = 12, leaf = 1;
        PagePath page = &Impl::translate_page;
    };
    std::array<Route, kPageSizes> routes{};
    std::string engine = "generic";  // Simulator::engine()

    // compiled_paths.cpp: a compiled path for each route where the machine has a shape it
    // knows and no data caches; the paths themselves.
    void choose_path();
    bool shape_split() const noexcept;
    bool shape_amd() const noexcept;
    template <class L1, class L2>
    unsigned page_split(const Route& r, std::uint64_t addr, std::uint64_t key) noexcept;
    template <class L1, class L2>
    unsigned page_amd(const Route& r, std::uint64_t addr, std::uint64_t key) noexcept;
    // page_amd or page_split, and the loop that runs a trace with it inlined for 4 KiB pages.
    using RunPath = void (Impl::*)(std::span<const Entry>) noexcept;
    struct Paths {
        PagePath page;
        RunPath run;
    };
    template <bool Amd, class L1, class L2>
    Paths compiled_path() noexcept;
    // A trace through translate(), its 4 KiB references through Page4k (routes[0].page)
    // inlined. pre: translate, no data caches.
    template <PagePath Page4k>
    [[gnu::flatten]] void run_with(std::span<const Entry> trace) noexcept {
        for (Entry e : trace) {
            const Route& r = routes[unsigned(e.size())];
            const std::uint64_t key = tlb_key(e.addr(), r.shift, r.held);
            unsigned path = kL1Hit;
            if (key != last_page) path = e.size() == PageSize::k4K ? (this->*Page4k)(r, e.addr(), key) : (this->*r.page)(r, e.addr(), key);
            count(e.size(), e.kind(), path);
        }
    }
    RunPath run_translated = &Impl::run_with<&Impl::translate_page>;

    void place_pwc() {
        const PwcConfig& c = cfg.pwc;
        for (unsigned lv = 2; lv <= 5; ++lv) {
            if (lv == 2 && c.pde_in_l2_tlb) {
                pwc_of[lv] = l2.holding(PageSize::k4K);
                pwc_tag[lv] = std::uint64_t{3} << 60;
            } else if (!pwc_unified.empty()) {
                pwc_of[lv] = (c.unified_levels >> lv) & 1 ? &pwc_unified : nullptr;
                pwc_tag[lv] = std::uint64_t(lv) << 60;
            } else {
                pwc_of[lv] = pwc_split[lv].empty() ? nullptr : &pwc_split[lv];
            }
        }
        for (unsigned lv = 1; lv <= 5; ++lv) level_shift[lv] = geo.base_shift + geo.bits * (lv - 1);
        for (unsigned a = 2; a <= 5; ++a)
            for (unsigned b = a + 1; b <= 5; ++b) pwc_fused &= !pwc_of[a] || pwc_of[a] != pwc_of[b];
        for (unsigned t = 0; t < kPageSizes; ++t) {
            Route& r = routes[t];
            r.held = geo.held_as[t], r.shift = geo.shift[t], r.leaf = geo.leaf[t];
            r.l1 = l1.holding(r.held);
            r.l2 = l2.holding(r.held);
            r.l2_fused = std::find(pwc_of.begin(), pwc_of.end(), r.l2) == pwc_of.end();
        }
    }

    // The virtual address bits that select a level-L entry and its table.
    std::uint64_t entry_prefix(std::uint64_t addr, unsigned level) const noexcept {
        return addr >> level_shift[level];
    }
    // A synthetic physical address for the level-L entry translating addr: each level's
    // tables laid out as one array in virtual-address order, levels in disjoint ranges (bits 58+).
    std::uint64_t entry_address(std::uint64_t addr, unsigned level) const noexcept {
        return (std::uint64_t(8 + level) << 58) | (entry_prefix(addr, level) * 8);
    }

    SetAssoc* pwc_array(unsigned level, std::uint64_t addr, std::uint64_t& key) noexcept {
        key = entry_prefix(addr, level) | pwc_tag[level];
        return pwc_of[level];
    }
    bool pwc_lookup(unsigned level, std::uint64_t addr, SetAssoc::Hint& h) noexcept {
        std::uint64_t key;
        SetAssoc* a = pwc_array(level, addr, key);
        return a && a->lookup(key, h);
    }
    // pre: pwc_lookup(level, addr, h) just missed.
    void pwc_insert(unsigned level, std::uint64_t addr, const SetAssoc::Hint& h) noexcept {
        std::uint64_t key;
        if (SetAssoc* a = pwc_array(level, addr, key)) a->insert(key, h);
    }
    // pwc_lookup, inserting on a miss. pre: pwc_fused.
    bool pwc_access(unsigned level, std::uint64_t addr) noexcept {
        std::uint64_t key;
        SetAssoc* a = pwc_array(level, addr, key);
        return a && a->access(key);
    }

    // One line through the data caches: the level it hit (0-based) or -1 for memory; every
    // level above the hit (all on a miss) is filled.
    int cache_access(std::uint64_t line) noexcept {
        for (std::size_t i = 0; i < caches.size(); ++i)  // levels are distinct arrays: insert as each misses
            if (caches[i].access(line)) return int(i);
        return -1;
    }

    // A walk's read of its level-L entry through the data caches. pre: !caches.empty().
    void walk_ref(std::uint64_t addr, unsigned level) noexcept {
        int hit = cache_access(entry_address(addr, level) >> 6);
        if (hit < 0) ++st.walk_ref_memory;
        else ++st.walk_ref_cache_hits[unsigned(hit)];
        last_line = kNone;
    }

    // The hardware walk after an L2 miss: start below the lowest cached upper-level entry.
    // leaf: the level of the page's leaf entry. Returns the level the walk started at.
    unsigned walk(std::uint64_t addr, unsigned leaf) noexcept {
        const unsigned top = cfg.levels;
        unsigned start = top;
        std::array<SetAssoc::Hint, 6> hints;  // per level that missed, for its insert below
        for (unsigned lv = leaf + 1; lv <= top; ++lv) {
            if (pwc_fused ? pwc_access(lv, addr) : pwc_lookup(lv, addr, hints[lv])) {
                start = lv - 1;
                break;
            }
        }
        if (!caches.empty())
            for (unsigned lv = start; lv >= leaf; --lv) walk_ref(addr, lv);
        if (!pwc_fused)
            for (unsigned lv = leaf + 1; lv <= start; ++lv) pwc_insert(lv, addr, hints[lv]);  // each missed above
        return start;
    }

    // The path of one reference (outcome's last index): the same page as the last reference
    // (most of a scan) costs a compare here; anything else goes through the arrays out of line,
    // by the route's path (choose_path).
    unsigned translate(std::uint64_t addr, PageSize tagged) noexcept {
        const Route& r = routes[unsigned(tagged)];
        const std::uint64_t key = tlb_key(addr, r.shift, r.held);
        return key == last_page ? kL1Hit : (this->*r.page)(r, addr, key);
    }

    // The generic path: any configuration, data caches or not.
    [[gnu::noinline]] unsigned translate_page(const Route& r, std::uint64_t addr, std::uint64_t key) noexcept {
        if (r.l1 && r.l1->access(key)) {  // L1 is no other array: a miss inserts at once
            last_page = key;
            return kL1Hit;
        }
        last_page = r.l1 ? key : kNone;
        SetAssoc::Hint h;
        if (r.l2 && (r.l2_fused ? r.l2->access(key) : r.l2->lookup(key, h))) return kL2Hit;
        const unsigned start = walk(addr, r.leaf);
        if (r.l2 && !r.l2_fused) r.l2->insert(key, h);
        return kWalkFrom + start;
    }

    void data(std::uint64_t addr, Ref kind) noexcept {
        const std::uint64_t line = addr >> 6;
        int hit = 0;
        if (line != last_line) {
            hit = cache_access(line);
            last_line = line;
        }
        if (hit < 0) ++st.data_memory;
        else ++st.data_cache_hits[unsigned(hit)];
        if (kind != Ref::sw_walk) return;
        if (hit < 0) ++st.sw_walk_memory;
        else ++st.sw_walk_cache_hits[unsigned(hit)];
    }

    // One count a reference, at its size, kind and path.
    void count(PageSize s, Ref kind, unsigned path) noexcept {
        ++outcome[(unsigned(s) * 2 + unsigned(kind == Ref::sw_walk)) * kPaths + path];
    }

    void access(std::uint64_t addr, PageSize s, Ref kind) noexcept {
        count(s, kind, cfg.translate ? translate(addr, s) : kL1Hit);
        if (!caches.empty()) data(addr, kind);
    }

    // The translation counts, from the per-path counts: every reference on its tagged size;
    // an L1 miss, an L2 hit and a walk on the size that holds it; a walk from level L below
    // the top ended at a walk-cache hit on level L + 1.
    void total() noexcept {
        st.sw_walk_loads = st.l2_hits = 0;  // accesses, l1_misses, walks and walk_refs: sums below
        st.accesses_by_size = st.l1_misses_by_size = st.walks_by_size = {};
        st.walk_refs_by_level = st.pwc_hits_by_level = {};
        for (unsigned s = 0; s < kPageSizes; ++s) {
            const unsigned held = unsigned(geo.held_as[s]), leaf = geo.leaf[s];
            for (unsigned k = 0; k < 2; ++k) {
                const std::uint64_t* n = &outcome[(s * 2 + k) * kPaths];
                for (unsigned path = 0; path < kPaths; ++path) {
                    st.accesses_by_size[s] += n[path];
                    if (k) st.sw_walk_loads += n[path];
                    if (path != kL1Hit) st.l1_misses_by_size[held] += n[path];
                    if (path == kL2Hit) st.l2_hits += n[path];
                    if (path < kWalkFrom) continue;
                    const unsigned start = path - kWalkFrom;
                    st.walks_by_size[held] += n[path];
                    if (start < cfg.levels) st.pwc_hits_by_level[start + 1] += n[path];
                    for (unsigned lv = leaf; lv <= start; ++lv) st.walk_refs_by_level[lv] += n[path];
                }
            }
        }
        auto sum = [](const auto& a) {
            std::uint64_t n = 0;
            for (std::uint64_t v : a) n += v;
            return n;
        };
        st.accesses = sum(st.accesses_by_size);
        st.l1_misses = sum(st.l1_misses_by_size);
        st.walks = sum(st.walks_by_size);
        st.walk_refs = sum(st.walk_refs_by_level);
    }

    void flush() noexcept {
        l1.flush();
        l2.flush();
        for (SetAssoc& p : pwc_split)
            if (!p.empty()) p.flush();
        if (!pwc_unified.empty()) pwc_unified.flush();
        for (SetAssoc& c : caches) c.flush();
        last_page = last_line = kNone;
    }
};

}  // namespace physmem::tlbsim
