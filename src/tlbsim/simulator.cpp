// src/tlbsim/simulator.cpp — the modelled lookup path: L1 TLB, L2 TLB, page walk through the
// page-walk caches, data caches (see simulator.hpp for the order and what is counted).
#include "physmem/tlbsim/simulator.hpp"

#include <algorithm>

#include "physmem/tlbsim/what_if.hpp"
#include "tlbsim/array_kind.hpp"
#include "tlbsim/set_assoc.hpp"

namespace physmem::tlbsim {

namespace {

constexpr std::uint64_t kNone = SetAssoc::kEmpty;

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
std::uint64_t tlb_key(std::uint64_t addr, unsigned shift, PageSize s) noexcept {
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

Geometry geometry(const MachineConfig& m) {
    Geometry g;
    g.bits = level_bits(m.granule_shift);
    g.base_shift = m.granule_shift;
    for (unsigned s = 0; s < kPageSizes; ++s) {
        const PageSize p = PageSize(s);
        if (m.what_if_shift == 0) {
            g.shift[s] = page_shift(m, p), g.leaf[s] = leaf_level(m, p), g.held_as[s] = held_as(m, p);
        } else {
            g.shift[s] = m.what_if_shift;
            g.leaf[s] = m.levels + 1 - walk_levels(m, m.what_if_shift);
            g.held_as[s] = PageSize::k4K;
        }
    }
    if (m.what_if_shift) g.base_shift = m.what_if_shift - g.bits * (g.leaf[0] - 1);
    return g;
}

}  // namespace

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
    // Per tagged page size, what translate needs: its arrays and geometry in one place.
    struct Route {
        SetAssoc* l1 = nullptr;  // the L1 array holding the size (nullptr: none)
        SetAssoc* l2 = nullptr;  // the L2 array, likewise
        bool l2_fused = false;   // l2 holds no walk entries: a miss may insert at once
        PageSize held = PageSize::k4K;
        unsigned shift = 12, leaf = 1;
    };
    std::array<Route, kPageSizes> routes{};

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
    // by the path chosen for the machine's shape (choose_path).
    unsigned translate(std::uint64_t addr, PageSize tagged) noexcept {
        const Route& r = routes[unsigned(tagged)];
        const std::uint64_t key = tlb_key(addr, r.shift, r.held);
        return key == last_page ? kL1Hit : (this->*page)(r, addr, key);
    }

    // The translation of a reference to a page other than the last one: translate_page for
    // any machine, or one of the paths compiled for a shape, which count the same; and the
    // loop translating a trace without data caches with the same path inlined.
    using PagePath = unsigned (Impl::*)(const Route&, std::uint64_t, std::uint64_t) noexcept;
    using RunPath = void (Impl::*)(std::span<const Entry>) noexcept;
    PagePath page = &Impl::translate_page;
    RunPath run_translated = &Impl::run_with<&Impl::translate_page>;
    std::string engine = "generic";

    template <PagePath Page>
    [[gnu::flatten]] void run_with(std::span<const Entry> trace) noexcept {
        for (Entry e : trace) {
            const Route& r = routes[unsigned(e.size())];
            const std::uint64_t key = tlb_key(e.addr(), r.shift, r.held);
            count(e.size(), e.kind(), key == last_page ? kL1Hit : (this->*Page)(r, e.addr(), key));
        }
    }

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

    // Split walk caches (Intel's paging-structure caches, Arm's walk cache): every TLB array
    // of L1 of kind L1, of L2 of kind L2, no array caching two levels, none in a TLB: each
    // miss inserts at once. pre: shape_split() picked it (every route has an L1 array).
    template <class L1, class L2>
    unsigned page_split(const Route& r, std::uint64_t addr, std::uint64_t key) noexcept {
        last_page = key;
        if (L1::access(L1::of(*r.l1), key)) return kL1Hit;
        if (r.l2 && L2::access(L2::of(*r.l2), key)) return kL2Hit;
        const unsigned top = cfg.levels;
        for (unsigned lv = r.leaf + 1; lv <= top; ++lv) {
            SetAssoc& p = pwc_split[lv];
            if (!p.empty() && p.small_sets().access(entry_prefix(addr, lv))) return kWalkFrom + lv - 1;
        }
        return kWalkFrom + top;
    }

    // AMD's walk caches: level-2 entries in the L2 TLB array (tag kPdeTag), levels 3 and up
    // in one wide page directory cache tagged by level. Every array of L1 of kind L1; L2 one
    // array of kind L2. As translate_page: every lookup first, then the inserts, walk caches
    // from the lowest level, the page's translation last. pre: shape_amd() picked it.
    template <class L1, class L2>
    unsigned page_amd(const Route& r, std::uint64_t addr, std::uint64_t key) noexcept {
        last_page = key;
        if (L1::access(L1::of(*r.l1), key)) return kL1Hit;
        typename L2::Hint h, hp;
        typename L2::Sets& l2 = L2::of(*pwc_of[2]);
        if (r.l2 && L2::lookup(l2, key, h)) return kL2Hit;
        const unsigned top = cfg.levels, leaf = r.leaf;
        const std::uint64_t pde = entry_prefix(addr, 2) | pwc_tag[2];
        const bool pde_missed = leaf == 1 && !L2::lookup(l2, pde, hp);
        unsigned start = leaf == 1 && !pde_missed ? 1 : top;
        WideSets& pdc = pwc_unified.wide_sets();
        const unsigned first = leaf + 1 > 3 ? leaf + 1 : 3;
        if (start == top)
            for (unsigned lv = first; lv <= top; ++lv)
                if (pdc.lookup(entry_prefix(addr, lv) | pwc_tag[lv])) {
                    start = lv - 1;
                    break;
                }
        if (pde_missed) L2::insert(l2, pde, hp);
        for (unsigned lv = first; lv <= start; ++lv) pdc.insert(entry_prefix(addr, lv) | pwc_tag[lv]);
        if (r.l2) L2::insert(l2, key, h);
        return kWalkFrom + start;
    }

