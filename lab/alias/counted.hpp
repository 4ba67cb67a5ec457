// lab/alias/counted.hpp — seed 002's evidence where the machine has it: CPU cycles and
// the 4K-alias event (Intel LD_BLOCKS_PARTIAL.ADDRESS_ALIAS) around one region.
//
// Both are hardware events: on a machine without a PMU (many VMs) or a CPU
// without the alias event they are unavailable, count() gives nullopt for them and
// availability() says why. Not thread-safe: use from the thread that created it.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "port/counters.hpp"

namespace lab::alias {

class AliasCounters {
  public:
    struct Delta {
        std::optional<double> cycles, alias;   // per op, nullopt when not counted
    };

    bool any() const noexcept { return c_.available(Event::cycles) || c_.available(Event::address_alias); }

    // Runs f once and returns each event's count over it divided by ops. pre: ops > 0.
    template <class F>
    Delta count(double ops, F&& f) const {
        auto a = c_.read();
        f();
        auto b = c_.read();
        return {per(a, b, Event::cycles, ops), per(a, b, Event::address_alias, ops)};
    }

    // {"cycles": {"available", "reason"}, "address_alias": {...}}.
    nlohmann::ordered_json availability() const {
        nlohmann::ordered_json j;
        for (Event e : {Event::cycles, Event::address_alias})
            j[std::string(physmem::to_string(e))] = {{"available", c_.available(e)},
                                                     {"reason", c_.unavailable_reason(e)}};
        return j;
    }

    // A Delta field as JSON (null when not counted).
    static nlohmann::ordered_json json(const std::optional<double>& v) {
        return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
    }

  private:
    using Event = physmem::Event;
    using Values = physmem::EventCounters::Values;

    static std::optional<double> per(const Values& a, const Values& b, Event e, double ops) {
        auto i = static_cast<std::size_t>(e);
        if (!a[i] || !b[i]) return std::nullopt;
        return static_cast<double>(*b[i] - *a[i]) / ops;
    }

    physmem::EventCounters c_;
};

}  // namespace lab::alias
