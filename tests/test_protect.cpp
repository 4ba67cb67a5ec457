// tests/test_protect.cpp — block tags, capabilities and domains (issue 24, first slice):
// every violation kind caught (fatal death tests and the throwing policy), narrowing,
// widening refused, use after free / relocate / compact, a free racing a reader, pools
// without tags unaffected, metadata at most 1%, protection-key detection.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "physmem/capability.hpp"
#include "physmem/domain.hpp"
#include "physmem/pool.hpp"
#include "support.hpp"
#include "violation.hpp"

using namespace physmem;

namespace {

constexpr std::size_t kBlock = 64 << 10;

PoolOptions tagged(std::size_t bs = kBlock, std::size_t capacity = 8 << 20) {
    PoolOptions o = physmem_test::pool_options(bs, capacity);
    o.give_back_delay_ms = 0;
    o.tags = true;
    return o;
}

// A movable block: relocate copies the bytes and follows the address.
struct Mover : BlockOwner {
    void* at = nullptr;
    bool relocate(std::uintptr_t, void* from, void* to) noexcept override {
        std::memcpy(to, from, kBlock);
        at = to;
        return true;
    }
};

Capability rw(BlockPool& pool, void* b, Policy p = Policy::throw_error) {
    return Capability::make(pool, b, kBlock, Perm::read_write, p);
}

using physmem_test::caught;

}  // namespace

TEST(ProtectTags, GenerationBumpsOnFreeAndDomainIsSet) {
    BlockPool pool(tagged());
    void* b = pool.allocate();
    auto t = pool.tag(static_cast<char*>(b) + 100);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->domain, 0u);
    pool.set_domain(b, 5);
    EXPECT_EQ(pool.tag(b)->domain, 5u);
    std::uint64_t g = t->generation;
    pool.deallocate(b);
    EXPECT_FALSE(pool.tag(b));  // not live
    void* c = pool.allocate();
    ASSERT_EQ(c, b);  // same place, new generation, domain back to 0
    EXPECT_GT(pool.tag(c)->generation, g);
    EXPECT_EQ(pool.tag(c)->domain, 0u);
    pool.deallocate(c);
}

TEST(ProtectTags, OffByDefaultCostsNothing) {
    BlockPool pool(physmem_test::pool_options(kBlock, 8 << 20));
    EXPECT_FALSE(pool.tagged());
    EXPECT_EQ(pool.tag_bytes(), 0u);
    void* b = pool.allocate();
    EXPECT_FALSE(pool.tag(b));
    EXPECT_THROW(rw(pool, b), ProtectionError);
    pool.deallocate(b);
}

TEST(ProtectTags, MetadataAtMostOnePercent) {
    for (std::size_t bs : {std::size_t{4} << 10, std::size_t{64} << 10}) {
        BlockPool pool(tagged(bs, 16 << 20));
        std::size_t bytes = pool.stats().blocks_total * bs;
        EXPECT_GT(pool.tag_bytes(), 0u);
        EXPECT_LE(pool.tag_bytes() * 100, bytes) << bs;
    }
}

TEST(ProtectCapability, LoadStoreInBounds) {
    BlockPool pool(tagged());
    void* b = pool.allocate();
    Capability c = rw(pool, b);
    c.store<int>(kBlock - sizeof(int), 7);
    EXPECT_EQ(c.load<int>(kBlock - sizeof(int)), 7);
    EXPECT_EQ(c.span<int>(0, 4, Perm::read).size(), 4u);
    EXPECT_TRUE(c.valid());
    pool.deallocate(b);
}

TEST(ProtectCapability, EveryViolationThrowsUnderThePolicy) {
    BlockPool pool(tagged());
    void* b = pool.allocate();
    Capability c = rw(pool, b);
    EXPECT_EQ(caught([&] { c.load<int>(kBlock - 2); }), Violation::bounds);
    EXPECT_EQ(caught([&] { c.span<char>(1, kBlock, Perm::read); }), Violation::bounds);
    Capability ro = c.narrow(Perm::read);
    EXPECT_EQ(caught([&] { ro.store<int>(0, 1); }), Violation::permission);
    EXPECT_EQ(caught([&] { ro.narrow(Perm::read_write); }), Violation::widen);
    EXPECT_EQ(caught([&] { Capability::make(pool, b, kBlock + 1, Perm::read, Policy::throw_error); }),
              Violation::bounds);
    pool.set_domain(b, 9);
    EXPECT_EQ(caught([&] { c.load<int>(0); }), Violation::domain);
    {
        DomainScope s{9};
        EXPECT_EQ(c.load<int>(0), 0);
    }
    EXPECT_EQ(caught([&] { c.load<int>(0); }), Violation::domain);
    pool.deallocate(b);
    EXPECT_EQ(caught([&] { c.load<int>(0); }), Violation::stale);
    EXPECT_EQ(caught([&] { Capability::make(pool, b, 8, Perm::read, Policy::throw_error); }), Violation::not_live);
}

