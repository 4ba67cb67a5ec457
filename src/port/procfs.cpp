// src/port/procfs.cpp — /proc readers (see os.hpp): smaps, pagemap and the THP mode.
// No heap allocation and no stdio (fixed buffers, read(2)), so the drop-in allocator and
// the memory core may call them at any time.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "port/os.hpp"

namespace physmem::os {

namespace {

// "Rss:   1234 kB" -> bytes, when line starts with key.
bool read_kb_field(const char* line, const char* key, std::size_t& out) noexcept {
    std::size_t n = std::strlen(key);
    if (std::strncmp(line, key, n) != 0) return false;
    out = std::strtoull(line + n, nullptr, 10) * 1024;
    return true;
}

// smaps header lines look like "7f..-7f.. rw-p 00000000 00:00 0   [path]".
bool parse_range(const char* line, std::uintptr_t& lo, std::uintptr_t& hi) noexcept {
    char* end = nullptr;
    lo = std::strtoull(line, &end, 16);
    if (!end || *end != '-') return false;
    hi = std::strtoull(end + 1, &end, 16);
    return end && *end == ' ';
}

void read_smaps_fields(const char* line, SmapsEntry& e) noexcept {
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

// Calls on_line(NUL-terminated line) for each line of fd until it returns false or the
// file ends. Lines longer than the 512-byte buffer are cut (smaps lines are short).
template <class F>
void for_each_line(int fd, F on_line) noexcept {
    char buf[4096];
    std::size_t have = 0;
    for (;;) {
        ssize_t got = ::read(fd, buf + have, sizeof buf - 1 - have);
        if (got <= 0) break;
        have += static_cast<std::size_t>(got);
        std::size_t start = 0;
        for (std::size_t i = 0; i < have; ++i) {
            if (buf[i] != '\n') continue;
            buf[i] = '\0';
            if (!on_line(buf + start)) return;
            start = i + 1;
        }
        if (start == 0 && have > 512) start = have;  // an over-long line: drop it
        std::memmove(buf, buf + start, have - start);
        have -= start;
    }
}

}  // namespace

SmapsEntry smaps_entry(const void* addr) noexcept {
    SmapsEntry e;
    int fd = ::open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return e;
    auto a = reinterpret_cast<std::uintptr_t>(addr);
    bool inside = false;
    for_each_line(fd, [&](const char* line) {
        std::uintptr_t lo, hi;
        if (parse_range(line, lo, hi)) {
            if (inside) return false;  // past our entry
            inside = a >= lo && a < hi;
            e.found = inside;
        } else if (inside) {
            read_smaps_fields(line, e);
        }
        return true;
    });
    ::close(fd);
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

ThpMode thp_mode() noexcept {
    int fd = ::open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ThpMode::absent;
    char buf[128] = {};
    ssize_t got = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    const char* l = got > 0 ? std::strchr(buf, '[') : nullptr;
    if (!l) return ThpMode::absent;
    if (std::strncmp(l, "[always]", 8) == 0) return ThpMode::always;
    if (std::strncmp(l, "[madvise]", 9) == 0) return ThpMode::madvise;
    if (std::strncmp(l, "[never]", 7) == 0) return ThpMode::never;
    return ThpMode::absent;
}

const char* to_string(ThpMode m) noexcept {
    switch (m) {
        case ThpMode::always: return "always";
        case ThpMode::madvise: return "madvise";
        case ThpMode::never: return "never";
        case ThpMode::absent: break;
    }
    return "absent";
}

}  // namespace physmem::os
