// src/paged/transfer_tag.hpp — how a transfer's tag names its leaf and direction.
#pragma once

#include <cstdint>

namespace physmem::detail {

constexpr std::uint64_t kWriteTag = 1;  // tag = leaf << 1 | write

}  // namespace physmem::detail