TEST(ProtectCapability, NarrowingWorksWideningRefused) {
    BlockPool pool(tagged());
    void* b = pool.allocate();
    Capability c = rw(pool, b);
    Capability n = c.narrow(64, 128, Perm::read_write);
    EXPECT_EQ(n.base(), static_cast<std::byte*>(b) + 64);
    n.store<long>(120, 3);
    EXPECT_EQ(c.load<long>(184), 3);
    EXPECT_EQ(caught([&] { n.load<long>(121); }), Violation::bounds);
    EXPECT_EQ(caught([&] { n.narrow(0, 129, Perm::read); }), Violation::widen);
    EXPECT_EQ(caught([&] { n.narrow(100, 29, Perm::read); }), Violation::widen);
    Capability r = n.narrow(8, 8, Perm::read);
    EXPECT_EQ(caught([&] { r.narrow(0, 8, Perm::write); }), Violation::widen);
    pool.deallocate(b);
}

TEST(ProtectCapability, UseAfterRelocateCaught) {
    BlockPool pool(tagged());
    Mover m;
    m.at = pool.allocate(&m, 0);
    pool.set_domain(m.at, 4);
    Capability c = rw(pool, m.at);
    void* moved = pool.relocate(m.at);
    ASSERT_NE(moved, nullptr);
    EXPECT_EQ(pool.tag(moved)->domain, 4u);  // the domain follows the block
    EXPECT_EQ(caught([&] { c.load<int>(0); }), Violation::stale);

    pool.deallocate(moved);
}

// compact(): page B holds one movable block, page A is full but one: B drains into A.
TEST(ProtectCapability, UseAfterCompactCaught) {
    BlockPool pool(tagged());
    std::size_t per_page = pool.stats().page_size / kBlock;
    std::vector<void*> a;
    for (std::size_t i = 0; i < per_page; ++i) a.push_back(pool.allocate());
    Mover m;
    m.at = pool.allocate(&m, 0);
    Capability c = rw(pool, m.at);
    c.store<int>(0, 11);
    pool.deallocate(a.back());
    a.pop_back();
    void* before = m.at;
    pool.compact();
    ASSERT_NE(m.at, before) << "compact() did not move the block";
    EXPECT_EQ(caught([&] { c.load<int>(0); }), Violation::stale);
    EXPECT_EQ(rw(pool, m.at).load<int>(0), 11);  // a new capability to the new place works
    pool.deallocate(m.at);
    for (void* p : a) pool.deallocate(p);
}

TEST(ProtectCapability, FreeOnAnotherThreadIsReported) {
    BlockPool pool(tagged());
    void* b = pool.allocate();
    Capability c = rw(pool, b);
    std::atomic<bool> freed{false};
    std::atomic<long> after{0}, reported{0};
    std::thread reader([&] {
        for (;;) {
            bool done = freed.load();
            try {
                (void)c.load<long>(0);
                if (done) ++after;  // a load that began after the free and passed
            } catch (const ProtectionError& e) {
                EXPECT_EQ(e.kind, Violation::stale);
                ++reported;
                return;
            }
        }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    pool.deallocate(b);
    freed = true;
    reader.join();
    EXPECT_EQ(after.load(), 0);
    EXPECT_EQ(reported.load(), 1);
}

using ProtectDeathTest = ::testing::Test;

TEST(ProtectDeathTest, FatalPolicyNamesCapabilityBlockAndAccess) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    BlockPool pool(tagged());
    void* b = pool.allocate();
    Capability c = rw(pool, b, Policy::fatal);
    EXPECT_DEATH(c.load<int>(kBlock), "capability out of bounds: capability \\{base 0x[0-9a-f]+, length 65536, perms rw, generation 0\\} block 0x.*r of 4 bytes at offset 65536");
    EXPECT_DEATH(c.narrow(Perm::read).store<int>(0, 1), "permission denied.*w of 4 bytes");
    EXPECT_DEATH(c.narrow(0, kBlock + 1, Perm::read), "widening refused");
    EXPECT_DEATH(Capability::make(pool, static_cast<char*>(b) + 8, kBlock, Perm::read), "out of bounds");
    pool.set_domain(b, 2);
    EXPECT_DEATH(c.load<int>(0), "domain not held");
    pool.deallocate(b);
    EXPECT_DEATH(c.load<int>(0), "stale generation");
    EXPECT_DEATH(Capability::make(pool, b, 8, Perm::read), "not a live block");
    EXPECT_DEATH(Capability{}.load<int>(0), "permission denied: capability \\{base \\(nil\\), length 0");
}

TEST(ProtectDomains, ScopesNestAndRestore) {
    EXPECT_EQ(held_domains(), 1u);
    {
        DomainScope a{3};
        DomainScope b{5};
        EXPECT_TRUE(holds_domain(3) && holds_domain(5) && holds_domain(0));
    }
    EXPECT_EQ(held_domains(), 1u);
    std::thread([] { EXPECT_EQ(held_domains(), 1u); }).join();
}

TEST(ProtectDomains, ProtectionKeysMatchProcCpuinfo) {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    bool flag = false, seen = false;
    while (std::getline(in, line))
        if (line.rfind("flags", 0) == 0) {
            seen = true;
            flag = (line + " ").find(" pku ") != std::string::npos;
            break;
        }
    if (!seen) GTEST_SKIP() << "no flags line in /proc/cpuinfo";
    ProtectionKeys k = protection_keys();
    EXPECT_EQ(k.cpu, flag);
    if (!k.cpu) EXPECT_FALSE(k.os);
}
