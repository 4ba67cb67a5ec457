// physmem/capability.hpp — capabilities in software (CHERI's model, without hardware): a
// checked handle to a byte range inside one block of a tagged pool (PoolOptions::tags).
//
//   physmem::BlockPool pool({.block_size = 64 << 10, .tags = true});
//   void* b = pool.allocate();
//   auto cap = physmem::Capability::make(pool, b, 4096, physmem::Perm::read_write);
//   cap.store<int>(8, 42);                      // checked: bounds, perms, generation, domain
//   auto ro = cap.narrow(0, 64, physmem::Perm::read);  // narrower: fine
//   ro.store<int>(0, 1);                        // violation: no write permission
//
// Contracts. A capability holds base, length, permissions, the block's generation at
// creation and a pointer to the block's tag word (valid until the pool is destroyed: a
// capability must not outlive its pool). narrow() may shrink the range and drop
// permissions, never grow either: an attempt is a violation. Every load/store/span is
// checked, in this order: permission, bounds, generation (the block was freed, or moved
// by relocate()/compact(), since creation: its generation went up), domain (the thread
// must hold the block's current domain, domain.hpp). load() reads the tag again after
// the read, so a block freed by another thread during the read is reported, never read
// silently. A store that races a free cannot be undone: the check before it is the one
// guarantee. What software cannot stop: a raw pointer kept past a check (span()), and
// code that does not use capabilities.
//
// A violation calls Policy::fatal (the default: "physmem: fatal: capability ..." naming
// the capability, the block and the access, then abort) or throws ProtectionError
// (Policy::throw_error). Hot path: two compares, one atomic load (plain mov on x86) and
// a thread_local mask test, inline; the report is out of line (src/protect/).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "physmem/domain.hpp"
#include "physmem/pool.hpp"

namespace physmem {

enum class Perm : std::uint8_t { none = 0, read = 1, write = 2, read_write = 3 };
constexpr Perm operator&(Perm a, Perm b) noexcept {
    return static_cast<Perm>(static_cast<std::uint8_t>(a) & static_cast<std::uint8_t>(b));
}
constexpr bool includes(Perm have, Perm want) noexcept { return (have & want) == want; }

enum class Policy : std::uint8_t { fatal, throw_error };

enum class Violation : std::uint8_t { bounds, permission, stale, domain, widen, not_live };
const char* to_string(Violation v) noexcept;

class ProtectionError : public std::runtime_error {
  public:
    ProtectionError(Violation v, const std::string& what) : std::runtime_error(what), kind(v) {}
    Violation kind;
};

class Capability {
  public:
    // A capability to [base, base + length) inside the live block of tagged `pool` holding
    // base, with `perms`, the block's current generation. A range leaving the block, a
    // pointer not in a live block, or a pool without tags is a violation (under policy).
    static Capability make(const BlockPool& pool, void* base, std::size_t length, Perm perms,
                           Policy policy = Policy::fatal);
    Capability() = default;  // the null capability: every access is a violation

    // A capability to [offset, offset + length) of this one with perms. Widening (a range
    // outside this one, a permission this one lacks) is a violation.
    Capability narrow(std::size_t offset, std::size_t length, Perm perms) const;
    Capability narrow(Perm perms) const { return narrow(0, length_, perms); }

    // Checked element access at byte offset. T trivially copyable.
    template <class T> T load(std::size_t offset) const {
        check(offset, sizeof(T), Perm::read);
        T v;
        std::memcpy(&v, base_ + offset, sizeof(T));
        recheck(offset, sizeof(T), Perm::read);  // freed during the read: reported
        return v;
    }
    template <class T> void store(std::size_t offset, const T& v) const {
        check(offset, sizeof(T), Perm::write);
        std::memcpy(base_ + offset, &v, sizeof(T));
    }
    // count elements of T from byte offset, checked once (for perms): the span is a raw
    // view, unchecked afterwards — keep it only while the block cannot be freed or moved.
    template <class T> std::span<T> span(std::size_t offset, std::size_t count, Perm perms) const {
        check(offset, count * sizeof(T), perms);
        return {reinterpret_cast<T*>(base_ + offset), count};
    }

    std::byte* base() const noexcept { return base_; }
    std::size_t length() const noexcept { return length_; }
    Perm perms() const noexcept { return perms_; }
    std::uint64_t generation() const noexcept { return generation_; }
    const std::byte* block() const noexcept { return block_; }
    Policy policy() const noexcept { return policy_; }
    // true when the block is still the one captured (not freed nor moved since).
    bool valid() const noexcept {
        return tag_ && BlockTag::unpack(tag_->load(std::memory_order_acquire)).generation == generation_;
    }

  private:
    // The hot path: inline; only a violation leaves it.
    void check(std::size_t offset, std::size_t bytes, Perm want) const {
        if (!includes(perms_, want)) [[unlikely]]
            return violate(Violation::permission, offset, bytes, want);
        if (offset > length_ || bytes > length_ - offset) [[unlikely]]
            return violate(Violation::bounds, offset, bytes, want);
        recheck(offset, bytes, want);
    }
    void recheck(std::size_t offset, std::size_t bytes, Perm want) const {
        if (!tag_) [[unlikely]]
            return violate(Violation::stale, offset, bytes, want);
        std::uint64_t w = tag_->load(std::memory_order_acquire);
        if ((w >> BlockTag::kDomainBits) != generation_) [[unlikely]]
            return violate(Violation::stale, offset, bytes, want);
        if (!(held_domains() >> (w & BlockTag::kDomainMask) & 1)) [[unlikely]]
            return violate(Violation::domain, offset, bytes, want);
    }
    // Reports (fatal, or throws ProtectionError) naming this capability and the access.
    [[gnu::cold]] void violate(Violation v, std::size_t offset, std::size_t bytes, Perm want) const;

    std::byte* base_ = nullptr;
    std::size_t length_ = 0;
    const std::atomic<std::uint64_t>* tag_ = nullptr;
    const std::byte* block_ = nullptr;
    std::uint64_t generation_ = 0;
    Perm perms_ = Perm::none;
    Policy policy_ = Policy::fatal;
};

}  // namespace physmem
