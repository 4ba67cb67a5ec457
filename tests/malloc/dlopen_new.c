/* tests/malloc/dlopen_new.c — a C program (no C++ runtime of its own) that dlopens a C++
 * library which catches std::bad_alloc from a failed new (catch_lib.cpp). Under
 * LD_PRELOAD=libphysmem.so the library's operator new is physmem's, which must find the
 * runtime the library brought (issue 29, item 2). Prints "dlopen_new: ok". */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: dlopen_new LIB\n");
        return 2;
    }
    void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen_new: %s\n", dlerror());
        return 1;
    }
    int (*huge_new)(void) = (int (*)(void))dlsym(h, "catch_lib_huge_new");
    int r = huge_new ? huge_new() : -1;
    printf("dlopen_new: the library's catch returned %d (2: new-handler ran once, then caught)\n", r);
    if (r != 2) return 1;
    printf("dlopen_new: ok\n");
    return 0;
}
