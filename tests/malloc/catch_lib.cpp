// tests/malloc/catch_lib.cpp — a C++ library for dlopen_new.c: it catches std::bad_alloc
// from a huge operator new, after letting a new-handler run once (issue 29, item 2).
#include <cstddef>
#include <new>

namespace {
int g_handler_calls = 0;
void handler() {
    ++g_handler_calls;
    std::set_new_handler(nullptr);  // the next failure throws
}
}  // namespace

// 1 + the new-handler's calls when std::bad_alloc was caught; 0 when new succeeded.
extern "C" int catch_lib_huge_new(void) {
    std::set_new_handler(handler);
    try {
        volatile std::size_t huge = std::size_t{1} << 50;  // 1 PiB: refused
        char* p = new char[huge];
        delete[] p;
        return 0;
    } catch (const std::bad_alloc&) {
        return 1 + g_handler_calls;
    }
}
