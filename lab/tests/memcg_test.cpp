// lab/common/memcg: the paging suite's memory cgroup — joined for the object's life, the
// process back in the group it came from afterwards, the group removed (also one a
// killed process left behind), a file's page cache dropped, a limit for a budget that
// bounds the data's page cache and not the process, and the read-ahead a budget must
// hold. Root and a cgroup-v1 memory controller, else skipped.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "common/memcg.hpp"

namespace {

namespace mc = lab::memcg;

bool exists(const std::string& path) {
    struct stat st{};
    return ::stat(path.c_str(), &st) == 0;
}

#define SKIP_WITHOUT_MEMCG()                                                       \
    do {                                                                           \
        if (std::string why = mc::unavailable_reason(); !why.empty()) GTEST_SKIP() << why; \
    } while (0)

TEST(Memcg, LimitJoinsAGroupAndReturnsToTheOriginalOne) {
    SKIP_WITHOUT_MEMCG();
    const std::string origin = mc::current_group();
    std::string path;
    {
        mc::Limit limit(mc::resident_bytes() + (256 << 20));
        path = limit.path();
        EXPECT_EQ(mc::current_group(), path);
        EXPECT_EQ(path.substr(0, path.rfind('/')), origin) << "a child of the group it was in";
        std::ifstream in(path + "/memory.limit_in_bytes");
        std::size_t got = 0;
        in >> got;
        EXPECT_GE(got, std::size_t{256} << 20);
    }
    EXPECT_EQ(mc::current_group(), origin) << "back where it was, not in the root";
    EXPECT_FALSE(exists(path)) << path << " removed";
}

TEST(Memcg, AGroupLeftByAKilledProcessIsRemovedByTheNextLimit) {
    SKIP_WITHOUT_MEMCG();
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {  // joins a group, then waits to be killed (no destructor runs)
        ::close(ready[0]);
        auto* limit = new mc::Limit(mc::resident_bytes() + (64 << 20));
        (void)limit;
        char c = 1;
        (void)!::write(ready[1], &c, 1);
        ::pause();
        ::_exit(0);
    }
    ::close(ready[1]);
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    ::close(ready[0]);
    const std::string left = mc::current_group() + "/physmem-lab-" + std::to_string(child);
    EXPECT_TRUE(exists(left));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    for (int i = 0; i < 100 && exists(left); ++i) {  // the cgroup empties once the task is reaped
        { mc::Limit limit(mc::resident_bytes() + (64 << 20)); }
        if (exists(left)) ::usleep(10000);
    }
    EXPECT_FALSE(exists(left)) << left << " still there";
}

TEST(Memcg, DropCacheLeavesNoPageOfTheFileCached) {
    SKIP_WITHOUT_MEMCG();
    char path[] = "/var/tmp/physmem-memcg-test-XXXXXX";
    int fd = ::mkstemp(path);
    ASSERT_GE(fd, 0);
    std::vector<char> data(4 << 20, 'x');
    ASSERT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
    EXPECT_EQ(mc::drop_cache(fd, data.size()), 0u);
    ::close(fd);
    ::unlink(path);
}

// A file of `bytes` (written, synced) in /var/tmp, removed with the object.
struct TempFile {
    char path[64] = "/var/tmp/physmem-memcg-test-XXXXXX";
    int fd = ::mkstemp(path);
    explicit TempFile(std::size_t bytes) {
        std::vector<char> chunk(1 << 20, 'x');
        for (std::size_t done = 0; fd >= 0 && done < bytes; done += chunk.size())
            if (::write(fd, chunk.data(), chunk.size()) != static_cast<ssize_t>(chunk.size())) break;
        ::fsync(fd);
    }
    ~TempFile() {
        ::close(fd);
        ::unlink(path);
    }
};

// What a child that paged a file inside limit_for(budget) saw.
struct Paged {
    std::size_t cached_pages = 0;  // the file's pages in memory after its passes
    std::uint64_t rss = 0, kmem = 0, cache = 0;
};

// Runs in a child: holds `own` bytes of its own memory (touched before joining, touched
// again inside), joins limit_for(budget), maps the file under `advice` and reads every
// word `passes` times in order. Returns the child's wait status; *out what it saw.
int page_in_child(const TempFile& f, std::size_t bytes, std::size_t budget, std::size_t own, int advice, int passes,
                  Paged* out) {
    int pipe_fd[2];
    if (::pipe(pipe_fd) != 0) return -1;
    pid_t child = ::fork();
    if (child == 0) {
        ::close(pipe_fd[0]);
        std::vector<char> mine(own, 1);  // the process's own pages, charged to the group it came from
        mc::Limit limit(mc::limit_for(budget));
        mc::drop_cache(f.fd, bytes);
        void* m = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, f.fd, 0);
        if (m == MAP_FAILED) ::_exit(2);
        ::madvise(m, bytes, advice);
        const auto* p = static_cast<const std::uint64_t*>(m);
        std::uint64_t sum = 0;
        for (int k = 0; k < passes; ++k) {
            for (std::size_t i = 0; i < bytes / sizeof *p; ++i) sum += p[i];
            for (std::size_t i = 0; i < mine.size(); i += 4096) sum += static_cast<unsigned char>(mine[i]++);
        }
        std::vector<char> grown(256 << 10, 2);  // new own pages, charged inside
        Paged r;
        r.cached_pages = mc::cached_pages(m, bytes);
        mc::Limit::Usage u = limit.usage();
        r.rss = u.rss, r.kmem = u.kmem, r.cache = u.cache;
        (void)!::write(pipe_fd[1], &r, sizeof r);
        ::_exit(sum == 0 && grown[0] == 0 ? 3 : 0);
    }
    ::close(pipe_fd[1]);
    int status = -1;
    bool got = ::read(pipe_fd[0], out, sizeof *out) == static_cast<ssize_t>(sizeof *out);
    ::close(pipe_fd[0]);
    ::waitpid(child, &status, 0);
    return got ? status : (WIFSIGNALED(status) ? status : -1);
}

