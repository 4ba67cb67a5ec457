// src/protect/capability.cpp — creating and narrowing capabilities, and the one report
// of a violation (capability.hpp).
#include "physmem/capability.hpp"

#include <cinttypes>
#include <cstdio>

#include "core/fatal.hpp"

namespace physmem {

const char* to_string(Violation v) noexcept {
    switch (v) {
        case Violation::bounds: return "out of bounds";
        case Violation::permission: return "permission denied";
        case Violation::stale: return "stale generation (block freed or moved)";
        case Violation::domain: return "domain not held by this thread";
        case Violation::widen: return "widening refused";
        case Violation::not_live: return "not a live block of a tagged pool";
    }
    return "?";
}

namespace {

const char* perm_name(Perm p) noexcept {
    static const char* names[] = {"-", "r", "w", "rw"};
    return names[static_cast<unsigned>(p) & 3];
}

}  // namespace

void Capability::violate(Violation v, std::size_t offset, std::size_t bytes, Perm want) const {
    char msg[400];
    std::uint64_t now = tag_ ? tag_->load() : 0;
    std::snprintf(msg, sizeof msg,
                  "capability %s: capability {base %p, length %zu, perms %s, generation %" PRIu64
                  "} block %p (now generation %" PRIu64 ", domain %u; thread holds %#" PRIx64
                  "): %s of %zu bytes at offset %zu",
                  to_string(v), static_cast<void*>(base_), length_, perm_name(perms_), generation_,
                  static_cast<const void*>(block_), now >> BlockTag::kDomainBits,
                  static_cast<unsigned>(now & BlockTag::kDomainMask), held_domains(), perm_name(want),
                  bytes, offset);
    if (policy_ == Policy::throw_error) throw ProtectionError(v, msg);
    core::fatal("%s", msg);
}

Capability Capability::make(const BlockPool& pool, void* base, std::size_t length, Perm perms, Policy policy) {
    Capability c;
    c.base_ = static_cast<std::byte*>(base);
    c.length_ = length;
    c.perms_ = perms;
    c.policy_ = policy;
    std::byte* start = nullptr;
    c.tag_ = pool.tag_word(base, &start);
    if (!c.tag_) c.violate(Violation::not_live, 0, length, perms);
    c.block_ = start;
    c.generation_ = c.tag_->load(std::memory_order_acquire) >> BlockTag::kDomainBits;
    if (length > pool.block_size() - static_cast<std::size_t>(c.base_ - start))
        c.violate(Violation::bounds, 0, length, perms);
    return c;
}

Capability Capability::narrow(std::size_t offset, std::size_t length, Perm perms) const {
    if (!includes(perms_, perms) || offset > length_ || length > length_ - offset)
        violate(Violation::widen, offset, length, perms);
    Capability c = *this;
    c.base_ = base_ + offset;
    c.length_ = length;
    c.perms_ = perms;
    return c;
}

}  // namespace physmem
