// tests/malloc/preload_check.cpp — run under LD_PRELOAD=libphysmem.so: every C and C++
// allocation form of a plain program goes to physmem, behaves as the standards say, and
// misuse aborts with physmem's message. Prints "preload_check: ok" on success.
// Not linked to physmem: it finds pm_usable_size with dlsym to prove the library is in.
#include <dlfcn.h>
#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "check.hpp"

namespace {


bool aligned(const void* p, std::size_t a) { return reinterpret_cast<std::uintptr_t>(p) % a == 0; }

using usable_fn = std::size_t (*)(const void*);

void basic() {
    auto pm_usable = reinterpret_cast<usable_fn>(dlsym(RTLD_DEFAULT, "pm_usable_size"));
    CHECK(pm_usable != nullptr);  // the library is preloaded
    void* p = std::malloc(1000);
    CHECK(p && aligned(p, 16));
    if (pm_usable) CHECK(pm_usable(p) == malloc_usable_size(p) && malloc_usable_size(p) >= 1000);
    std::free(p);
}

void c_api() {
    for (std::size_t n : {0ul, 1ul, 100ul, 5000ul, 70000ul, 3ul << 20}) {
        void* p = std::malloc(n);
        CHECK(p && aligned(p, 16) && malloc_usable_size(p) >= n);
        std::memset(p, 1, n);
        p = std::realloc(p, n * 2 + 1);
        CHECK(p && malloc_usable_size(p) >= n * 2 + 1);
        std::free(p);
        auto* z = static_cast<unsigned char*>(std::calloc(n + 1, 1));
        bool zero = true;
        for (std::size_t i = 0; i <= n; ++i) zero = zero && z[i] == 0;
        CHECK(zero);
        std::free(z);
    }
    errno = 0;
    CHECK(std::calloc(SIZE_MAX / 4, 8) == nullptr && errno == ENOMEM);
    void* r = std::malloc(10);
    errno = 0;
    CHECK(reallocarray(r, SIZE_MAX / 4, 8) == nullptr && errno == ENOMEM);
    r = reallocarray(r, 100, 8);
    CHECK(r && malloc_usable_size(r) >= 800);
    std::free(r);
    for (std::size_t a = 8; a <= (1u << 21); a *= 2) {
        void* q = nullptr;
        CHECK(posix_memalign(&q, a, 100) == 0 && aligned(q, a));
        std::free(q);
        q = aligned_alloc(a, a * 2);
        CHECK(q && aligned(q, a));
        std::free(q);
        q = memalign(a, 33);
        CHECK(q && aligned(q, a));
        std::free(q);
    }
    void* q = nullptr;
    CHECK(posix_memalign(&q, 12, 100) == EINVAL);
    q = valloc(100);
    CHECK(q && aligned(q, 4096));
    std::free(q);
    q = pvalloc(100);
    CHECK(q && aligned(q, 4096) && malloc_usable_size(q) >= 4096);
    std::free(q);
}

struct alignas(256) Wide {
    char b[300];
};

void cpp_api() {
    auto* i = new int(7);
    CHECK(*i == 7);
    delete i;
    auto* a = new int[1000]();
    CHECK(a[999] == 0);
    delete[] a;
    auto* w = new Wide;
    CHECK(aligned(w, 256));
    delete w;
    auto* wa = new Wide[5];
    CHECK(aligned(wa, 256));
    delete[] wa;
    auto* nt = new (std::nothrow) char[100];
    CHECK(nt != nullptr);
    delete[] nt;
    std::size_t huge = std::size_t{1} << 52;
    CHECK(::operator new(huge, std::nothrow) == nullptr);
    CHECK(::operator new(huge, std::align_val_t{64}, std::nothrow) == nullptr);
    bool threw = false;
    try {
        void* v = ::operator new(huge);
        ::operator delete(v);
    } catch (const std::bad_alloc&) {
        threw = true;
    }
    CHECK(threw);
    static int handler_calls = 0;
    std::set_new_handler([] {
        if (++handler_calls == 3) std::set_new_handler(nullptr);
    });
    threw = false;
    try {
        void* v = ::operator new(huge);
        ::operator delete(v);
    } catch (const std::bad_alloc&) {
        threw = true;
    }
    CHECK(threw && handler_calls == 3);
    std::vector<std::string> v;
    for (int k = 0; k < 10000; ++k) v.push_back(std::to_string(k) + std::string(k % 100, 'x'));
    std::size_t total = 0;
    for (auto& s : v) total += s.size();
    CHECK(total == 10000 * 49.5 + 38890);
}

void threads() {
    std::vector<std::thread> ts;
    std::vector<void*> handoff(4);
    for (int t = 0; t < 4; ++t)
        ts.emplace_back([t, &handoff] {
            std::vector<void*> v;
            for (int i = 0; i < 10000; ++i) v.push_back(std::malloc(static_cast<std::size_t>(i % 700)));
            for (void* p : v) std::free(p);
            handoff[static_cast<std::size_t>(t)] = std::malloc(12345);
        });
    for (auto& t : ts) t.join();
    for (void* p : handoff) std::free(p);  // freed by another thread than the allocator
}

void stagger(bool on) {
    for (std::size_t n = 64 << 10; n <= (8u << 20); n *= 2) {
        void* a = std::malloc(n);
        void* b = std::malloc(n);
        auto la = reinterpret_cast<std::uintptr_t>(a) & 4095, lb = reinterpret_cast<std::uintptr_t>(b) & 4095;
        if (on) CHECK(la != lb);
        else CHECK(la == 0 && lb == 0);
        std::free(a);
        std::free(b);
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::string mode = argc > 1 ? argv[1] : "all";
    if (mode == "double-free") {
        void* p = std::malloc(64);
        std::free(p);
        std::free(p);
        std::puts("preload_check: double free not detected");
        return 1;
    }
    basic();
    if (mode == "all") {
        c_api();
        cpp_api();
        threads();
        stagger(true);
    } else if (mode == "stagger-off") {
        stagger(false);
    }
    if (failures) {
        std::printf("preload_check: %d failures\n", failures);
        return 1;
    }
    std::printf("preload_check: ok\n");
    return 0;
}
