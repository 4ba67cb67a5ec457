// lab/common/memcg.cpp — see memcg.hpp.
#include "memcg.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace lab::memcg {
namespace {

constexpr const char* kRoot = "/sys/fs/cgroup/memory";
constexpr const char* kPrefix = "physmem-lab-";

void write_file(const std::string& path, const std::string& value) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) throw std::runtime_error("memory cgroup: cannot open " + path + ": " + std::strerror(errno));
    bool ok = std::fputs(value.c_str(), f) >= 0;
    ok = std::fclose(f) == 0 && ok;
    if (!ok) throw std::runtime_error("memory cgroup: writing " + value + " to " + path + " failed: " + std::strerror(errno));
}

std::uint64_t read_number(const std::string& path) {
    std::ifstream in(path);
    std::uint64_t v = 0;
    in >> v;
    return v;
}

// Removes the groups under `dir` of processes that died inside one (SIGKILL skips
// ~Limit): names kPrefix<pid> whose pid is gone. rmdir refuses a group that still has tasks.
void remove_stale_groups(const std::string& dir) {
    DIR* d = ::opendir(dir.c_str());
    if (!d) return;
    const std::string prefix = kPrefix;
    while (dirent* e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name.rfind(prefix, 0) != 0) continue;
        char* end = nullptr;
        long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
        if (pid > 0 && *end == '\0' && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
            ::rmdir((dir + "/" + name).c_str());
    }
    ::closedir(d);
}

}  // namespace

std::string current_group() {
    std::ifstream in("/proc/self/cgroup");
    std::string line;
    while (std::getline(in, line)) {
        // hierarchy-id:controller,controller:/path
        auto a = line.find(':'), b = line.find(':', a + 1);
        if (a == std::string::npos || b == std::string::npos) continue;
        bool memory = false;  // the controllers field is a comma-separated list
        for (std::size_t i = a + 1; i < b && !memory;) {
            std::size_t end = std::min(line.find(',', i), b);
            memory = line.compare(i, end - i, "memory") == 0;
            i = end + 1;
        }
        if (!memory) continue;
        std::string path = line.substr(b + 1);
        return path == "/" ? kRoot : kRoot + path;
    }
    return kRoot;
}

std::string unavailable_reason() {
    if (::geteuid() != 0) return "needs root (a memory cgroup is created and joined)";
    if (::access((std::string(kRoot) + "/memory.limit_in_bytes").c_str(), W_OK) != 0)
        return std::string("no writable cgroup-v1 memory controller at ") + kRoot;
    return "";
}

Limit::Limit(std::size_t limit) {
    if (std::string why = unavailable_reason(); !why.empty()) throw std::runtime_error(why);
    origin_ = current_group();
    remove_stale_groups(origin_);
    if (origin_ != kRoot) remove_stale_groups(kRoot);  // left by runs that made them at the root
    // A child of the group the process is in, so that group's own limits and accounting
    // still hold; of the root when that group takes no children.
    std::string name = std::string("/") + kPrefix + std::to_string(::getpid());
    path_ = origin_ + name;
    if (::mkdir(path_.c_str(), 0755) != 0 && errno != EEXIST) {
        int error = errno;
        path_ = kRoot + name;
        if (origin_ == kRoot || (::mkdir(path_.c_str(), 0755) != 0 && errno != EEXIST))
            throw std::runtime_error("memory cgroup: mkdir " + origin_ + name + ": " + std::strerror(error));
    }
    try {
        write_file(path_ + "/memory.limit_in_bytes", std::to_string(limit));
        write_file(path_ + "/cgroup.procs", std::to_string(::getpid()));
    } catch (...) {
        ::rmdir(path_.c_str());
        throw;
    }
}

Limit::~Limit() {
    try {
        write_file(origin_ + "/cgroup.procs", std::to_string(::getpid()));
    } catch (...) {
        try {  // the group it came from is gone: the root holds every process
            write_file(std::string(kRoot) + "/cgroup.procs", std::to_string(::getpid()));
        } catch (...) {
        }
    }
    ::rmdir(path_.c_str());
}

void Limit::set(std::size_t limit) { write_file(path_ + "/memory.limit_in_bytes", std::to_string(limit)); }

std::uint64_t Limit::max_usage() const { return read_number(path_ + "/memory.max_usage_in_bytes"); }
std::uint64_t Limit::failcnt() const { return read_number(path_ + "/memory.failcnt"); }