    // Whether every route's array at one TLB level (l1 or l2) is of kind K (null: none, only
    // where `none_ok`).
    template <class K>
    bool routes_hold(SetAssoc* Route::*level, bool none_ok) const noexcept {
        return std::all_of(routes.begin(), routes.end(), [&](const Route& r) {
            return r.*level ? K::holds(*(r.*level)) : none_ok;
        });
    }
    bool shape_split() const noexcept {
        if (!pwc_unified.empty() || cfg.pwc.pde_in_l2_tlb) return false;
        for (unsigned lv = 2; lv <= 5; ++lv)
            if (!pwc_split[lv].empty() && pwc_split[lv].is_wide()) return false;
        return true;
    }
    bool shape_amd() const noexcept {
        const unsigned upper = (1u << (cfg.levels + 1)) - (1u << 3);  // levels 3..top
        if (!cfg.pwc.pde_in_l2_tlb || !pwc_of[2] || pwc_unified.empty() || !pwc_unified.is_wide()) return false;
        if ((cfg.pwc.unified_levels & upper) != upper) return false;
        return std::all_of(routes.begin(), routes.end(), [&](const Route& r) { return !r.l2 || r.l2 == pwc_of[2]; });
    }
    template <PagePath Page, class L1, class L2>
    void use(const char* shape) {
        page = Page;
        run_translated = &Impl::run_with<Page>;
        engine = std::string(shape) + ", L1 " + L1::kName + ", L2 " + L2::kName;
    }
    template <class L1, class L2>
    bool pick() {
        if (!routes_hold<L1>(&Route::l1, false) || !routes_hold<L2>(&Route::l2, true)) return false;
        if (shape_split()) use<&Impl::page_split<L1, L2>, L1, L2>("split walk caches");
        else if (shape_amd() && L2::holds(*pwc_of[2])) use<&Impl::page_amd<L1, L2>, L1, L2>("page directory cache, PDEs in L2");
        else return false;
        return true;
    }
    // A compiled path where the machine has one of the shapes above and no data caches (the
    // compiled walks do not read entries through them), else translate_page.
    void choose_path() {
        if (!caches.empty()) return;
        pick<SmallKind, SmallKind>() || pick<WideKind, SmallKind>() || pick<WideKind, WideKind>() ||
            pick<SmallKind, WideKind>();
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

Simulator::Simulator(const MachineConfig& m, Engine engine) {
    validate(m);
    impl_ = std::make_unique<Impl>(m);
    if (engine == Engine::fastest) impl_->choose_path();
}
Simulator::~Simulator() = default;
Simulator::Simulator(Simulator&&) noexcept = default;
Simulator& Simulator::operator=(Simulator&&) noexcept = default;

const MachineConfig& Simulator::config() const noexcept { return impl_->cfg; }
const std::string& Simulator::engine() const noexcept { return impl_->engine; }
void Simulator::access(std::uint64_t addr, PageSize size, Ref kind) noexcept { impl_->access(addr, size, kind); }
void Simulator::run(std::span<const Entry> trace) noexcept {
    Impl& im = *impl_;
    if (im.cfg.translate && im.caches.empty()) {  // the common case: no data caches to run
        (im.*im.run_translated)(trace);
        return;
    }
    for (Entry e : trace) im.access(e.addr(), e.size(), e.kind());
}
const Stats& Simulator::stats() const noexcept {
    impl_->total();
    return impl_->st;
}
void Simulator::reset_stats() noexcept {
    impl_->st = Stats{};
    impl_->outcome = {};
}
void Simulator::flush() noexcept { impl_->flush(); }

Stats& Stats::operator+=(const Stats& o) noexcept {
    auto add = [](auto& a, const auto& b) {
        for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
    };
    accesses += o.accesses;
    sw_walk_loads += o.sw_walk_loads;
    add(accesses_by_size, o.accesses_by_size);
    add(l1_misses_by_size, o.l1_misses_by_size);
    l1_misses += o.l1_misses;
    l2_hits += o.l2_hits;
    walks += o.walks;
    add(walks_by_size, o.walks_by_size);
    walk_refs += o.walk_refs;
    add(walk_refs_by_level, o.walk_refs_by_level);
    add(pwc_hits_by_level, o.pwc_hits_by_level);
    add(walk_ref_cache_hits, o.walk_ref_cache_hits);
    walk_ref_memory += o.walk_ref_memory;
    add(data_cache_hits, o.data_cache_hits);
    data_memory += o.data_memory;
    add(sw_walk_cache_hits, o.sw_walk_cache_hits);
    sw_walk_memory += o.sw_walk_memory;
    return *this;
}

}  // namespace physmem::tlbsim
