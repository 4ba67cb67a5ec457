// lab/common/memcg: the paging suite's memory cgroup — joined for the object's life, the
// process back in the group it came from afterwards, the group removed (also one a
// killed process left behind), a file's page cache dropped. Root and a cgroup-v1 memory
// controller, else skipped.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

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

}  // namespace