Limit::Usage Limit::usage() const {
    Usage u;
    std::ifstream in(path_ + "/memory.stat");
    std::string key;
    std::uint64_t v = 0;
    while (in >> key >> v) {
        if (key == "cache") u.cache = v;
        else if (key == "mapped_file") u.mapped_file = v;
        else if (key == "rss") u.rss = v;
    }
    u.kmem = read_number(path_ + "/memory.kmem.usage_in_bytes");
    return u;
}

std::size_t limit_for(std::size_t budget) { return budget + kOwnAllowance; }

std::size_t readahead_window(int fd, int advice) {
    if (advice == MADV_RANDOM) return 0;
    struct stat st{};
    if (::fstat(fd, &st) != 0) return 0;
    // The file system's backing device (what the kernel's read-ahead state starts from),
    // else its block device's queue; a partition has none of its own, its disk (the parent
    // directory in sysfs) has.
    const std::string dev = std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
    std::size_t kb = 0;
    for (const std::string& path : {"/sys/class/bdi/" + dev + "/read_ahead_kb", "/sys/dev/block/" + dev + "/queue/read_ahead_kb",
                                    "/sys/dev/block/" + dev + "/../queue/read_ahead_kb"}) {
        std::ifstream in(path);
        if (in >> kb) break;
        kb = 0;
    }
    return kb * 1024 * (advice == MADV_SEQUENTIAL ? 2 : 1);
}

std::string paging_unfit_reason(int fd, int advice, std::size_t budget, std::size_t data) {
    const std::size_t window = readahead_window(fd, advice);
    if (data <= budget || 2 * window <= budget) return "";
    return "a budget of " + std::to_string(budget >> 10) + " KiB cannot hold the kernel's read-ahead for this file (" +
           std::to_string(window >> 10) + " KiB a window" + (advice == MADV_SEQUENTIAL ? " under MADV_SEQUENTIAL" : "") +
           ", up to two in flight): it would evict its own unread pages and a fault finding every page under I/O is "
           "killed by the memory cgroup's OOM killer (the device's read_ahead_kb is a system setting, left as it is)";
}

std::size_t drop_cache(int fd, std::size_t bytes) {
    ::fsync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return 0;
    std::size_t cached = cached_pages(p, bytes);
    ::munmap(p, bytes);
    return cached;
}

void willneed(const void* p, std::size_t bytes) noexcept {
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto at = reinterpret_cast<std::uintptr_t>(p), from = at & ~(page - 1);
    ::madvise(reinterpret_cast<void*>(from), at + bytes - from, MADV_WILLNEED);
}

std::size_t cached_pages(const void* p, std::size_t bytes) {
    std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> v((bytes + page - 1) / page);
    std::size_t cached = 0;
    if (::mincore(const_cast<void*>(p), bytes, v.data()) == 0)
        for (unsigned char c : v) cached += c & 1;
    return cached;
}

namespace {

void read_faults(Counters& c) {
    rusage r{};
    ::getrusage(RUSAGE_SELF, &r);
    c.minor_faults = static_cast<std::uint64_t>(r.ru_minflt);
    c.major_faults = static_cast<std::uint64_t>(r.ru_majflt);
}

void read_io(Counters& c) {
    std::ifstream io("/proc/self/io");
    std::string key;
    std::uint64_t v;
    while (io >> key >> v) {
        if (key == "read_bytes:") c.read_bytes = v;
        else if (key == "write_bytes:") c.write_bytes = v;
    }
}

}  // namespace

Counters counters() {
    Counters c;
    read_io(c);
    read_faults(c);
    return c;
}

Counters counters_end() {
    Counters c;
    read_faults(c);
    read_io(c);
    return c;
}

Counters operator-(const Counters& a, const Counters& b) {
    return {a.minor_faults - b.minor_faults, a.major_faults - b.major_faults, a.read_bytes - b.read_bytes,
            a.write_bytes - b.write_bytes};
}

Counters& operator+=(Counters& a, const Counters& b) {
    a.minor_faults += b.minor_faults;
    a.major_faults += b.major_faults;
    a.read_bytes += b.read_bytes;
    a.write_bytes += b.write_bytes;
    return a;
}

std::size_t resident_bytes() {
    std::ifstream in("/proc/self/statm");
    std::size_t size = 0, resident = 0;
    in >> size >> resident;
    return resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace lab::memcg
