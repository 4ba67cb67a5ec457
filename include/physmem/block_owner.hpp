// physmem/block_owner.hpp — the owner protocol: how a structure lets the pool move its blocks.
//
// A block allocated with an owner (BlockPool::allocate(owner, cookie)) is movable: the
// pool records (owner, cookie) beside the block and, when it wants the block elsewhere
// (BlockPool::compact, BlockPool::relocate), it takes a fresh block `to` and calls
//
//     owner->relocate(cookie, from, to)
//
// The owner must then, before returning true:
//   1. transfer the contents of `from` into `to` (copy the bytes, or move-construct the
//      objects that live there and destroy the originals: the pool copies nothing), and
//   2. replace its one reference to `from` by `to` (the parent slot, the root field...).
// It returns false when `cookie` does not lead to `from` (the structure lost track of
// the block): the pool then aborts with a message naming the block, the owner and the
// cookie, rather than leave a dangling reference. After a true return the pool frees
// `from` (it must no longer be referenced) and the block keeps (owner, cookie).
//
// Rules for relocate: noexcept; it must not call into the pool (the pool's lock is
// held) nor throw; it runs on the thread that called compact()/relocate(). The pool
// calls it only while compact()'s concurrency contract holds (see pool.hpp): the
// structure is not being modified by anyone else. A block allocated without an owner
// (allocate()) is pinned: it never moves. BlockPool::set_owner changes a live block's
// (owner, cookie) — e.g. when the owning object itself moves to another address.
//
// The cookie is the owner's to choose; it should stay valid while the structure
// changes elsewhere. TreeArray uses (level, index in level), which a new root on top
// does not change, so its relocate is an O(depth) walk to the parent slot.
#pragma once

#include <cstdint>

namespace physmem {

class BlockOwner {
  public:
    // Move the block `from` to `to` (see above). pre: `to` is a fresh block of the same
    // pool and size, not referenced by anything. true on success.
    virtual bool relocate(std::uintptr_t cookie, void* from, void* to) noexcept = 0;

  protected:
    BlockOwner() = default;
    BlockOwner(const BlockOwner&) = default;
    BlockOwner& operator=(const BlockOwner&) = default;
    ~BlockOwner() = default;  // not deleted through this interface
};

}  // namespace physmem
