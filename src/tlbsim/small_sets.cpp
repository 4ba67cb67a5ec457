// src/tlbsim/small_sets.cpp — SmallSets' construction and flush (lookup and insert, the hot
// paths, are inline in the header).
#include "tlbsim/small_sets.hpp"

#include <algorithm>
#include <stdexcept>

namespace physmem::tlbsim {

namespace {

// Words from p to the next 64-byte boundary (0 when p is on one).
std::size_t words_to_line(const std::uint64_t* p) noexcept {
    return (64 - reinterpret_cast<std::uintptr_t>(p) % 64) % 64 / sizeof *p;
}

}  // namespace

SmallSets::SmallSets(unsigned sets, unsigned ways) : index_(sets), ways_(ways) {
    if (sets == 0 || ways == 0 || ways > kMaxWays) throw std::invalid_argument("SmallSets: 1 to 16 ways, 1 or more sets");
    fp_words_ = (ways + 7) / 8;
    meta_stride_ = fp_words_ == 1 ? 2 : 4;
    used_ = ways == 16 ? ~std::uint64_t{0} : (std::uint64_t{1} << (4 * ways)) - 1;
    constexpr std::size_t kLineWords = 8;
    meta_words_.resize(std::size_t{sets} * meta_stride_ + kLineWords);
    key_words_.resize(std::size_t{sets} * ways_ + kLineWords);
    meta_ = meta_words_.data() + words_to_line(meta_words_.data());
    keys_ = key_words_.data() + words_to_line(key_words_.data());
    flush();
}

void SmallSets::flush() noexcept {
    std::uint64_t order = ~used_;  // unused nibbles 0xF
    for (unsigned p = 0; p < ways_; ++p) order |= std::uint64_t{p} << (4 * p);
    std::fill(meta_words_.begin(), meta_words_.end(), 0);
    for (unsigned set = 0; set < index_.sets(); ++set) meta_[std::size_t{set} * meta_stride_] = order;
    std::fill(key_words_.begin(), key_words_.end(), kEmpty);
}

}  // namespace physmem::tlbsim
