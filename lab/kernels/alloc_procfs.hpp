// lab/kernels/alloc_procfs.hpp — the process's memory as /proc reports it, for the
// allocator suite: peak RSS (VmHWM) and how much of the anonymous memory (the heap,
// with thread stacks and the program's own small data) sits on huge pages.
//
// Read from /proc/self/smaps_rollup (one summed entry for every mapping): AnonHugePages
// counts THP, Private_Hugetlb + Shared_Hugetlb hugetlb pages (not part of Rss or
// Anonymous). Share = huge / (Anonymous + hugetlb). Every call reads the files afresh;
// fields that are missing read as 0.
#pragma once

#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>

namespace lab::alloc::procfs {

// The value of "Key:   N kB" lines of `path`, in bytes; 0 when absent.
inline std::size_t field_kb(const std::string& path, const std::string& key) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line))
        if (line.compare(0, key.size() + 1, key + ":") == 0) {
            std::istringstream v(line.substr(key.size() + 1));
            std::size_t kb = 0;
            v >> kb;
            return kb << 10;
        }
    return 0;
}

struct Heap {
    std::size_t anon = 0;     // Anonymous (4 KiB and THP), bytes
    std::size_t thp = 0;      // AnonHugePages, bytes
    std::size_t hugetlb = 0;  // Private_Hugetlb + Shared_Hugetlb, bytes
    std::size_t total() const noexcept { return anon + hugetlb; }
    double huge_share() const noexcept { return total() ? double(thp + hugetlb) / double(total()) : 0.0; }
};

inline Heap heap_now() {
    const std::string f = "/proc/self/smaps_rollup";
    return {field_kb(f, "Anonymous"), field_kb(f, "AnonHugePages"),
            field_kb(f, "Private_Hugetlb") + field_kb(f, "Shared_Hugetlb")};
}

// Peak resident set (VmHWM), bytes.
inline std::size_t peak_rss() { return field_kb("/proc/self/status", "VmHWM"); }

}  // namespace lab::alloc::procfs
