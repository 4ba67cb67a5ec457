// src/tlbsim/what_if.cpp — sizes as text, hypothetical page sizes, the tree over blocks.
#include "physmem/tlbsim/what_if.hpp"

#include <bit>
#include <cctype>
#include <stdexcept>

namespace physmem::tlbsim {

std::uint64_t parse_size(std::string_view text) {
    std::size_t i = 0;
    std::uint64_t n = 0;
    std::string bad = "'";  // appended, not concatenated: GCC 12 warns (-Wrestrict) on a + chain here
    bad.append(text).append("' is not a size (bytes, or with K, M or G: 64K, 2M, 1G)");
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
        if (n > (~std::uint64_t{0} >> 4) / 10) throw std::invalid_argument(bad);
        n = n * 10 + unsigned(text[i++] - '0');
    }
    if (i == 0) throw std::invalid_argument(bad);
    std::string unit(text.substr(i));
    for (char& c : unit) c = char(std::toupper(static_cast<unsigned char>(c)));
    unsigned shift = 0;
    if (unit == "K" || unit == "KB" || unit == "KIB") shift = 10;
    else if (unit == "M" || unit == "MB" || unit == "MIB") shift = 20;
    else if (unit == "G" || unit == "GB" || unit == "GIB") shift = 30;
    else if (!unit.empty() && unit != "B") throw std::invalid_argument(bad);
    if (shift && n > (~std::uint64_t{0} >> (shift + 1))) throw std::invalid_argument(bad);
    return n << shift;
}

std::string size_name(std::uint64_t bytes) {
    if (bytes >= (1u << 30) && bytes % (1u << 30) == 0) return std::to_string(bytes >> 30) + "g";
    if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + "m";
    if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + "k";
    return std::to_string(bytes);
}

MachineConfig with_page_size(MachineConfig m, std::uint64_t bytes) {
    if (!std::has_single_bit(bytes))
        throw std::invalid_argument("page size " + std::to_string(bytes) + " bytes is not a power of two");
    const unsigned shift = unsigned(std::countr_zero(bytes));
    if (shift < kMinPageShift || shift > kMaxPageShift)
        throw std::invalid_argument(std::string("page size ").append(size_name(bytes)).append(" is outside 4 KiB..1 GiB"));
    m.what_if_shift = shift;
    m.name.append("@").append(size_name(bytes));  // piecewise: GCC 12 warns (-Wrestrict) on "@" + string
    return m;
}

unsigned walk_levels(const MachineConfig& m, unsigned shift) noexcept {
    const unsigned bits = level_bits(m.granule_shift);
    return (address_bits(m) - shift + bits - 1) / bits;
}

namespace {
// Synthetic slot addresses: inner level k (1 = the leaves' parents) at (0x38 + k) << 56,
// above the data (user addresses < 2^57) and the simulator's page-table entries.
std::uint64_t slot_region(unsigned level) noexcept { return std::uint64_t(0x38 + level) << 56; }
}  // namespace

BlockTree::BlockTree(std::uint64_t lo, std::uint64_t bytes, unsigned shift)
    : lo_(lo), bytes_(bytes), shift_(shift), fan_shift_(shift - 3) {
    // Blocks to reach: ceil(bytes / B); each inner level divides them by the fan-out.
    std::uint64_t nodes = bytes ? ((bytes - 1) >> shift) + 1 : 0;
    while (nodes > 1) {
        ++inner_;
        nodes = ((nodes - 1) >> fan_shift_) + 1;
    }
}

void BlockTree::access(Simulator& sim, std::uint64_t addr, PageSize size) noexcept {
    const std::uint64_t off = addr - lo_;
    if (off < bytes_ && inner_ > 0) {
        const std::uint64_t block = off >> shift_;
        if (block != last_block_) {
            last_block_ = block;
            ++walks_;
            for (unsigned k = inner_; k >= 1; --k) {
                const std::uint64_t slot = block >> (fan_shift_ * (k - 1));
                sim.access(slot_region(k) + slot * 8, PageSize::k4K, Ref::sw_walk);
            }
        }
    }
    sim.access(addr, size, Ref::data);
}

}  // namespace physmem::tlbsim
