// src/tlbsim/set_assoc.hpp — one set-associative array of keys with true LRU replacement: the
// building block of every TLB array, paging-structure cache and data cache the simulator
// models. sets = entries / ways, any count (set = the key's low 32 bits mod sets). Sets of up
// to 16 ways (set-associative TLBs, walk caches, data caches) are SmallSets; wider ones (fully
// associative L1 TLBs, 24-way L2 TLBs) WideSets. The choice is made once, at construction;
// each access pays one predictable switch for it, which also hands SmallSets the common way
// counts (4, 8, 12, 16) as constants.
#pragma once

#include <cstdint>
#include <type_traits>

#include "tlbsim/small_sets.hpp"
#include "tlbsim/wide_sets.hpp"

namespace physmem::tlbsim {

class SetAssoc {
    enum class Kind : std::uint8_t { none, small, small4, small8, small12, small16, wide };
    template <unsigned W>
    using Ways = std::integral_constant<unsigned, W>;
    // small(Ways<W>{}) for SmallSets (W = 0: a count without its own case), else wide().
    // pre: !empty().
    template <class Small, class Wide>
    decltype(auto) dispatch(Small small, Wide wide) {
        if (kind_ == Kind::wide) return wide();
        switch (kind_) {
            case Kind::small4: return small(Ways<4>{});
            case Kind::small8: return small(Ways<8>{});
            case Kind::small12: return small(Ways<12>{});
            case Kind::small16: return small(Ways<16>{});
            default: return small(Ways<0>{});
        }
    }

  public:
    SetAssoc() = default;
    // pre: entries >= 1; ways == 0 (fully associative) or entries % ways == 0; ways < 0xFFFF.
    // Throws std::invalid_argument otherwise.
    SetAssoc(unsigned entries, unsigned ways);

    bool empty() const noexcept { return kind_ == Kind::none; }

    // Where lookup found a key's set, for the insert after a miss (SmallSets only; WideSets
    // find their set again, which costs them little).
    using Hint = SmallSets::Hint;

    // true on a hit (the entry becomes the most recently used); false on a miss, nothing changed.
    bool lookup(std::uint64_t key) noexcept {
        return dispatch([&](auto w) { return small_.lookup<w>(key); }, [&] { return wide_.lookup(key); });
    }
    // lookup that also fills h for insert(key, h).
    bool lookup(std::uint64_t key, Hint& h) noexcept {
        return dispatch([&](auto w) { return small_.lookup<w>(key, h); }, [&] { return wide_.lookup(key); });
    }
    // Makes `key` present and most recently used, evicting the set's least recently used
    // entry when full. pre: key != kEmpty and key is not present (a lookup just missed).
    void insert(std::uint64_t key) noexcept {
        dispatch([&](auto w) { small_.insert<w>(key); }, [&] { wide_.insert(key); });
    }
    // insert, with h from lookup(key, h) on this array (nothing flushed between).
    void insert(std::uint64_t key, const Hint& h) noexcept {
        dispatch([&](auto w) { small_.insert<w>(key, h); }, [&] { wide_.insert(key); });
    }
    // lookup(key) || (insert(key), false).
    bool access(std::uint64_t key) noexcept {
        return dispatch([&](auto w) { return small_.access<w>(key); }, [&] { return wide_.access(key); });
    }
    // Forgets every entry.
    void flush() noexcept {
        if (kind_ == Kind::wide) wide_.flush();
        else if (kind_ != Kind::none) small_.flush();
    }

    // The array itself, for code that knows its kind (e.g. the simulator's paths compiled
    // for one machine shape, which skip the dispatch above). pre: is_wide() for wide_sets(),
    // !empty() && !is_wide() for small_sets().
    bool is_wide() const noexcept { return kind_ == Kind::wide; }
    SmallSets& small_sets() noexcept { return small_; }
    WideSets& wide_sets() noexcept { return wide_; }
    const WideSets& wide_sets() const noexcept { return wide_; }

    static constexpr std::uint64_t kEmpty = SmallSets::kEmpty;

  private:
    Kind kind_ = Kind::none;
    SmallSets small_;
    WideSets wide_;
};

}  // namespace physmem::tlbsim
