// lab/common/preload.hpp — running a lab program under a named malloc.
//
// The lab compares allocators side by side: glibc (the C library's own malloc), Debian's
// jemalloc, tcmalloc (gperftools, minimal) and mimalloc, and physmem's libphysmem.so.
// A program asked for allocator A re-executes itself once with LD_PRELOAD naming A's
// shared object, so the whole process (C++ runtime included) allocates through A —
// the same as running it by hand under LD_PRELOAD, and as mimalloc-bench does.
//
//   lab::preload::ensure("jemalloc");        // returns only once jemalloc serves malloc
//   std::string who = lab::preload::active();   // "jemalloc"
//
// Contract: ensure() is called before anything worth keeping is allocated (it may
// replace the process image). It throws physmem::backing_unavailable when A's library
// is not installed (PROTOCOL exit 3) and std::runtime_error when, after the re-exec, a
// different malloc is active (the preload did not take).
#pragma once

#include <string>
#include <vector>

namespace lab::preload {

// The allocator names, in the order tables show them: glibc first (the status quo),
// physmem last.
const std::vector<std::string>& allocators();

// The shared object that replaces malloc for `name` ("" for glibc, which needs none), or
// "" with *why set when it is not installed. physmem's is $PHYSMEM_MALLOC_LIB, else
// libphysmem.so next to this build (build/src/malloc/, found from /proc/self/exe), else
// the installed one. Throws std::invalid_argument for an unknown name.
std::string library(const std::string& name, std::string* why);

// Makes `name` the process's malloc (see the file comment). Idempotent: a process
// already running under it returns at once.
void ensure(const std::string& name);

// Which allocator serves malloc in this process: the object file that defines the
// `malloc` symbol the program calls (dladdr), mapped to a name of allocators(); the file
// name itself when it is none of them.
std::string active();

}  // namespace lab::preload
