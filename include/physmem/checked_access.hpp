// physmem/checked_access.hpp — what the checked containers (checked_tree_array.hpp,
// checked_paged_array.hpp) share: the report of a violation (what it names, and the
// out-of-line call that makes it: src/protect/checked_array.cpp) and the hot checks'
// reads of tag words and domains.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "physmem/capability.hpp"
#include "physmem/domain.hpp"
#include "physmem/pool.hpp"

namespace physmem::detail {

// The word of "no leaf" (end and out-of-range iterator positions): never equals a seen word.
inline const std::atomic<std::uint64_t> no_leaf_word{~std::uint64_t{0}};

// What a checked-array report names (src/protect/checked_array.cpp).
struct CheckedAccess {
    const char* name;        // the array's name, or null when it may be gone (iterator)
    const void* array;
    Policy policy;
    const char* access;      // "operator[]", "iterator *", ...
    std::size_t index;
    std::size_t size;        // ~0: unknown (the array may be gone)
    std::size_t leaf;
    const void* block;       // the leaf, or null
    std::uint64_t seen;      // tag word seen at the last check
    std::uint64_t now;       // tag word now
};
[[noreturn, gnu::cold]] void checked_violation(Violation v, const CheckedAccess& a);

// The hot checks' read of a tag word (peek_word) or of a field other threads may update
// (peek): one plain 8-byte load (the READ_ONCE idiom: a volatile read of the aligned word,
// which compilers keep as one mov). An atomic load,
// even relaxed, is a compiler barrier in GCC: a loop's iterator or array fields in memory
// would be reloaded after each check (measured 1.6-2x on an iterator loop). The writers
// (the pool, under its lock) store atomically; the out-of-line paths read atomically.
inline std::uint64_t peek_word(const std::atomic<std::uint64_t>* w) noexcept {
    static_assert(sizeof(std::atomic<std::uint64_t>) == 8 && std::atomic<std::uint64_t>::is_always_lock_free);
    return *reinterpret_cast<const volatile std::uint64_t*>(w);
}
// The hot checks as one compare with memory (x86-64 with GCC/Clang flag outputs): GCC keeps a
// volatile load a load of its own, a mov before the cmp, one more op an access. Each is a
// volatile asm, so it is neither merged nor hoisted out of a loop, as the volatile read is
// not. No load is ordered after one (below orders its `dependent` only where the limit is a
// load of its own): its callers need no order (CheckedTreeArray's element(): its entry
// races benignly with arming).
#if defined(__x86_64__) && defined(__GCC_ASM_FLAG_OUTPUTS__)
#define PHYSMEM_CHECK_CMP_MEMORY 1
#else
#define PHYSMEM_CHECK_CMP_MEMORY 0
#endif
// Whether tag word w still holds `seen` (peek_word(w) == seen).
inline bool word_is(const std::atomic<std::uint64_t>* w, std::uint64_t seen) noexcept {
#if PHYSMEM_CHECK_CMP_MEMORY
    bool same;
    asm volatile("cmpq %[seen], %[word]"
                 : "=@cce"(same)
                 : [word] "m"(*reinterpret_cast<const std::uint64_t*>(w)), [seen] "r"(seen));
    return same;
#else
    return peek_word(w) == seen;
#endif
}
template <class U>
U peek(const U& v) noexcept {
    return *static_cast<const volatile U*>(&v);
}

// On a checked access's out-of-line check, whose only effects a caller can see are its
// result and a violation report (what else it stores re-arms a fast path, see
// CheckedTreeArray::element_pure): GCC's pure, so a caller's loop keeps the array's
// fields in registers across it. GCC keeps a pure call
// that may throw (the throw_error policy) as a throwing call; Clang assumes a pure
// function never throws, so there it is an ordinary call.
#if defined(__GNUC__) && !defined(__clang__)
#define PHYSMEM_CHECK_PURE [[gnu::pure]]
#else
#define PHYSMEM_CHECK_PURE
#endif

// Makes v depend on `on` for the hardware (no instruction): a load whose address is computed
// from v is not performed before the load that read `on` (address dependency, as the Linux
// kernel's READ_ONCE/rcu_dereference orders loads), where an acquire load would be a
// compiler barrier too.
template <class U, class V>
void depend_on(U& v, const V& on) noexcept {
    asm("" : "+r"(v) : "r"(on));
}

// Whether i < limit, limit read as peek(limit) would. Where that read is a load of its own,
// `dependent` (a value later loads are computed from) is made to depend on it (depend_on);
// with the compare with memory nothing is ordered after it.
template <class U>
bool below(std::uint64_t i, const std::uint64_t& limit, U& dependent) noexcept {
#if PHYSMEM_CHECK_CMP_MEMORY
    bool yes;
    asm volatile("cmpq %[limit], %[i]" : "=@ccb"(yes) : [limit] "m"(limit), [i] "r"(i));
    (void)dependent;
    return yes;
#else
    const std::uint64_t l = peek(limit);
    depend_on(dependent, l);
    return i < l;
#endif
}

// Whether the calling thread holds the domain in tag word w's low bits.
inline bool domain_held(std::uint64_t w) noexcept { return held_domains() >> (w & BlockTag::kDomainMask) & 1; }

}  // namespace physmem::detail
