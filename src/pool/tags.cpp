// src/pool/tags.cpp — block tags (PoolOptions::tags): reading a block's domain and
// generation, setting its domain, and what every tag change does besides (the epoch, the
// watched words of checked structures). Writers hold the pool's lock; checked handles read
// the words lock-free (capability.hpp). Bumping on free and move is in slab.hpp.
#include <atomic>
#include <mutex>

#include "core/fatal.hpp"
#include "physmem/pool.hpp"
#include "slab.hpp"

namespace physmem {

const std::atomic<std::uint64_t>* BlockPool::tag_word(const void* p, std::byte** start) const noexcept {
    if (!options_.tags) return nullptr;
    std::lock_guard<std::mutex> guard(mutex_);
    Slab* s = find_slab(p);
    if (!s) return nullptr;
    std::size_t i = s->index_of(p, block_shift_);
    if (i >= s->blocks || !s->test(i)) return nullptr;
    if (start) *start = s->block(i, block_shift_);
    return &s->tags[i];
}

std::optional<BlockTag> BlockPool::tag(const void* p) const noexcept {
    const std::atomic<std::uint64_t>* w = tag_word(p, nullptr);
    if (!w) return std::nullopt;
    return BlockTag::unpack(w->load(std::memory_order_acquire));
}

void BlockPool::set_domain(void* p, std::uint32_t domain) noexcept {
    if (!options_.tags) core::fatal("BlockPool::set_domain(%p): the pool keeps no tags (PoolOptions::tags)", p);
    if (domain > BlockTag::kDomainMask) core::fatal("BlockPool::set_domain(%p): domain %u is not below 64", p, domain);
    std::lock_guard<std::mutex> guard(mutex_);
    Slab* s;
    std::size_t i = index_checked(s, p, "set_domain");
    s->set_tag_domain(i, domain);
    tags_changed_locked({s->block(i, block_shift_), nullptr, s->owner[i], s->cookie[i], true});
}

void BlockPool::tags_changed_locked(const TagChange& c) noexcept {
    tag_epoch_.fetch_add(1, std::memory_order_seq_cst);
    for (TagWatch* w = watchers_; w; w = w->next) {
        if (w->word) std::atomic_ref(*w->word).store(0, std::memory_order_seq_cst);
        if (w->changed) w->changed(*w, c);
    }
}

void BlockPool::watch_tags(TagWatch& w) noexcept {
    std::lock_guard<std::mutex> guard(mutex_);
    w.prev = nullptr;
    w.next = watchers_;
    if (watchers_) watchers_->prev = &w;
    watchers_ = &w;
}

void BlockPool::unwatch_tags(TagWatch& w) noexcept {
    std::lock_guard<std::mutex> guard(mutex_);
    (w.prev ? w.prev->next : watchers_) = w.next;
    if (w.next) w.next->prev = w.prev;
    w.prev = w.next = nullptr;
}

std::size_t BlockPool::tag_bytes() const noexcept {
    if (!options_.tags) return 0;
    std::lock_guard<std::mutex> guard(mutex_);
    std::size_t n = retired_tag_bytes_;
    for (const Slab* s : slabs_) n += s->blocks * sizeof(std::uint64_t);
    return n;
}

}  // namespace physmem
