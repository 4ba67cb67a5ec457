// lab/algorithms/kernels_impl.hpp — the kernels of kernels.hpp over std::vector, TreeArray
// and PagedArray, and the workload that runs them. Included by one source file per
// container (kernels_vector.cpp, kernels_tree.cpp, kernels_paged.cpp), each compiled once
// per build (lab/cmake/algorithms.cmake: -O2, -O3; the flags are PHYSMEM_ALGO_FLAGS), so
// that a kernel is compiled in a file the size of a program's that uses one container:
// in one file for all three, g++ 12 ran out of the unit's inlining budget
// (inline-unit-growth) and called functions no user's file would leave out of line
// (PagedArray::begin() in the count kernel, whose loop then ran slower). Each kernel
// is a noinline function template, so the loop the compiler builds for it is the one a
// user's function of the same body gets. Everything here has internal linkage.
#pragma once

#include "algorithms/kernels.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <new>
#include <numeric>
#include <utility>

#include "physmem/algorithm.hpp"
#include "physmem/paged_array.hpp"
#include "physmem/sort.hpp"
#include "physmem/tree_array.hpp"

namespace lab::algorithms {
namespace {

// std::vector's memory from the run's backing: hands out one span, once.
template <class T>
struct SpanAlloc {
    using value_type = T;
    T* p = nullptr;
    std::size_t cap = 0;
    explicit SpanAlloc(std::span<T> s) noexcept : p(s.data()), cap(s.size()) {}
    template <class U>
    SpanAlloc(const SpanAlloc<U>&) noexcept {}
    T* allocate(std::size_t k) {
        if (k > cap || !p) throw std::bad_alloc();
        return std::exchange(p, nullptr);
    }
    void deallocate(T*, std::size_t) noexcept {}
    friend bool operator==(const SpanAlloc&, const SpanAlloc&) noexcept { return true; }
};

using Vec = std::vector<Word, SpanAlloc<Word>>;  // a and b of the vector variant, side
using Ref = std::vector<Word>;                  // the references (malloc)
using Tree = physmem::TreeArray<Word>;
using Paged = physmem::PagedArray<Word>;

// The initial value of element i: 63-bit pseudo-random keys (splitmix64), so kAbsent
// (top bit set) is in no array and sorts, searches and min/max see unordered data.
constexpr Word kAbsent = (Word{1} << 63) | 12345;
Word init(std::size_t i) noexcept {
    Word z = (i + 1) * 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return (z ^ (z >> 31)) >> 1;
}
constexpr std::size_t kShift = 3;  // copy_shift: a[3..] -> b[0..], other leaf boundaries

// The operands of one kernel: the two arrays of the container, the side vector, sizes.
template <class A, class S>
struct Args {
    A& a;
    A& b;
    S& side;
    std::size_t n, sorted, updates;
    Word seed;  // random_index's start: a new one each measured pass, 0 for the checked pass
    Word* const* walk = nullptr;  // random_floor's table: kFloorEntries(n) pointers to side's start
};

// random_floor's table: one entry per 2^kFloorShift elements (a 64 KiB leaf of words, the
// suite's blocks), as a TreeArray's one-level table has, so it stays in L1 as that does.
constexpr unsigned kFloorShift = 13;
constexpr std::size_t kFloorEntries(std::size_t n) noexcept { return (n >> kFloorShift) + 1; }

#define KERNEL template <class A, class S> [[gnu::noinline]] Word
// --- loops people write -------------------------------------------------------------------
KERNEL k_range_for(Args<A, S>& x) {
    Word s = 0;
    for (Word v : std::as_const(x.a)) s += v;
    return s;
}
KERNEL k_iterator(Args<A, S>& x) {
    const A& a = x.a;
    Word s = 0;
    for (auto it = a.begin(), e = a.end(); it != e; ++it) s += *it;
    return s;
}
KERNEL k_index(Args<A, S>& x) {
    const A& a = x.a;
    Word s = 0;
    for (std::size_t i = 0, n = a.size(); i < n; ++i) s += a[i];
    return s;
}
// The next of random_index's pseudo-random indices below n: an LCG step of r, its
// multiply-shift into [0, n). Each pass starts r at kRandomStart ^ seed.
constexpr Word kRandomStart = 0x2545f4914f6cdd1dULL;
inline std::size_t next_random(Word& r, std::size_t n) noexcept {
    r = r * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::size_t>((static_cast<unsigned __int128>(r) * n) >> 64);
}
// GUPS without look-ahead: a[r] ^= r at `updates` pseudo-random r (an LCG), one at a time.
// Each measured pass starts the LCG elsewhere (x.seed), so a pass meets the whole array as
// GUPS does, not the same `updates` elements the last pass left in the caches.
// The array and the count are locals, as in k_index and as a function given the array
// would have them: through x, a PagedArray's walk reloaded its table's root and shift
// every update (g++ could not carry them past the out-of-line slow path, as it does
// for a local array).
KERNEL k_random(Args<A, S>& x) {
    A& a = x.a;
    Word r = kRandomStart ^ x.seed;
    const std::size_t n = x.n, updates = x.updates;
    for (std::size_t u = 0; u < updates; ++u) {
        const std::size_t i = next_random(r, n);
        a[i] ^= r;
    }
    return 0;
}
// The control for random_index (group "floor"): the same updates on the contiguous side
// array, each through a one-level table whose every entry is the array's start — the load
// of a pointer from x.walk, in L1, then the update through it, as a TreeArray's walk does
// (its entries are leaf starts less the leaf's first index). Any software walk makes at
// least this load on the element's path, so on the same memory random a[i] through a walk
// cannot beat this loop: side's time / the vector's random_index is the floor of the
// software walk's cost on this CPU. Runs on a vector whatever the container.
// The count is a local, as in k_random: read through x it was reloaded every update, which
// put the floor above the tree's GUPS (0.89-0.94x of it at -O2 and -O3 in the main job of
// 3c11692). A table of zero offsets added to the index (s[i + walk[i >> 13]]) was no floor
// either: in one process of two it ran at 1.27-1.45x the vector's random_index at -O3, the
// tree's walk at 0.83-0.99x of it; through pointers it holds at 1.15-1.19x (tree-thp,
// tree-4k, paged-thp, -O2 and -O3).
KERNEL k_random_floor(Args<A, S>& x) {
    Word r = kRandomStart ^ x.seed;
    const std::size_t n = x.n, updates = x.updates;
    Word* const* walk = x.walk;
    for (std::size_t u = 0; u < updates; ++u) {
        const std::size_t i = next_random(r, n);
        walk[i >> kFloorShift][i] ^= r;
    }
    return 0;
}
KERNEL k_std_sort(Args<A, S>& x) {
    std::sort(x.a.begin(), x.a.begin() + static_cast<std::ptrdiff_t>(x.sorted));
    return 0;
}
KERNEL k_physmem_sort(Args<A, S>& x) {
    physmem::sort(x.a.begin(), x.a.begin() + static_cast<std::ptrdiff_t>(x.sorted));
    return 0;
}
// --- segmented algorithms (physmem::, which forwards to std:: for the vector) --------------
KERNEL k_for_each(Args<A, S>& x) {
    Word s = 0;
    physmem::for_each(std::as_const(x.a).begin(), std::as_const(x.a).end(), [&s](Word v) { s += v; });
    return s;
}
KERNEL k_for_each_n(Args<A, S>& x) {
    Word s = 0;
    physmem::for_each_n(std::as_const(x.a).begin(), x.n, [&s](Word v) { s ^= v; });
    return s;
}
KERNEL k_copy_out(Args<A, S>& x) {
    physmem::copy(std::as_const(x.a).begin(), std::as_const(x.a).end(), x.side.begin());
    return 0;
}
KERNEL k_copy_in(Args<A, S>& x) {
    physmem::copy(std::as_const(x.side).begin(), std::as_const(x.side).end(), x.a.begin());
    return 0;
}
KERNEL k_copy_shift(Args<A, S>& x) {
    physmem::copy(std::as_const(x.a).begin() + kShift, std::as_const(x.a).end(), x.b.begin());
    return 0;
}
KERNEL k_copy_n(Args<A, S>& x) {
    physmem::copy_n(std::as_const(x.a).begin(), x.n, x.b.begin());
    return 0;
}
KERNEL k_move(Args<A, S>& x) {
    physmem::move(x.b.begin(), x.b.end(), x.a.begin());
    return 0;
}
KERNEL k_fill(Args<A, S>& x) {
    physmem::fill(x.a.begin(), x.a.end(), Word{7});
    return 0;
}
KERNEL k_fill_n(Args<A, S>& x) {
    physmem::fill_n(x.a.begin(), x.n, Word{9});
    return 0;
}
KERNEL k_transform(Args<A, S>& x) {
    physmem::transform(x.a.begin(), x.a.end(), x.a.begin(), [](Word v) { return v * 3 + 1; });
    return 0;
}
KERNEL k_transform2(Args<A, S>& x) {
    physmem::transform(std::as_const(x.a).begin(), std::as_const(x.a).end(), std::as_const(x.b).begin(),
                       x.a.begin(), [](Word u, Word v) { return u + v; });
    return 0;
}
KERNEL k_accumulate(Args<A, S>& x) {
    return physmem::accumulate(std::as_const(x.a).begin(), std::as_const(x.a).end(), Word{0});
}
KERNEL k_reduce(Args<A, S>& x) {
    return physmem::reduce(std::as_const(x.a).begin(), std::as_const(x.a).end(), Word{0});
}
KERNEL k_transform_reduce(Args<A, S>& x) {
    return physmem::transform_reduce(std::as_const(x.a).begin(), std::as_const(x.a).end(), Word{0}, std::plus<>{},
                                     [](Word v) { return v & 0xff; });
}
KERNEL k_inner_product(Args<A, S>& x) {
    return physmem::inner_product(std::as_const(x.a).begin(), std::as_const(x.a).end(), std::as_const(x.b).begin(),
                                  Word{0});
}
template <class A, class It>
Word index_of(const A& a, It it) {
    return static_cast<Word>(it - a.begin());
}
KERNEL k_find(Args<A, S>& x) {
    const A& a = x.a;
    return index_of(a, physmem::find(a.begin(), a.end(), kAbsent));
}
KERNEL k_find_if(Args<A, S>& x) {
    const A& a = x.a;
    return index_of(a, physmem::find_if(a.begin(), a.end(), [](Word v) { return v >> 63; }));
}
KERNEL k_count(Args<A, S>& x) {
    const A& a = x.a;
    return static_cast<Word>(physmem::count(a.begin(), a.end(), init(5)));
}
KERNEL k_count_if(Args<A, S>& x) {
    const A& a = x.a;
    return static_cast<Word>(physmem::count_if(a.begin(), a.end(), [](Word v) { return (v & 7) == 0; }));
}
KERNEL k_equal(Args<A, S>& x) {
    const A &a = x.a, &b = x.b;
    return physmem::equal(a.begin(), a.end(), b.begin(), b.end());
}
KERNEL k_mismatch(Args<A, S>& x) {
    const A &a = x.a, &b = x.b;
    return index_of(a, physmem::mismatch(a.begin(), a.end(), b.begin()).first);
}
KERNEL k_min_element(Args<A, S>& x) {
    const A& a = x.a;
    return index_of(a, physmem::min_element(a.begin(), a.end()));
}
KERNEL k_max_element(Args<A, S>& x) {
    const A& a = x.a;
    return index_of(a, physmem::max_element(a.begin(), a.end()));
}
KERNEL k_minmax_element(Args<A, S>& x) {
    const A& a = x.a;
    auto [lo, hi] = physmem::minmax_element(a.begin(), a.end());
    return index_of(a, lo) * 0x100000001ULL ^ index_of(a, hi);
}
KERNEL k_all_of(Args<A, S>& x) {
    const A& a = x.a;
    return physmem::all_of(a.begin(), a.end(), [](Word v) { return v != kAbsent; });
}
KERNEL k_any_of(Args<A, S>& x) {
    const A& a = x.a;
    return physmem::any_of(a.begin(), a.end(), [](Word v) { return v == kAbsent; });
}
KERNEL k_none_of(Args<A, S>& x) {
    const A& a = x.a;
    return physmem::none_of(a.begin(), a.end(), [](Word v) { return v == kAbsent; });
}
KERNEL k_iota(Args<A, S>& x) {
    physmem::iota(x.a.begin(), x.a.end(), Word{1});
    return 0;
}
KERNEL k_replace(Args<A, S>& x) {
    physmem::replace(x.a.begin(), x.a.end(), init(5), Word{0});
    return 0;
}
KERNEL k_replace_if(Args<A, S>& x) {
    physmem::replace_if(x.a.begin(), x.a.end(), [](Word v) { return (v & 15) == 0; }, Word{1});
    return 0;
}
KERNEL k_generate(Args<A, S>& x) {
    physmem::generate(x.a.begin(), x.a.end(), [k = Word{0}]() mutable { return k += 7; });
    return 0;
}
KERNEL k_ranges_count_if(Args<A, S>& x) {
    return static_cast<Word>(physmem::count_if(std::as_const(x.a), [](Word v) { return (v & 3) == 0; }));
}
KERNEL k_ranges_transform(Args<A, S>& x) {
    physmem::transform(std::as_const(x.a), x.side.begin(), [](Word v) { return v ^ 0x55; });
    return 0;
}
#undef KERNEL

// Which arrays a kernel writes (checked against the reference after its pass).
enum Writes : unsigned { kNone = 0, kA = 1, kB = 2, kSide = 4 };

struct Spec {
    const char* name;
    const char* group;
    const char* what;
    Writes writes;
    enum { linear, shifted, sorted, updates } ops;
};

// Every kernel, in the order measured. The dispatch (Impl::call) follows this order.
constexpr Spec kSpecs[] = {
    {"range_for", "loop", "for (x : a) s += x", kNone, Spec::linear},
    {"iterator", "loop", "for (it = begin; it != end; ++it) s += *it", kNone, Spec::linear},
    {"index", "index", "for (i < n) s += a[i]", kNone, Spec::linear},
    {"random_index", "random", "a[r] ^= r at pseudo-random r, no look-ahead (GUPS), each pass from another start", kA, Spec::updates},
    {"random_floor", "floor", "control: random_index's updates on a vector through a one-level table of pointers to its start (the floor of any software walk)", kSide, Spec::updates},
    {"std_sort", "sort", "std::sort through the iterators, 64-bit keys", kA, Spec::sorted},
    {"physmem_sort", "physmem-sort", "physmem::sort (a tree: by leaves, then merged; else std::sort), 64-bit keys", kA,
     Spec::sorted},
    {"for_each", "segmented", "physmem::for_each (sum)", kNone, Spec::linear},
    {"for_each_n", "segmented", "physmem::for_each_n (xor)", kNone, Spec::linear},
    {"copy_out", "segmented", "physmem::copy a -> vector", kSide, Spec::linear},
    {"copy_in", "segmented", "physmem::copy vector -> a", kA, Spec::linear},
    {"copy_shift", "segmented", "physmem::copy a[3..] -> b (other leaf boundaries)", kB, Spec::shifted},
    {"copy_n", "segmented", "physmem::copy_n a -> b", kB, Spec::linear},
    {"move", "segmented", "physmem::move b -> a", kA, Spec::linear},
    {"fill", "segmented", "physmem::fill", kA, Spec::linear},
    {"fill_n", "segmented", "physmem::fill_n", kA, Spec::linear},
    {"transform", "segmented", "physmem::transform in place (unary)", kA, Spec::linear},
    {"transform_binary", "segmented", "physmem::transform a, b -> a", kA, Spec::linear},
    {"accumulate", "segmented", "physmem::accumulate", kNone, Spec::linear},
    {"reduce", "segmented", "physmem::reduce", kNone, Spec::linear},
    {"transform_reduce", "segmented", "physmem::transform_reduce (unary)", kNone, Spec::linear},
    {"inner_product", "segmented", "physmem::inner_product a, b", kNone, Spec::linear},
    {"find", "segmented", "physmem::find (absent)", kNone, Spec::linear},
    {"find_if", "segmented", "physmem::find_if (absent)", kNone, Spec::linear},
    {"count", "segmented", "physmem::count", kNone, Spec::linear},
    {"count_if", "segmented", "physmem::count_if", kNone, Spec::linear},
    {"equal", "segmented", "physmem::equal a, b (equal)", kNone, Spec::linear},
    {"mismatch", "segmented", "physmem::mismatch a, b (none)", kNone, Spec::linear},
    {"min_element", "segmented", "physmem::min_element", kNone, Spec::linear},
    {"max_element", "segmented", "physmem::max_element", kNone, Spec::linear},
    {"minmax_element", "segmented", "physmem::minmax_element", kNone, Spec::linear},
    {"all_of", "segmented", "physmem::all_of (true)", kNone, Spec::linear},
    {"any_of", "segmented", "physmem::any_of (false)", kNone, Spec::linear},
    {"none_of", "segmented", "physmem::none_of (true)", kNone, Spec::linear},
    {"iota", "segmented", "physmem::iota", kA, Spec::linear},
    {"replace", "segmented", "physmem::replace", kA, Spec::linear},
    {"replace_if", "segmented", "physmem::replace_if", kA, Spec::linear},
    {"generate", "segmented", "physmem::generate", kA, Spec::linear},
    {"ranges_count_if", "segmented", "physmem::count_if(range)", kNone, Spec::linear},
    {"ranges_transform", "segmented", "physmem::transform(range) -> vector", kSide, Spec::linear},
};
constexpr std::size_t kKernels = std::size(kSpecs);

template <class A, class S>
Word call(std::size_t k, Args<A, S>& x) {
    using F = Word (*)(Args<A, S>&);
    static constexpr F fns[] = {
        k_range_for<A, S>,   k_iterator<A, S>,       k_index<A, S>,          k_random<A, S>,
        k_random_floor<A, S>, k_std_sort<A, S>,    k_physmem_sort<A, S>,   k_for_each<A, S>,       k_for_each_n<A, S>,     k_copy_out<A, S>,
        k_copy_in<A, S>,     k_copy_shift<A, S>,     k_copy_n<A, S>,         k_move<A, S>,
        k_fill<A, S>,        k_fill_n<A, S>,         k_transform<A, S>,      k_transform2<A, S>,
        k_accumulate<A, S>,  k_reduce<A, S>,         k_transform_reduce<A, S>, k_inner_product<A, S>,
        k_find<A, S>,        k_find_if<A, S>,        k_count<A, S>,          k_count_if<A, S>,
        k_equal<A, S>,       k_mismatch<A, S>,       k_min_element<A, S>,    k_max_element<A, S>,
        k_minmax_element<A, S>, k_all_of<A, S>,      k_any_of<A, S>,         k_none_of<A, S>,
        k_iota<A, S>,        k_replace<A, S>,        k_replace_if<A, S>,     k_generate<A, S>,
        k_ranges_count_if<A, S>, k_ranges_transform<A, S>,
    };
    static_assert(std::size(fns) == kKernels, "kSpecs and the dispatch table list the same kernels");
    return fns[k](x);
}

// Copies init's [from, from + m) to the same place in `c` (any container: leaf by leaf for the trees).
template <class C>
void restore(C& c, const Ref& init, std::size_t from, std::size_t m) {
    physmem::copy(init.begin() + static_cast<std::ptrdiff_t>(from), init.begin() + static_cast<std::ptrdiff_t>(from + m),
                  c.begin() + static_cast<std::ptrdiff_t>(from));
}

// The measured containers of one kind, made from the Setup.
template <class A>
A make_array(const Setup& s, std::span<Word> mem) {
    if constexpr (std::is_same_v<A, Vec>) {
        return Vec(s.n, SpanAlloc<Word>(mem));
    } else if constexpr (std::is_same_v<A, Tree>) {
        return Tree(s.n, *s.pool);
    } else {
        physmem::PagingOptions o;
        o.budget = s.budget;
        o.dir = s.dir;
        return Paged(s.n, *s.pool, o);
    }
}

template <class A>
class Impl final : public Workload {
  public:
    explicit Impl(const Setup& s)
        : a_(make_array<A>(s, s.a)), b_(make_array<A>(s, s.b)), side_(s.n, SpanAlloc<Word>(s.side)),
          init_(s.n), corrupt_(s.corrupt), n_(s.n), sorted_(std::min(s.work, s.n)), updates_(s.work) {
        for (std::size_t i = 0; i < n_; ++i) init_[i] = init(i);
        if constexpr (!kIsVector) ra_ = rb_ = rside_ = init_;
        restore(a_, init_, 0, n_);
        restore(b_, init_, 0, n_);
        restore(side_, init_, 0, n_);
        for (const Spec& sp : kSpecs) {
            std::uint64_t ops = sp.ops == Spec::linear ? n_ : sp.ops == Spec::shifted ? n_ - std::min(n_, kShift)
                                : sp.ops == Spec::sorted ? sorted_ : updates_;
            kernels_.push_back({sp.name, sp.group, sp.what, ops, sp.ops == Spec::sorted});
        }
    }

