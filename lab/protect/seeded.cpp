// lab/protect/seeded.cpp — the seeded bugs of seeded.hpp and their children.
#include "protect/seeded.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <utility>

#include "physmem/algorithm.hpp"
#include "physmem/capability.hpp"
#include "physmem/checked_paged_array.hpp"
#include "physmem/checked_tree_array.hpp"
#include "physmem/domain.hpp"
#include "process.hpp"

namespace lab::protect {
namespace {

using physmem::BlockPool;
using physmem::Policy;
using Checked = physmem::CheckedTreeArray<std::uint64_t>;
using CheckedPaged = physmem::CheckedPagedArray<std::uint64_t>;

constexpr std::size_t kBlock = 4096;  // 512 words a leaf: many leaves in a small array
constexpr std::size_t kN = 2000;

// THP (4 KiB where the kernel has none), never hugetlb: a 1 GiB page reserved for the
// run's *-1g points would make the pool's page, and use_after_compact's filler, 1 GiB.
physmem::PoolOptions tagged(std::size_t block = kBlock) {
    return {.block_size = block, .capacity = 16 << 20, .backing = physmem::Backing::thp, .give_back_delay_ms = 0,
            .tags = true};
}

// A tagged pool whose blocks are in kKeyed's domain, under its protection key where the
// CPU and kernel have keys (software checks only elsewhere).
constexpr std::uint32_t kKeyed = 9;
physmem::PoolOptions keyed_pool() {
    physmem::PoolOptions o = tagged();
    o.domain = kKeyed;
    o.protection_keys = true;
    return o;
}

void fill(Checked& a) {
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = i;
}

// A paged array of kN elements (about 4 leaves) with room for two in memory: every pass evicts.
physmem::PagingOptions two_leaves() {
    physmem::PagingOptions o;
    o.budget = 2 * kBlock;
    o.readahead = 0;
    o.direct = false;
    return o;
}
void fill(CheckedPaged& a) {
    for (std::size_t i = 0; i < a.size(); ++i) a.set(i, i);
}

// Keeps a value live so the compiler cannot drop the faulty read.
volatile std::uint64_t sink;
void use(std::uint64_t v) { sink = v; }

// One array whose only leaf compact() moves: the first page full but one block, the
// leaf alone on the next (the pool places blocks fullest page first), then one block of
// the first page freed, so compaction moves the leaf into it.
void use_after_compact() {
    BlockPool pool(tagged());
    std::vector<void*> first;
    for (std::size_t i = 0, per = pool.stats().page_size / kBlock; i < per; ++i) first.push_back(pool.allocate());
    Checked a(100, pool, Policy::fatal, "moved");
    fill(a);
    auto it = a.begin() + 7;
    pool.deallocate(first.back());
    pool.compact();
    use(*it);
}

// Another thread frees one of the array's leaves behind its back while this one reads it
// in a loop: rounds of 2^20 reads, each round a loop that keeps the array's bound in a
// register (the flag read between rounds, an atomic, makes the next round reload it). A
// free inside a round reaches the loop through the leaf's poisoned entry, one between
// rounds through the checked path: caught either way, never read. Ends after about 10 s
// of reads (not caught) at the most.
void freed_under_loop() {
    BlockPool pool(tagged());
    Checked a(kN, pool, Policy::fatal, "hot");
    fill(a);
    void* leaf = std::as_const(a).unchecked().leaf_data(1);
    std::atomic<bool> started{false};
    std::thread freer([&] {
        while (!started.load()) std::this_thread::yield();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        pool.deallocate(leaf);
    });
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    std::uint64_t s = 0;
    started = true;
    while (std::chrono::steady_clock::now() < until) {
        for (std::uint64_t r = 0; r < (std::uint64_t{1} << 20); ++r) s += std::as_const(a)[600 + (r & 255)];
        use(s);
    }
    freer.join();
}

// The same operations as the bugs, done right: nothing may be reported.
int clean() {
    BlockPool pool(tagged()), other(tagged(16384));
    Checked a(kN, pool, Policy::fatal, "clean");
    fill(a);
    std::uint64_t s = std::accumulate(a.begin(), a.end(), std::uint64_t{0});
    for (std::size_t i = 0; i < a.size(); ++i) s += a[i] + a.at(i);
    std::sort(a.begin(), a.end(), std::greater<>());
    pool.compact();
    physmem::for_each_segment(a, [&s](auto span) {
        for (auto v : span) s += v;
    });
    a.migrate(other);
    a.set_domain(5);
    {
        physmem::DomainScope scope(5);
        s += a[kN - 1] + *(a.end() - 1);
    }
    a.set_domain(0);
    BlockPool paged_pool(tagged());
    CheckedPaged p(kN, paged_pool, two_leaves(), Policy::fatal, "clean-paged");
    fill(p);
    std::sort(p.begin(), p.end(), std::greater<std::uint64_t>());
    s += std::accumulate(p.cbegin(), p.cend(), std::uint64_t{0}) + p.get(kN - 1) + p.at(0);
    physmem::for_each_segment(std::as_const(p), [&s](auto span) {
        for (auto v : span) s += v;
    });
    p.set_domain(5);
    {
        physmem::DomainScope scope(5);
        s += p.get(7) + *(p.cend() - 1);
    }
    p.set_domain(0);
    CheckedPaged moved = std::move(p);
    s += *moved.cbegin();
    void* b = other.allocate();
    physmem::Capability c = physmem::Capability::make(other, b, 64, physmem::Perm::read_write);
    c.store<std::uint64_t>(8, s);
    use(c.narrow(8, 8, physmem::Perm::read).load<std::uint64_t>(0));
    other.deallocate(b);
    BlockPool keyed(keyed_pool());  // used right
    {
        physmem::DomainScope scope(kKeyed);
        Checked k(kN, keyed, Policy::fatal, "keyed");
        fill(k);
        s += k[17] + k.unchecked()[18] + *(k.cend() - 1);
    }
    std::printf("clean: %llu\n", static_cast<unsigned long long>(s));
    return 0;
}

// Where protection keys are usable: an unchecked read (the plain TreeArray under a checked
// array, a raw pointer) of a keyed pool's block by a thread outside its domain. The CPU
// stops it; physmem's fault report names the key and the domain.
void keyed_unchecked_read() {
    std::string why;
    if (physmem::domain_key(kKeyed, &why) <= 0) {  // run by hand where keys are unusable
        std::printf("seeded bug keyed_unchecked_read: not runnable here: %s\n", why.c_str());
        std::exit(0);
    }
    BlockPool pool(keyed_pool());
    std::unique_ptr<Checked> a;
    {
        physmem::DomainScope scope(kKeyed);
        a = std::make_unique<Checked>(kN, pool, Policy::fatal, "keyed");
        fill(*a);
    }
    use(a->unchecked()[5]);
}

// The bugs of table() that this machine can run: the keyed one where keys are usable.
bool runnable(const std::string& name) { return name != "keyed_unchecked_read" || physmem::domain_key(kKeyed) > 0; }

const std::vector<std::pair<std::string, std::function<void()>>>& table() {
    static const std::vector<std::pair<std::string, std::function<void()>>> t = {
        {"oob_element", [] {
             BlockPool pool(tagged());
             Checked a(kN, pool, Policy::fatal, "weights");
             use(a[kN]);
         }},
        {"oob_leaf", [] {
             BlockPool pool(tagged());
             Checked a(kN, pool, Policy::fatal, "weights");
             use(a.at(kN + a.leaf_length()));
         }},
        {"iterator_past_end", [] {
             BlockPool pool(tagged());
             Checked a(kN, pool, Policy::fatal, "weights");
             auto it = a.begin();
             for (std::size_t i = 0; i <= kN; ++i) use(*it++);
         }},
        {"use_after_destroy", [] {
             BlockPool pool(tagged());
             Checked::iterator it;
             {
                 Checked a(kN, pool, Policy::fatal, "gone");
                 it = a.begin() + 3;
             }
             use(*it);
         }},
        {"use_after_compact", use_after_compact},
        {"freed_under_loop", freed_under_loop},
        {"use_after_migrate", [] {
             BlockPool pool(tagged()), other(tagged(16384));
             Checked a(kN, pool, Policy::fatal, "migrated");
             auto it = a.cbegin() + 1500;
             a.migrate(other);
             use(*it);
         }},
        {"double_free", [] {
             BlockPool pool(tagged());
             void* b = pool.allocate();
             pool.deallocate(b);
             pool.deallocate(b);
         }},
        {"other_domain", [] {
             BlockPool pool(tagged());
             Checked a(kN, pool, Policy::fatal, "private");
             a.set_domain(9);
             use(a[3]);
         }},
        {"paged_oob_element", [] {
             BlockPool pool(tagged());
             CheckedPaged a(kN, pool, two_leaves(), Policy::fatal, "paged");
             use(a.get(kN));
         }},
        {"paged_iterator_past_end", [] {
             BlockPool pool(tagged());
             CheckedPaged a(kN, pool, two_leaves(), Policy::fatal, "paged");
             fill(a);
             auto it = a.cbegin();
             for (std::size_t i = 0; i <= kN; ++i) use(*it++);
         }},
        {"paged_use_after_destroy", [] {
             BlockPool pool(tagged());
             CheckedPaged::const_iterator it;
             {
                 CheckedPaged a(kN, pool, two_leaves(), Policy::fatal, "gone-paged");
                 it = a.cbegin() + 3;
             }
             use(*it);
         }},
        {"paged_use_after_move", [] {
             BlockPool pool(tagged());
             CheckedPaged a(kN, pool, two_leaves(), Policy::fatal, "moved-paged");
             auto it = a.cbegin() + 1500;
             CheckedPaged b = std::move(a);
             use(*it + b.get(0));
         }},
        {"paged_other_domain", [] {
             BlockPool pool(tagged());
             CheckedPaged a(kN, pool, two_leaves(), Policy::fatal, "private-paged");
             a.set_domain(9);
             use(a.get(3));
         }},
        {"keyed_unchecked_read", keyed_unchecked_read},
        {"widen_capability", [] {
             BlockPool pool(tagged());
             void* b = pool.allocate();
             auto c = physmem::Capability::make(pool, b, 64, physmem::Perm::read);
             use(c.narrow(0, 65, physmem::Perm::read).length());
         }},
    };
    return t;
}

std::string first_line_with(const std::string& out, const std::string& key) {
    std::size_t at = out.find(key);
    if (at == std::string::npos) return out.substr(0, 160);
    return out.substr(at, out.find('\n', at) - at);
}

}  // namespace

const std::vector<std::string>& seeded_bugs() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const auto& [name, f] : table())
            if (runnable(name)) v.push_back(name);
        v.push_back("clean");
        return v;
    }();
    return names;
}

