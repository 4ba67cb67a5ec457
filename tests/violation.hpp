// tests/violation.hpp — the protection tests' helper: which violation f() raised under the
// throwing policy (a test failure when it raised none).
#pragma once

#include <gtest/gtest.h>

#include "physmem/capability.hpp"

namespace physmem_test {

physmem::Violation caught(auto&& f) {
    try {
        f();
    } catch (const physmem::ProtectionError& e) {
        return e.kind;
    }
    ADD_FAILURE() << "no ProtectionError";
    return physmem::Violation::not_live;
}

}  // namespace physmem_test
