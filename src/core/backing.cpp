// src/core/backing.cpp — names and sizes of the backing ladder's rungs.
#include "core/backing.hpp"

#include "core/parse.hpp"

namespace physmem {

std::string_view to_string(Backing b) noexcept { return core::rung_name(b); }

std::optional<Backing> parse_backing(std::string_view s) noexcept {
    struct Name { const char* text; Backing rung; };
    static constexpr Name kNames[] = {{"best", Backing::best},   {"auto", Backing::best},
                                      {"1g", Backing::page_1g},  {"2m", Backing::page_2m},
                                      {"thp", Backing::thp},     {"4k", Backing::page_4k}};
    for (const Name& n : kNames)
        if (core::equals_nocase(s, n.text)) return n.rung;
    return std::nullopt;
}

std::size_t page_size_of(Backing b) noexcept {
    switch (b) {
        case Backing::page_1g: return std::size_t{1} << 30;
        case Backing::page_2m:
        case Backing::thp: return std::size_t{2} << 20;
        case Backing::page_4k: return std::size_t{4} << 10;
        case Backing::best: return 0;
    }
    return 0;
}

Backing next_rung(Backing b) noexcept {
    switch (b) {
        case Backing::best: return Backing::page_1g;
        case Backing::page_1g: return Backing::page_2m;
        case Backing::page_2m: return Backing::thp;
        default: return Backing::page_4k;
    }
}

}  // namespace physmem

namespace physmem::core {

const char* rung_name(Backing b) noexcept {
    switch (b) {
        case Backing::best: return "best";
        case Backing::page_1g: return "1g";
        case Backing::page_2m: return "2m";
        case Backing::thp: return "thp";
        case Backing::page_4k: return "4k";
    }
    return "?";
}

}  // namespace physmem::core
