// src/pool/backing.cpp — names and sizes of the backing ladder's rungs.
#include "physmem/backing.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace physmem {

std::string_view to_string(Backing b) noexcept {
    switch (b) {
        case Backing::best: return "best";
        case Backing::page_1g: return "1g";
        case Backing::page_2m: return "2m";
        case Backing::thp: return "thp";
        case Backing::page_4k: return "4k";
    }
    return "?";
}

std::optional<Backing> parse_backing(std::string_view s) noexcept {
    std::string l(s);
    std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
    if (l == "best" || l == "auto") return Backing::best;
    if (l == "1g") return Backing::page_1g;
    if (l == "2m") return Backing::page_2m;
    if (l == "thp") return Backing::thp;
    if (l == "4k") return Backing::page_4k;
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