int run_seeded_bug(const std::string& name) {
    if (name == "clean") return clean();
    for (const auto& [n, f] : table())
        if (n == name) {
            f();
            std::printf("seeded bug %s: not caught\n", name.c_str());
            return 0;
        }
    std::fprintf(stderr, "physmem_lab_protect: --seeded-bug %s: no such bug\n", name.c_str());
    return 2;
}

std::vector<Detection> detect_all(const std::string& self) {
    const std::vector<std::string> env = process::own_env();
    std::vector<Detection> out;
    for (const std::string& bug : seeded_bugs()) {
        process::ChildResult r = process::run_child(process::kSelfExe, {self, "--seeded-bug", bug}, env,
                                                    /*merge_stderr=*/true);
        Detection d{.bug = bug, .expected_to_fail = bug != "clean", .status = r.status, .report = {}};
        bool reported = r.out.find("physmem: fatal:") != std::string::npos;
        d.ok = d.expected_to_fail ? r.exit_code == -1 && reported : r.exit_code == 0 && !reported;
        d.report = first_line_with(r.out, d.expected_to_fail ? "physmem: fatal:" : "clean:");
        for (char& c : d.report)
            if (c == '\n' || c == '|') c = ' ';  // one line, a table cell
        out.push_back(std::move(d));
    }
    return out;
}

}  // namespace lab::protect