    const std::vector<Kernel>& kernels() const override { return kernels_; }

    Word run(std::size_t k) override {
        return run_from(k, ++passes_ * 0x9e3779b97f4a7c15ULL);
    }

    void reset(std::size_t k) override {
        if (kSpecs[k].ops == Spec::sorted) restore(a_, init_, 0, sorted_);
    }

    std::string check(std::size_t k) override {
        restore_dirty();
        if constexpr (std::is_same_v<A, Vec>) {  // the vector is the reference: its pass only
            run_from(k, 0);
            return "";
        }
        Args<Ref, Ref> r{ra_, rb_, rside_, n_, sorted_, updates_, 0, floor_table(rfloor_, rside_.data())};
        Word want = call(k, r);
        Word got = run_from(k, 0);
        if (kernels_[k].name == corrupt_) got ^= 1;  // the test hook (Setup::corrupt)
        ref_dirty_ = kSpecs[k].writes;
        std::string why;
        if (got != want) why = "result " + std::to_string(got) + ", the vector's " + std::to_string(want);
        const char* names[] = {"a", "b", "side"};
        const unsigned bits[] = {kA, kB, kSide};
        for (int j = 0; j < 3; ++j) {
            if (!(kSpecs[k].writes & bits[j])) continue;
            bool same = j == 0 ? same_as(a_, ra_) : j == 1 ? same_as(b_, rb_) : same_as(side_, rside_);
            if (!same) why += std::string(why.empty() ? "" : "; ") + names[j] + " differs from the vector's";
        }
        return why;
    }

