// lab/common/process.cpp — see process.hpp. The lab's only exec, personality and dlopen calls.
#include "process.hpp"

#include <dlfcn.h>
#include <sys/personality.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

extern char** environ;

namespace lab::process {

std::vector<std::string> own_argv() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> out;
    for (std::size_t at = 0; at < all.size();) {
        std::size_t end = all.find('\0', at);
        if (end == std::string::npos) end = all.size();
        out.push_back(all.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

void reexec_self(const std::string& why) {
    std::vector<std::string> args = own_argv();
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv("/proc/self/exe", argv.data());
    throw std::runtime_error("re-exec (" + why + ") failed: " + std::strerror(errno));
}

bool aslr_active() {
    int persona = ::personality(0xffffffff);
    if (persona != -1 && (persona & ADDR_NO_RANDOMIZE)) return false;
    std::ifstream in("/proc/sys/kernel/randomize_va_space");
    int mode = 2;
    return !(in >> mode) || mode != 0;
}

bool set_no_randomize(bool on) {
    int persona = ::personality(0xffffffff);
    if (persona == -1) return false;
    unsigned long want = on ? (persona | ADDR_NO_RANDOMIZE) : (persona & ~ADDR_NO_RANDOMIZE);
    return ::personality(want) != -1;
}

std::size_t env_bytes() {
    std::size_t n = 0;
    for (char** e = environ; e && *e; ++e) n += std::strlen(*e) + 1;
    return n;
}

void* library_symbol(const std::string& path, const char* name, std::string* why) {
    void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        if (why) *why = ::dlerror();
        return nullptr;
    }
    void* sym = ::dlsym(lib, name);
    if (!sym && why) *why = path + " has no symbol " + name;
    return sym;
}

std::string object_of(const void* p) {
    Dl_info info{};
    return ::dladdr(p, &info) && info.dli_fname ? info.dli_fname : "";
}

}  // namespace lab::process
