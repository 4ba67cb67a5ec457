// lab/common/preload.cpp — see preload.hpp. The lab's only dlsym calls; exec is process.hpp's.
#include "preload.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "physmem/region.hpp"   // backing_unavailable
#include "process.hpp"

namespace lab::preload {
namespace {

constexpr const char* kDone = "PHYSMEM_LAB_PRELOADED";   // set on the re-exec: no loops
constexpr const char* kLibDir = "/usr/lib/x86_64-linux-gnu/";

struct Peer {
    const char* name;
    const char* file;   // in kLibDir (Debian's package); "" for glibc
    const char* tag;    // substring of the object that defines malloc
};

const Peer kPeers[] = {
    {"glibc", "", "libc.so"},
    {"jemalloc", "libjemalloc.so.2", "jemalloc"},
    {"tcmalloc", "libtcmalloc_minimal.so.4", "tcmalloc"},
    {"mimalloc", "libmimalloc.so.2", "mimalloc"},
    {"physmem", "libphysmem.so", "physmem"},
};

const Peer& peer(const std::string& name) {
    for (const Peer& p : kPeers)
        if (name == p.name) return p;
    throw std::invalid_argument("unknown allocator '" + name + "' (glibc, jemalloc, tcmalloc, mimalloc, physmem)");
}

bool readable(const std::string& path) { return !path.empty() && ::access(path.c_str(), R_OK) == 0; }

std::string self_dir() {
    char buf[4096];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return "";
    std::string exe(buf, static_cast<std::size_t>(n));
    return exe.substr(0, exe.rfind('/') + 1);
}

std::string physmem_library() {
    if (const char* env = std::getenv("PHYSMEM_MALLOC_LIB"); env && *env) return env;
    for (const std::string& p : {self_dir() + "../src/malloc/libphysmem.so", self_dir() + "../lib/libphysmem.so",
                                 std::string("/usr/local/lib/libphysmem.so")})
        if (readable(p)) return p;
    return "";
}

[[noreturn]] void reexec(const std::string& name, const std::string& lib) {
    if (lib.empty())
        ::unsetenv("LD_PRELOAD");
    else
        ::setenv("LD_PRELOAD", lib.c_str(), 1);
    ::setenv(kDone, name.c_str(), 1);
    process::reexec_self("LD_PRELOAD of " + name);
}

}  // namespace

const std::vector<std::string>& allocators() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const Peer& p : kPeers) v.emplace_back(p.name);
        return v;
    }();
    return names;
}

std::string library(const std::string& name, std::string* why) {
    const Peer& p = peer(name);
    if (!*p.file) return "";
    std::string path = name == "physmem" ? physmem_library() : std::string(kLibDir) + p.file;
    if (readable(path)) return path;
    if (why)
        *why = name == "physmem" ? "libphysmem.so not found (build it, or set PHYSMEM_MALLOC_LIB)"
                                 : std::string(kLibDir) + p.file + " not installed (apt-get install its Debian package)";
    return "";
}

std::string active() {
    void* sym = ::dlsym(RTLD_DEFAULT, "malloc");
    Dl_info info{};
    if (!sym || !::dladdr(sym, &info) || !info.dli_fname) return "unknown";
    std::string file = info.dli_fname;
    for (const Peer& p : kPeers)
        if (file.find(p.tag) != std::string::npos) return p.name;
    return file;
}

void ensure(const std::string& name) {
    peer(name);   // validates the name
    if (active() == name) return;
    const char* done = std::getenv(kDone);
    if (done && name == done)
        throw std::runtime_error("LD_PRELOAD of " + name + " did not take: malloc is served by " + active());
    std::string why;
    std::string lib = library(name, &why);
    if (name != "glibc" && lib.empty()) throw physmem::backing_unavailable(why);
    reexec(name, lib);
}

Malloc for_child(const std::string& name) {
    if (name == "glibc") return {name, process::object_of(reinterpret_cast<void*>(&::getpid))};
    std::string why;
    std::string lib = library(name, &why);
    if (lib.empty()) throw physmem::backing_unavailable(why);
    return {name, std::filesystem::weakly_canonical(lib).string()};
}

std::vector<Malloc> for_children(const std::string& alloc, const std::string& peers) {
    std::vector<Malloc> all{for_child(alloc)};
    for (const std::string& p : split_list(peers))  // an unknown name: library() throws
        if (std::none_of(all.begin(), all.end(), [&](const Malloc& m) { return m.name == p; }))
            all.push_back(for_child(p));
    return all;
}

std::vector<std::string> split_list(const std::string& csv) {
    std::vector<std::string> out;
    std::istringstream in(csv);
    for (std::string x; std::getline(in, x, ',');)
        if (!x.empty()) out.push_back(x);
    return out;
}

}  // namespace lab::preload
