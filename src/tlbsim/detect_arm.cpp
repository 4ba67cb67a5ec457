// src/tlbsim/detect_arm.cpp — `auto` off x86: the Arm core named by /proc/cpuinfo's
// "CPU implementer" and "CPU part" (the MIDR_EL1 fields Linux prints), with the page
// granule the kernel runs (16 and 64 KiB kernels exist on arm64). See detect.hpp.
//
// Part numbers: Arm's Technical Reference Manuals, MIDR_EL1 PartNum (Neoverse N1 0xD0C,
// V1 0xD40, N2 0xD49, V2 0xD4F, V3 0xD84, N3 0xD8E); implementer 0x41 is Arm Ltd.
// Assumed, and said in the reason: 48-bit virtual addresses (a kernel with 52-bit VAs
// and LPA2 on a 4 KiB granule walks one more level; cpuinfo does not say which is used).
#include "physmem/tlbsim/detect.hpp"

#include "hex.hpp"

#include <optional>
#include <sstream>

namespace physmem::tlbsim {

namespace {

// The value of the first "<key>\t: <value>" line, if any.
std::optional<std::string> field(std::string_view cpuinfo, std::string_view key) {
    std::istringstream in{std::string(cpuinfo)};
    for (std::string line; std::getline(in, line);) {
        if (line.compare(0, key.size(), key) != 0) continue;
        std::size_t colon = line.find(':', key.size());
        if (colon == std::string::npos || line.find_first_not_of(" \t", key.size()) != colon) continue;
        std::size_t v = line.find_first_not_of(" \t", colon + 1);
        return v == std::string::npos ? std::string() : line.substr(v);
    }
    return std::nullopt;
}

std::optional<unsigned> number(const std::optional<std::string>& s) {
    if (!s || s->empty()) return std::nullopt;
    try {
        std::size_t used = 0;
        unsigned long v = std::stoul(*s, &used, 0);
        if (used != s->size() || v > 0xFFFFu) return std::nullopt;
        return static_cast<unsigned>(v);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

struct Core {
    const char* preset;  // null: no preset, none near
    const char* why;
    bool exact;          // the preset is this core (else the nearest)
};

// The preset for an Arm Ltd. part.
Core arm_core(unsigned part) {
    switch (part) {
        case 0xD0C: return {"neoverse-n1", "Neoverse N1 (part 0xD0C)", true};
        case 0xD40: return {"neoverse-v1", "Neoverse V1 (part 0xD40)", true};
        case 0xD4F: return {"neoverse-v2", "Neoverse V2 (part 0xD4F)", true};
        case 0xD49: return {"neoverse-n1", "Neoverse N2 (part 0xD49): no preset; nearest the N line's neoverse-n1", false};
        case 0xD8E: return {"neoverse-n1", "Neoverse N3 (part 0xD8E): no preset; nearest the N line's neoverse-n1", false};
        case 0xD84: return {"neoverse-v2", "Neoverse V3 (part 0xD84): no preset; nearest the V line's newest, neoverse-v2", false};
        default: return {nullptr, "", false};
    }
}

using detail::hex;

}  // namespace

std::optional<AutoChoice> choose_machine_from_cpuinfo(std::string_view cpuinfo, std::size_t page_bytes) {
    std::optional<unsigned> impl = number(field(cpuinfo, "CPU implementer"));
    std::optional<unsigned> part = number(field(cpuinfo, "CPU part"));
    if (!impl) return std::nullopt;
    AutoChoice c;
    c.cpu = "arm implementer " + hex(*impl) + (part ? " part " + hex(*part) : std::string(" part ?"));
    Core core = *impl == 0x41 && part ? arm_core(*part) : Core{nullptr, "", false};
    c.source = core.exact ? "table" : "nearest";
    std::string why = core.why;
    if (!core.preset) {
        core.preset = "neoverse-n1";
        why = (*impl == 0x41 ? std::string("an Arm Ltd. part") : "implementer " + hex(*impl)) +
              " with no preset: neoverse-n1 as a generic Armv8 server core";
    }
    c.base = core.preset;
    unsigned shift = page_bytes == (std::size_t{1} << 16) ? 16 : page_bytes == (std::size_t{1} << 14) ? 14 : 12;
    c.machine = with_granule(preset(c.base), shift);
    std::string granule = std::to_string(page_bytes >> 10) + " KiB pages";
    if (shift == 12 && page_bytes != 4096)
        granule = "page size " + std::to_string(page_bytes) + " B unknown to the model: 4 KiB granule assumed";
    c.reason = "/proc/cpuinfo: " + why + "; " + granule + " (" + c.machine.name +
               "); 48-bit virtual addresses assumed (cpuinfo does not say whether LPA2 is in use)";
    return c;
}

}  // namespace physmem::tlbsim
