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

// An allocator a child runs under (a server or a program the lab starts): its name and the
// shared object to preload into the child. glibc's is the C library itself: first in the
// search order, its malloc is the one the child calls (Debian's redis-server links
// jemalloc).
struct Malloc {
    std::string name, lib;
};

// The Malloc for `name`, its library's path canonical (as /proc/PID/maps names it).
// Throws physmem::backing_unavailable when the library is not installed,
// std::invalid_argument for an unknown name.
Malloc for_child(const std::string& name);

// The allocators of a run that measures `alloc` beside `peers` (comma-separated): alloc
// first, then each peer not already named, in the order given. Throws as for_child, and
// std::invalid_argument naming an unknown peer.
std::vector<Malloc> for_children(const std::string& alloc, const std::string& peers);

// The non-empty items of a comma-separated list, in order.
std::vector<std::string> split_list(const std::string& csv);

// Which allocator serves malloc in this process: the object file that defines the
// `malloc` symbol the program calls (dladdr), mapped to a name of allocators(); the file
// name itself when it is none of them.
std::string active();

}  // namespace lab::preload
