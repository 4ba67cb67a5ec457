// src/port/procfs.cpp — /proc and /sys readers and writers (see os.hpp).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "port/os.hpp"

namespace physmem::os {

namespace {

// "Rss:   1234 kB" -> bytes, when line starts with key.
bool read_kb_field(const char* line, const char* key, std::size_t& out) {
    std::size_t n = std::strlen(key);
    if (std::strncmp(line, key, n) != 0) return false;
    out = std::strtoull(line + n, nullptr, 10) * 1024;
    return true;
}

// smaps header lines look like "7f..-7f.. rw-p 00000000 00:00 0   [path]".
bool parse_range(const char* line, std::uintptr_t& lo, std::uintptr_t& hi) {
    char* end = nullptr;
    lo = std::strtoull(line, &end, 16);
    if (!end || *end != '-') return false;
    hi = std::strtoull(end + 1, &end, 16);
    return end && *end == ' ';
}

void read_smaps_fields(const char* line, SmapsEntry& e) {
    std::size_t v = 0;
    if (read_kb_field(line, "KernelPageSize:", v)) e.kernel_page_size = v;
    else if (read_kb_field(line, "Rss:", v)) e.rss = v;
    else if (read_kb_field(line, "AnonHugePages:", v)) e.anon_huge = v;
    else if (read_kb_field(line, "Private_Hugetlb:", v)) e.hugetlb += v;
    else if (read_kb_field(line, "Shared_Hugetlb:", v)) e.hugetlb += v;
    else if (read_kb_field(line, "Locked:", v)) e.locked = v;
    else if (std::strncmp(line, "THPeligible:", 12) == 0)
        e.thp_eligible = std::strtol(line + 12, nullptr, 10) == 1;
}

}  // namespace

SmapsEntry smaps_entry(const void* addr) noexcept {
    SmapsEntry e;
    std::FILE* f = std::fopen("/proc/self/smaps", "re");
    if (!f) return e;
    auto a = reinterpret_cast<std::uintptr_t>(addr);
    char line[512];
    bool inside = false;
    while (std::fgets(line, sizeof line, f)) {
        std::uintptr_t lo, hi;
        if (parse_range(line, lo, hi)) {
            if (inside) break;  // past our entry
            inside = a >= lo && a < hi;
            e.found = inside;
        } else if (inside) {
            read_smaps_fields(line, e);
        }
    }
    std::fclose(f);
    return e;
}

std::optional<std::uint64_t> physical_address(const void* addr) noexcept {
    int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    auto a = reinterpret_cast<std::uintptr_t>(addr);
    std::size_t page = base_page_size();
    std::uint64_t entry = 0;
    off_t off = static_cast<off_t>((a / page) * sizeof entry);
    ssize_t got = ::pread(fd, &entry, sizeof entry, off);
    ::close(fd);
    if (got != static_cast<ssize_t>(sizeof entry)) return std::nullopt;
    bool present = entry >> 63;
    std::uint64_t pfn = entry & ((std::uint64_t{1} << 55) - 1);
    if (!present || pfn == 0) return std::nullopt;  // pfn hidden from non-root
    return pfn * page + a % page;
}

std::string thp_mode() noexcept {
    std::FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");
    if (!f) return "";
    char buf[128] = {};
    std::fgets(buf, sizeof buf, f);
    std::fclose(f);
    const char* l = std::strchr(buf, '[');
    const char* r = l ? std::strchr(l, ']') : nullptr;
    return l && r ? std::string(l + 1, r) : std::string();
}

}  // namespace physmem::os