    unsigned depth() const override {
        if constexpr (std::is_same_v<A, Tree>) return a_.depth();
        else return 0;
    }
    std::size_t leaf_length() const override {
        if constexpr (std::is_same_v<A, Vec>) return 0;
        else return a_.leaf_length();
    }

  private:
    Word run_from(std::size_t k, Word seed) {
        Args<A, Vec> x{a_, b_, side_, n_, sorted_, updates_, seed, floor_table(floor_, side_.data())};
        dirty_ |= kSpecs[k].writes;
        return call(k, x);
    }
    static Word* const* floor_table(std::vector<Word*>& t, Word* start) {
        if (t.front() != start) std::fill(t.begin(), t.end(), start);
        return t.data();
    }
    template <class C>
    static bool same_as(const C& c, const Ref& r) {
        return physmem::equal(c.begin(), c.end(), r.begin(), r.end());
    }
    // Back to init wherever a pass (measured or reference) wrote.
    void restore_dirty() {
        unsigned d = dirty_ | ref_dirty_;
        if (d & kA) restore(a_, init_, 0, n_);
        if (d & kB) restore(b_, init_, 0, n_);
        if (d & kSide) restore(side_, init_, 0, n_);
        if constexpr (!kIsVector) {
            if (d & kA) ra_ = init_;
            if (d & kB) rb_ = init_;
            if (d & kSide) rside_ = init_;
        }
        dirty_ = ref_dirty_ = 0;
    }

    static constexpr bool kIsVector = std::is_same_v<A, Vec>;  // the reference itself: no copies to check against
    A a_, b_;
    Vec side_;
    Ref init_;              // init(i), what every array starts as
    Ref ra_, rb_, rside_;   // the references (empty for the vector)
    std::string corrupt_;
    std::size_t n_, sorted_, updates_;
    // random_floor's tables (side's and the reference's): every entry the array's start.
    std::vector<Word*> floor_ = std::vector<Word*>(kFloorEntries(n_)), rfloor_ = floor_;
    std::vector<Kernel> kernels_;
    unsigned dirty_ = 0, ref_dirty_ = 0;
    Word passes_ = 0;  // measured passes so far (random_index's seeds)
};

}  // namespace

}  // namespace lab::algorithms