// The limit bounds the data's page cache at about the budget, whatever the process held
// before: issue 30's limit (budget + resident bytes) gave a 4 MiB budget 16+ MiB of
// cache here (nothing held before is charged to the new group), and at small budgets the
// group was OOM-killed. The child holds 4x the budget itself and survives.
TEST(Memcg, ALimitForABudgetBoundsTheDataNotTheProcess) {
    SKIP_WITHOUT_MEMCG();
    const std::size_t budget = 4 << 20, bytes = 16 << 20, page = 4096;
    TempFile f(bytes);
    ASSERT_GE(f.fd, 0);
    Paged r;
    int status = page_in_child(f, bytes, budget, 4 * budget, MADV_RANDOM, 2, &r);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "the child died: " << (WIFSIGNALED(status) ? ::strsignal(WTERMSIG(status)) : "no report");
    EXPECT_LE(r.cached_pages * page, mc::limit_for(budget)) << "the data's page cache exceeds the limit";
    EXPECT_GE(r.cached_pages * page, budget / 2) << "the data did not get about the budget";
    EXPECT_LE(r.cache, mc::limit_for(budget));
    EXPECT_LE(r.rss + r.kmem, mc::kOwnAllowance) << "the process's own charge exceeds the allowance";
}

TEST(Memcg, ABudgetMustHoldTwoReadAheadWindows) {
    TempFile f(1 << 20);
    ASSERT_GE(f.fd, 0);
    const std::size_t w = mc::readahead_window(f.fd, MADV_NORMAL);
    if (w == 0) GTEST_SKIP() << "no read_ahead_kb for " << f.path << "'s device";
    EXPECT_EQ(mc::readahead_window(f.fd, MADV_SEQUENTIAL), 2 * w);
    EXPECT_EQ(mc::readahead_window(f.fd, MADV_RANDOM), 0u);
    EXPECT_NE(mc::paging_unfit_reason(f.fd, MADV_NORMAL, 2 * w - 4096, 8 * w), "");
    EXPECT_NE(mc::paging_unfit_reason(f.fd, MADV_SEQUENTIAL, 2 * w, 8 * w), "");
    EXPECT_EQ(mc::paging_unfit_reason(f.fd, MADV_NORMAL, 2 * w, 8 * w), "");
    EXPECT_EQ(mc::paging_unfit_reason(f.fd, MADV_RANDOM, 4096, 8 * w), "") << "no read-ahead under MADV_RANDOM";
    EXPECT_EQ(mc::paging_unfit_reason(f.fd, MADV_SEQUENTIAL, 8 * w, 8 * w), "") << "data that fits needs no eviction";
}

// At the smallest budget paging_unfit_reason() accepts for read-around (two windows),
// a scan of twice the budget survives and its cache stays bounded (at a quarter of the
// window, the read-around filled the group with pages under I/O and the fault's own
// page was OOM-killed every time here).
TEST(Memcg, AScanAtTheSmallestFitBudgetSurvivesTheReadAhead) {
    SKIP_WITHOUT_MEMCG();
    TempFile probe(1 << 20);
    ASSERT_GE(probe.fd, 0);
    const std::size_t budget = std::max<std::size_t>(2 * mc::readahead_window(probe.fd, MADV_NORMAL), 4 << 20);
    const std::size_t bytes = 2 * budget;
    ASSERT_EQ(mc::paging_unfit_reason(probe.fd, MADV_NORMAL, budget, bytes), "");
    TempFile f(bytes);
    ASSERT_GE(f.fd, 0);
    Paged r;
    int status = page_in_child(f, bytes, budget, 0, MADV_NORMAL, 2, &r);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "the child died: " << (WIFSIGNALED(status) ? ::strsignal(WTERMSIG(status)) : "no report");
    EXPECT_LE(r.cached_pages * 4096, mc::limit_for(budget));
}

}  // namespace
