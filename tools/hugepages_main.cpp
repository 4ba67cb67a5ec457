// tools/hugepages_main.cpp — physmem-hugepages: report hugetlb counters, or hold a
// reservation of hugetlb pages for another program's run and give it back.
//
//   physmem-hugepages status
//       One JSON object: for "2m" and "1g", supported, total (nr_hugepages), free,
//       reserved (resv_hugepages).
//   physmem-hugepages hold --size 1g|2m --free N
//       As root, raises nr_hugepages just enough that N pages are free, prints one JSON
//       line {"size","want","before","after","free","changed","note"} and flushes. When it
//       changed something it then waits until stdin reaches end of file or SIGINT, SIGTERM
//       or SIGHUP arrives, writes the old value back, prints {"restored":X,"now":Z} and
//       exits 0. When it changed nothing (not root, size unsupported, N already free,
//       another holder) it says why in "note" and exits 0 at once.
//   One reservation per machine at a time: an exclusive flock on kLockPath (the path the
//   harness used when it wrote sysfs itself); while another process holds it, nothing
//   is changed. Exit status 2: bad arguments.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "core/backing.hpp"
#include "core/hugepages.hpp"
#include "core/parse.hpp"
#include "port/os.hpp"

namespace {

using namespace physmem;

constexpr const char* kLockPath = "/run/lock/physmem-hugepages.lock";
constexpr std::uint64_t kMaxPages = std::uint64_t{1} << 40;  // --free above this is refused

struct HoldArgs {
    Backing size = Backing::best;  // page_1g or page_2m once parsed
    long want = -1;
};

int usage() {
    std::fputs("usage: physmem-hugepages status\n"
               "       physmem-hugepages hold --size 1g|2m --free N\n", stderr);
    return 2;
}

void print_counts(const char* name, Backing rung) {
    HugePageCounts c = huge_page_counts(page_size_of(rung));
    std::printf("\"%s\":{\"supported\":%s,\"total\":%ld,\"free\":%ld,\"reserved\":%ld}", name,
                c.supported ? "true" : "false", c.total, c.free, c.reserved);
}

int status() {
    std::printf("{");
    print_counts("2m", Backing::page_2m);
    std::printf(",");
    print_counts("1g", Backing::page_1g);
    std::printf("}\n");
    return 0;
}

bool parse_hold(int argc, char** argv, HoldArgs& a) {
    for (int i = 2; i + 1 < argc; i += 2) {
        std::string_view k = argv[i], v = argv[i + 1];
        if (k == "--size") a.size = parse_backing(v).value_or(Backing::best);
        else if (k == "--free") a.want = parse_count(v).value_or(kMaxPages + 1) <= kMaxPages
                                             ? static_cast<long>(*parse_count(v)) : -1;
        else return false;
    }
    return argc % 2 == 0 && core::is_hugetlb(a.size) && a.want >= 0;
}

// The first line: what was found and done.
void print_hold(const HoldArgs& a, long before, long after, const char* note, bool changed) {
    long free = huge_page_counts(page_size_of(a.size)).free;
    std::printf("{\"size\":\"%s\",\"want\":%ld,\"before\":%ld,\"after\":%ld,\"free\":%ld,"
                "\"changed\":%s,\"note\":\"%s\"}\n", core::rung_name(a.size), a.want, before, after,
                free, changed ? "true" : "false", note);
    std::fflush(stdout);
}

// Why nothing needs to or can be changed; nullptr when a change should be tried.
const char* no_change_reason(const HugePageCounts& c, long want) {
    if (!c.supported) return "this machine has no hugetlb pages of this size; no change";
    if (c.free >= want) return "enough pages free already; no change";
    if (!os::is_root()) return "not root; no change";
    return nullptr;
}

int hold_until_released(const HoldArgs& a, const core::HugeReservation& r, const char* note) {
    print_hold(a, r.before, r.after, note, true);
    os::wait_for_eof_or_signal();
    core::Restored back = core::restore_huge_pages(r, core::Restore::to_before);
    std::printf("{\"restored\":%ld,\"now\":%ld}\n", back.target, back.now);
    std::fflush(stdout);
    return 0;
}

int hold(const HoldArgs& a) {
    os::block_stop_signals();  // from here on a signal ends the wait, not the process
    std::size_t ps = page_size_of(a.size);
    HugePageCounts c = huge_page_counts(ps);
    if (const char* why = no_change_reason(c, a.want)) {
        print_hold(a, c.total, c.total, why, false);
        return 0;
    }
    int lock = os::lock_exclusive(kLockPath);
    if (lock < 0 && errno == EWOULDBLOCK) {
        print_hold(a, c.total, c.total, "another process holds the huge-page reservation "
                   "(/run/lock/physmem-hugepages.lock); no change", false);
        return 0;
    }
    c = huge_page_counts(ps);  // under the lock
    core::HugeReservation r = core::add_huge_pages(ps, a.want - c.free);
    if (!r.changed() || r.after == r.before) {
        print_hold(a, c.total, c.total, r.error ? std::strerror(r.error) : "the kernel gave no pages; no change", false);
        return 0;
    }
    const char* note = huge_page_counts(ps).free >= a.want ? "reserved; restored on end of stdin or a signal"
                                                          : "the kernel gave fewer pages than asked; restored on end of stdin or a signal";
    int rc = hold_until_released(a, r, note);
    os::unlock_file(lock);
    return rc;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 2 && std::string_view(argv[1]) == "status" && argc == 2) return status();
    HoldArgs a;
    if (argc >= 2 && std::string_view(argv[1]) == "hold" && parse_hold(argc, argv, a)) return hold(a);
    return usage();
}
