// src/tlbsim/small_sets.cpp — SmallSets' construction and flush (lookup and insert, the hot
// paths, are inline in the header).
#include "tlbsim/small_sets.hpp"

#include <algorithm>
#include <stdexcept>

namespace physmem::tlbsim {

SmallSets::SmallSets(unsigned sets, unsigned ways) : index_(sets), ways_(ways) {
    if (sets == 0 || ways == 0 || ways > kMaxWays) throw std::invalid_argument("SmallSets: 1 to 16 ways, 1 or more sets");
    fp_words_ = (ways + 7) / 8;
    stride_ = 1 + fp_words_ + ways;
    used_ = ways == 16 ? ~std::uint64_t{0} : (std::uint64_t{1} << (4 * ways)) - 1;
    for (unsigned w = 0; w < ways; ++w) fp_ways_[w / 8] |= std::uint64_t{0x80} << (8 * (w % 8));
    words_.resize(std::size_t{sets} * stride_);
    flush();
}

void SmallSets::flush() noexcept {
    std::uint64_t order = ~used_;  // unused nibbles 0xF
    for (unsigned p = 0; p < ways_; ++p) order |= std::uint64_t{p} << (4 * p);
    for (std::size_t at = 0; at < words_.size(); at += stride_) {
        words_[at] = order;
        std::fill_n(&words_[at + 1], fp_words_, 0);
        std::fill_n(&words_[at + 1 + fp_words_], ways_, kEmpty);
    }
}

}  // namespace physmem::tlbsim
