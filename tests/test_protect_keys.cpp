// tests/test_protect_keys.cpp — a pool's protection domain (PoolOptions::domain) and its
// hardware enforcement with protection keys (PoolOptions::protection_keys, issue 24 item
// 4): the options' rules, every block tagged with the pool's domain, the software checks
// where keys are unavailable (with the reason said), and — where the CPU and kernel have
// keys — unchecked reads and writes that fault without a DomainScope and work inside one,
// on this thread and another, in every region of a growing pool.
#include <gtest/gtest.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>

#include "physmem/capability.hpp"
#include "physmem/checked_tree_array.hpp"
#include "physmem/domain.hpp"
#include "physmem/pool.hpp"
#include "physmem/tree_array.hpp"
#include "port/os.hpp"
#include "support.hpp"
#include "violation.hpp"

using namespace physmem;
using physmem_test::caught;

namespace {

constexpr std::size_t kBlock = 64 << 10;
constexpr std::uint32_t kDomain = 11;

PoolOptions in_domain(std::uint32_t d, bool keys, std::size_t capacity = 4 << 20) {
    PoolOptions o = physmem_test::pool_options(kBlock, capacity);
    o.give_back_delay_ms = 0;
    o.tags = true;
    o.domain = d;
    o.protection_keys = keys;
    return o;
}

std::string invalid(const PoolOptions& o) {
    try {
        BlockPool p(o);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(accepted)";
}

// Skips the test where kDomain cannot have a protection key (no keys in the CPU or
// kernel, or pkey_alloc refused), saying why.
#define REQUIRE_KEYS()                                                                 \
    do {                                                                               \
        std::string no_;                                                               \
        if (domain_key(kDomain, &no_) <= 0) GTEST_SKIP() << "no protection key: " << no_; \
    } while (0)

std::uint64_t read_word(const void* p) { return *static_cast<const volatile std::uint64_t*>(p); }
void write_word(void* p, std::uint64_t v) { *static_cast<volatile std::uint64_t*>(p) = v; }

const char* const kFault = "physmem: fatal: protection key [0-9]+ \\(domain 11\\)";

}  // namespace

TEST(ProtectKeys, OptionsNeedTagsAndADomain) {
    PoolOptions o = in_domain(64, false);
    EXPECT_NE(invalid(o).find("PoolOptions::domain = 64: not a domain from 0 to 63"), std::string::npos) << invalid(o);
    o = in_domain(3, false);
    o.tags = false;
    EXPECT_NE(invalid(o).find("PoolOptions::domain = 3: needs tags = true"), std::string::npos) << invalid(o);
    o = in_domain(0, true);
    EXPECT_NE(invalid(o).find("PoolOptions::protection_keys = true: needs a domain from 1 to 63"),
              std::string::npos)
        << invalid(o);
    EXPECT_EQ(invalid(in_domain(63, false)), "(accepted)");
}

TEST(ProtectKeys, EveryBlockStartsInThePoolsDomainAndKeepsItWhenMoved) {
    BlockPool pool(in_domain(5, false));
    void* a = pool.allocate();
    void* b = pool.allocate();
    ASSERT_EQ(pool.tag(a)->domain, 5u);
    pool.set_domain(b, 6);
    EXPECT_EQ(pool.tag(b)->domain, 6u);
    std::uint64_t g = pool.tag(a)->generation;
    pool.deallocate(a);
    void* c = pool.allocate();  // the freed place again, a new generation, the pool's domain
    EXPECT_EQ(c, a);
    EXPECT_EQ(pool.tag(c)->domain, 5u);
    EXPECT_GT(pool.tag(c)->generation, g);
    EXPECT_FALSE(pool.key_enforcement().on);
    EXPECT_EQ(pool.key_enforcement().why, "PoolOptions::protection_keys is off");
    pool.deallocate(b);
    pool.deallocate(c);
}

TEST(ProtectKeys, CheckedAccessesOutsideTheDomainFailWithOrWithoutKeys) {
    BlockPool pool(in_domain(kDomain, true));
    {
        DomainScope s{kDomain};  // building and filling touches the blocks
        CheckedTreeArray<std::uint64_t> a(10000, pool, Policy::throw_error, "private");
        std::iota(a.unchecked().begin(), a.unchecked().end(), std::uint64_t{0});
        EXPECT_EQ(a.at(9999), 9999u);
        {
            DomainScope none{0};  // nesting another scope keeps the domain
            EXPECT_EQ(a[1234], 1234u);
        }
    }
    // Outside the scope only the software check is exercised: with keys, the array's own
    // table read would fault first (the death tests below).
    if (!pool.key_enforcement().on) {
        DomainScope s{kDomain};
        CheckedTreeArray<std::uint64_t> a(100, pool, Policy::throw_error, "private");
        void* leaf = a.unchecked().leaf_data(0);
        Capability cap = Capability::make(pool, leaf, kBlock, Perm::read, Policy::throw_error);
        EXPECT_EQ(cap.load<std::uint64_t>(0), 0u);
        std::thread([&] { EXPECT_EQ(caught([&] { cap.load<std::uint64_t>(0); }), Violation::domain); }).join();
    }
}

TEST(ProtectKeys, WithoutKeysThePoolSaysWhyAndKeepsTheSoftwareChecks) {
    std::string no = keys_unavailable();
    if (no.empty()) GTEST_SKIP() << "this CPU and kernel have protection keys";  // (pkey_alloc may still refuse)
    EXPECT_FALSE(protection_keys().cpu && protection_keys().os);
    std::string why;
    EXPECT_EQ(domain_key(kDomain, &why), -1);
    EXPECT_EQ(why, no);
    BlockPool pool(in_domain(kDomain, true));
    BlockPool::KeyEnforcement k = pool.key_enforcement();
    EXPECT_FALSE(k.on);
    EXPECT_EQ(k.key, -1);
    EXPECT_EQ(k.why, no);
    void* b = pool.allocate();
    write_word(b, 42);  // unchecked code is not stopped without keys: the software checks only
    EXPECT_EQ(read_word(b), 42u);
    Capability cap = Capability::make(pool, b, kBlock, Perm::read, Policy::throw_error);
    EXPECT_EQ(caught([&] { cap.load<std::uint64_t>(0); }), Violation::domain);
    pool.deallocate(b);
}

TEST(ProtectKeys, DomainZeroHasNoKey) {
    std::string why;
    EXPECT_EQ(domain_key(0, &why), -1);
    EXPECT_NE(why.find("everyone's"), std::string::npos) << why;
}

// --- the fault hook, on every machine -----------------------------------------------
// A SIGSEGV queued to this process with si_code SEGV_PKUERR stands for the CPU's fault
// (the kernel lets a process send itself any siginfo): a key the hook claims is reported
// once and ends the process by SIGSEGV; another key goes to the handler installed before.

namespace {

bool claim_key_7(int key, const void*) {
    if (key != 7) return false;
    static const char msg[] = "hook: key 7\n";
    (void)!write(2, msg, sizeof msg - 1);
    return true;
}

void queue_key_fault(int key) {
    siginfo_t si;
    std::memset(&si, 0, sizeof si);
    si.si_signo = SIGSEGV;
    si.si_code = SEGV_PKUERR;
    si.si_addr = reinterpret_cast<void*>(0x1000);
    si.si_pkey = static_cast<unsigned>(key);
    ASSERT_EQ(syscall(SYS_rt_sigqueueinfo, getpid(), SIGSEGV, &si), 0) << std::strerror(errno);
}

void previous_handler(int) {
    static const char msg[] = "previous handler\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(3);
}

}  // namespace

TEST(ProtectKeys, TheFaultHookReportsItsOwnKeysOnceAndPassesOthersOn) {
    EXPECT_EXIT(
        {
            ASSERT_EQ(os::on_pkey_fault(claim_key_7), 0);
            queue_key_fault(7);
            std::fprintf(stderr, "survived\n");
            std::_Exit(0);
        },
        testing::KilledBySignal(SIGSEGV), "^hook: key 7\n$");
    EXPECT_EXIT(
        {
            signal(SIGSEGV, previous_handler);
            ASSERT_EQ(os::on_pkey_fault(claim_key_7), 0);
            queue_key_fault(3);
            std::_Exit(0);
        },
        testing::ExitedWithCode(3), "^previous handler\n$");
}

// --- where the CPU and kernel have protection keys ---------------------------------

TEST(ProtectKeysHardware, KeyedPoolReportsItsKey) {
    REQUIRE_KEYS();
    BlockPool pool(in_domain(kDomain, true));
    BlockPool::KeyEnforcement k = pool.key_enforcement();
    EXPECT_TRUE(k.on) << k.why;
    EXPECT_EQ(k.key, domain_key(kDomain));
    EXPECT_GE(k.key, 1);
    EXPECT_LE(k.key, 15);
}

TEST(ProtectKeysHardware, UncheckedAccessInsideTheScopeWorks) {
    REQUIRE_KEYS();
    BlockPool pool(in_domain(kDomain, true));
    void* b = pool.allocate();
    {
        DomainScope s{kDomain};
        write_word(b, 7);
        EXPECT_EQ(read_word(b), 7u);
        TreeArray<std::uint64_t> t(50000, pool);
        std::iota(t.begin(), t.end(), std::uint64_t{0});
        EXPECT_EQ(std::accumulate(t.begin(), t.end(), std::uint64_t{0}), 50000ull * 49999 / 2);
    }
    pool.deallocate(b);
}

TEST(ProtectKeysHardware, UncheckedReadWithoutTheScopeFaults) {
    REQUIRE_KEYS();
    BlockPool pool(in_domain(kDomain, true));
    void* b = pool.allocate();
    EXPECT_EXIT(read_word(b), testing::KilledBySignal(SIGSEGV), kFault);
    EXPECT_EXIT(write_word(b, 1), testing::KilledBySignal(SIGSEGV), kFault);
    pool.deallocate(b);
}

TEST(ProtectKeysHardware, TheScopesEndTakesTheKeyBack) {
    REQUIRE_KEYS();
    BlockPool pool(in_domain(kDomain, true));
    void* b = pool.allocate();
    {
        DomainScope s{kDomain};
        write_word(b, 3);
    }
    EXPECT_EXIT(read_word(b), testing::KilledBySignal(SIGSEGV), kFault);
    pool.deallocate(b);
}

TEST(ProtectKeysHardware, AnotherThreadWithoutTheScopeFaults) {
    REQUIRE_KEYS();
    BlockPool pool(in_domain(kDomain, true));
    void* b = pool.allocate();
    EXPECT_EXIT(
        {
            std::atomic<int> go{0};
            std::thread mine([&] {  // started before the scope, as `other`: enters its own
                while (go.load() < 1) std::this_thread::yield();
                DomainScope scope{kDomain};
                std::fprintf(stderr, "mine read %llu\n", static_cast<unsigned long long>(read_word(b)));
                go = 2;
            });
            std::thread other([&] {  // started before the scope, holds none
                while (go.load() < 2) std::this_thread::yield();
                (void)read_word(b);
            });
            {
                DomainScope s{kDomain};
                write_word(b, 5);
            }
            go = 1;
            mine.join();
            other.join();
        },
        testing::KilledBySignal(SIGSEGV), std::string("mine read 5\n.*") + kFault);
    pool.deallocate(b);
}

TEST(ProtectKeysHardware, EveryRegionOfAGrowingPoolIsKeyed) {
    REQUIRE_KEYS();
    PoolOptions o = in_domain(kDomain, true, 1 << 20);
    o.grow = true;
    BlockPool pool(o);
    std::vector<void*> bs;
    while (pool.stats().regions < 2) bs.push_back(pool.allocate());
    EXPECT_TRUE(pool.key_enforcement().on) << pool.key_enforcement().why;
    void* last = bs.back();
    EXPECT_EXIT(read_word(last), testing::KilledBySignal(SIGSEGV), kFault);
    {
        DomainScope s{kDomain};
        write_word(last, 9);
        EXPECT_EQ(read_word(last), 9u);
    }
    for (void* b : bs) pool.deallocate(b);
}
