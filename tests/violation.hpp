// tests/violation.hpp — the protection tests' helper: which violation f() raised under the
// throwing policy (a test failure when it raised none).
#pragma once

#include <gtest/gtest.h>

#include "physmem/capability.hpp"

namespace physmem_test {

// Uses v's address (an access the compiler must keep): a checked a[i] whose result is
// discarded may be dropped with its check (checked_tree_array.hpp), so a test that means
// "this access is caught" accesses.
template <class T>
void use(const T& v) {
    asm volatile("" : : "m"(v) : "memory");
}

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
