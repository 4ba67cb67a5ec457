// physmem/pinned.hpp — a PagedArray that fits its budget, read and written as a tree for
// the length of one call: every leaf pinned, and the call given a walk over the frames.
//
//   physmem::with_pinned(labels, [&](auto&& l) {   // l: a view, or labels itself
//       for (auto [u, v] : edges) if (l[v] < l[u]) l[u] = l[v];
//   });
//
// PagedArray::operator[] pays, on every access, a load of its table's address, a test of
// the entry's tags and a walk whose slow path is a call (so a loop keeps little in
// registers); a view of pinned frames pays none of them: nothing can leave memory while
// it lives.
//
// Contract of with_pinned(a, f):
// - When a's budget holds every leaf (budget() >= leaf_count() leaves), the leaves that
//   are out are read in, every leaf is pinned, and f gets a FixedDepthView (fixed_depth.hpp;
//   of const T for a const array) over their frames: of depth 1 when a has one leaf
//   (v[i] is one load, as a span's), else of depth 2 over a table of the frames (one load
//   from the table, one of the element: TreeArray's walk of a two-level tree). Otherwise
//   (the budget is smaller, or other pins hold the frames) f gets a itself and the array
//   pages as usual. f is instantiated for each and must return one type.
// - The view's references are valid until f returns. Writes through it are kept: a
//   non-const array's leaves are all marked written when f returns or throws.
// - While f runs, a's own accesses are allowed (its leaves stay where they are); flush(),
//   set_budget() and the pool's compact() on a are not (they would write back, evict or
//   move a leaf under the view's writes).
// - Errors: PagingError when a leaf cannot be read, std::bad_alloc for the table; nothing
//   stays pinned after a throw.
// - Threads: as PagedArray's — a non-const array to itself; a const one may be read by
//   other threads meanwhile (get(), the const segment algorithms).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "physmem/fixed_depth.hpp"
#include "physmem/paged_array.hpp"

namespace physmem {

namespace detail {
// Every leaf of a pager pinned (pin_window, 8 at a time) for the object's life, their
// table entries (the frame less k leaves of elements, as the pager's own table holds
// them) in a table of a power-of-two length; unpinned — marked written when `write` —
// on destruction. ok() false when the frames ran out (the pins taken are released then).
class EveryLeafPinned {
  public:
    EveryLeafPinned(Pager& p, TreeShape shape, std::size_t elem_bytes, bool write)
        : p_(p), write_(write), entries_(std::bit_ceil(std::max<std::size_t>(p.leaves(), 1)), nullptr) {
        constexpr std::size_t kBatch = 8;
        void* frames[kBatch];
        const std::size_t leaf_bytes = shape.leaf_len() * elem_bytes;
        while (pinned_ < p.leaves()) {
            const std::size_t want = std::min(kBatch, p.leaves() - pinned_);
            std::size_t got = 0;
            try {
                got = p.pin_window(pinned_, want, frames);  // on a throw, none of this window stays pinned
            } catch (const PagingError&) {
                release();  // a constructor that throws is not destroyed
                throw;
            } catch (const std::runtime_error&) {  // every frame pinned (by other pins): no room
                release();
                return;
            } catch (...) {
                release();
                throw;
            }
            for (std::size_t c = 0; c < got; ++c) {
                const std::size_t k = pinned_ + c;
                entries_[k] = static_cast<char*>(frames[c]) - k * leaf_bytes;
            }
            pinned_ += got;
            if (got < want) {  // the frames ran out: no room for the rest
                release();
                return;
            }
        }
        shape_ = shape;
        shape_.fan_shift = static_cast<unsigned>(std::countr_zero(entries_.size()));
    }
    EveryLeafPinned(const EveryLeafPinned&) = delete;
    EveryLeafPinned& operator=(const EveryLeafPinned&) = delete;
    ~EveryLeafPinned() { release(); }

    bool ok() const noexcept { return ok_ && pinned_ > 0 && pinned_ == p_.leaves(); }
    // What FixedDepthView's constructor reads: the root of a tree of depth 1 (the one
    // leaf's entry) or 2 (the table of entries), and the shape.
    void* root(unsigned depth) const noexcept {
        return depth == 1 ? entries_[0] : const_cast<void**>(entries_.data());
    }
    const TreeShape& shape() const noexcept { return shape_; }

  private:
    void release() noexcept {
        if (pinned_) p_.unpin_window(0, pinned_, write_ && ok_ ? pinned_ : 0);
        pinned_ = 0, ok_ = false;
    }

    Pager& p_;
    bool write_;
    bool ok_ = true;
    std::size_t pinned_ = 0;
    std::vector<void*> entries_;
    TreeShape shape_{};
};

// FixedDepthView's source: the pinned leaves as a tree of depth D, and the array's size.
template <unsigned D>
struct PinnedSource {
    const EveryLeafPinned& leaves;
    std::size_t n;
    void* root() const noexcept { return leaves.root(D); }
    std::size_t size() const noexcept { return n; }
    const TreeShape& shape() const noexcept { return leaves.shape(); }
};

template <class A, class F>
decltype(auto) with_pinned(A& a, F&& f) {
    using V = typename std::remove_const_t<A>::value_type;
    using T = std::conditional_t<std::is_const_v<A>, const V, V>;
    if (a.leaf_count() > 0 && a.budget() >= a.leaf_count() * a.pager().leaf_bytes()) {
        EveryLeafPinned pins(a.pager(), a.shape(), sizeof(V), !std::is_const_v<A>);
        if (pins.ok()) {
            if (a.leaf_count() == 1) {
                const PinnedSource<1> one{pins, a.size()};
                return f(FixedDepthView<T, 1>(one));
            }
            const PinnedSource<2> two{pins, a.size()};
            return f(FixedDepthView<T, 2>(two));
        }
    }
    return f(a);
}
}  // namespace detail

// The contract above.
template <class T, class F>
decltype(auto) with_pinned(PagedArray<T>& a, F&& f) {
    return detail::with_pinned(a, std::forward<F>(f));
}
template <class T, class F>
decltype(auto) with_pinned(const PagedArray<T>& a, F&& f) {
    return detail::with_pinned(a, std::forward<F>(f));
}

}  // namespace physmem
