// src/tlbsim/hex.hpp — "0x1A"-style numbers for auto's reasons (detect.cpp, detect_arm.cpp).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace physmem::tlbsim::detail {

inline std::string hex(std::uint32_t v) {
    char b[16];
    std::snprintf(b, sizeof b, "0x%X", v);
    return b;
}

}  // namespace physmem::tlbsim::detail
