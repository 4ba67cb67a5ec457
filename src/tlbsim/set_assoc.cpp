// src/tlbsim/set_assoc.cpp — SetAssoc's construction: which kind of sets an array gets.
#include "tlbsim/set_assoc.hpp"

#include <stdexcept>

namespace physmem::tlbsim {

SetAssoc::SetAssoc(unsigned entries, unsigned ways) {
    if (ways == 0) ways = entries;
    if (entries == 0 || entries % ways != 0 || ways >= 0xFFFF)
        throw std::invalid_argument("set-associative array: entries must be a positive multiple of ways");
    if (ways <= SmallSets::kMaxWays) {
        small_ = SmallSets(entries / ways, ways);
        kind_ = ways == 4 ? Kind::small4 : ways == 8 ? Kind::small8 : ways == 12 ? Kind::small12 : ways == 16 ? Kind::small16 : Kind::small;
    } else {
        wide_ = WideSets(entries / ways, ways);
        kind_ = Kind::wide;
    }
}

}  // namespace physmem::tlbsim
