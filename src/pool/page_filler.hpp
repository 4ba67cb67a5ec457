// src/pool/page_filler.hpp — pages sorted by how full they are, fullest first.
//
// TCMalloc's HugePageFiller idea: allocate from the fullest page that has room, so that
// pages fill up and the others drain and can be given back. The lists and the search are
// the core's (core/bucketed_lists.hpp, shared with the malloc's filler); this file says
// which list a page belongs on:
//   1..32   partly used resident pages, by bit_width(free blocks): list 1 = one free
//   kEmpty  resident pages without a live block, the most recently emptied first
//   kPopulated resident pages no block has used since they were mapped (a prefaulted or
//           locked region's): given back only when asked (release), never on a timer
//   kUnbacked pages never touched or given back (all free, read as zero)
// Full pages are on no list. best() is a count-trailing-zeros over the non-empty mask.
#pragma once

#include <bit>
#include <cstdint>

#include "core/bucketed_lists.hpp"
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
        lists_.push_back(static_cast<unsigned>(list), p);
    }
    void unlink(Page* p) noexcept {
        if (p->list < 0) return;
        lists_.remove(static_cast<unsigned>(p->list), p);
        p->list = -1;
    }
    // Where the next block goes: the fullest page with room, then the most recently
    // emptied, then populated, then untouched memory. nullptr when every page is full.
    Page* best() const noexcept { return lists_.first_front_at_or_above(0); }
    // The page empty for longest, or nullptr.
    Page* oldest_empty() const noexcept { return lists_.back(kEmpty); }
    // A resident page no block has used, or nullptr.
    Page* populated() const noexcept { return lists_.back(kPopulated); }

  private:
    void push_front(int list, Page* p) noexcept {
        p->list = list;
        lists_.push_front(static_cast<unsigned>(list), p);
    }

    core::BucketedLists<Page, kLists> lists_;  // the shared filler core
};

}  // namespace physmem
