// src/pool/page_filler.hpp — pages sorted by how full they are, fullest first.
//
// TCMalloc's HugePageFiller idea: allocate from the fullest page that has room, so that
// pages fill up and the others drain and can be given back. Lists (core/intrusive_list.hpp):
//   1..32   partly used resident pages, by bit_width(free blocks): list 1 = one free
//   kEmpty  resident pages without a live block, the most recently emptied first
//   kPopulated resident pages no block has used since they were mapped (a prefaulted or
//           locked region's): given back only when asked (release), never on a timer
//   kUnbacked pages never touched or given back (all free, read as zero)
// Full pages are on no list. best() is a count-trailing-zeros over a bit mask.
#pragma once

#include <bit>
#include <cstdint>

#include "core/intrusive_list.hpp"
#include "slab.hpp"

namespace physmem {

class BlockPool::Filler {
  public:
    static constexpr int kEmpty = 33;
    static constexpr int kPopulated = 34;
    static constexpr int kUnbacked = 35;
    static constexpr int kLists = 36;

    // The list a page belongs on from its counts; -1 when full.
    static int list_for(const Page& p) noexcept {
        if (p.live == p.count) return -1;
        if (!p.resident) return kUnbacked;
        if (p.live == 0) return p.bumped ? kEmpty : kPopulated;  // bumped: a block was taken since mapping
        return std::bit_width(p.free_blocks());
    }
    // Moves p to the list its counts say (front), unless it is already there.
    void place(Page* p) noexcept {
        int want = list_for(*p);
        if (want == p->list) return;
        unlink(p);
        if (want >= 0) push_front(want, p);
    }
    // Appends a fresh page at the back of its list (regions' pages in address order).
    void add_back(Page* p) noexcept {
        int list = list_for(*p);
        if (list < 0) return;
        p->list = list;
        lists_[list].push_back(p);
        nonempty_ |= std::uint64_t{1} << list;
    }
    void unlink(Page* p) noexcept {
        if (p->list < 0) return;
        lists_[p->list].remove(p);
        if (lists_[p->list].empty()) nonempty_ &= ~(std::uint64_t{1} << p->list);
        p->list = -1;
    }
    // Where the next block goes: the fullest page with room, then the most recently
    // emptied, then populated, then untouched memory. nullptr when every page is full.
    Page* best() const noexcept {
        std::uint64_t m = nonempty_;
        return m ? lists_[std::countr_zero(m)].front() : nullptr;
    }
    // The page empty for longest, or nullptr.
    Page* oldest_empty() const noexcept { return lists_[kEmpty].back(); }
    // A resident page no block has used, or nullptr.
    Page* populated() const noexcept { return lists_[kPopulated].back(); }

  private:
    void push_front(int list, Page* p) noexcept {
        p->list = list;
        lists_[list].push_front(p);
        nonempty_ |= std::uint64_t{1} << list;
    }

    core::IntrusiveList<Page> lists_[kLists];
    std::uint64_t nonempty_ = 0;  // bit l: list l has a page
};

}  // namespace physmem
