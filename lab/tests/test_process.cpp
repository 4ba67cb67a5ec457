// lab/common/process: run_child's output and exit, a missing executable as an error, and
// children that die with their parent — run_child's (a load generator the lab waits on)
// as spawn()'s (a server): a parent killed mid-run leaves nothing running.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/process.hpp"

namespace {

namespace process = lab::process;

TEST(Process, RunChildGivesOutputAndExit) {
    process::ChildResult r = process::run_child("/bin/sh", {"sh", "-c", "echo out; echo err >&2; exit 3"}, {}, true);
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_EQ(r.status, "exit 3");
    EXPECT_NE(r.out.find("out"), std::string::npos);
    EXPECT_NE(r.out.find("err"), std::string::npos);
    EXPECT_THROW(process::run_child("/nonexistent/program", {"x"}, {}), std::runtime_error);
}

// A child leaves this process's memory as it was: writing pages it had written before
// takes no page fault afterwards. (A fork marks every private page copy-on-write; the
// paging program runs fio beside its timed passes, which then counted a fault per page
// they wrote.)
TEST(Process, RunChildLeavesTheParentsPagesWritable) {
    std::vector<char> mem(std::size_t{8} << 20);
    for (std::size_t i = 0; i < mem.size(); i += 4096) mem[i] = 1;  // resident and writable
    rusage before{}, after{};
    ASSERT_EQ(::getrusage(RUSAGE_SELF, &before), 0);
    process::ChildResult r = process::run_child("/bin/true", {"true"}, {});
    ASSERT_EQ(r.exit_code, 0);
    for (std::size_t i = 0; i < mem.size(); i += 4096) mem[i] = 2;
    ASSERT_EQ(::getrusage(RUSAGE_SELF, &after), 0);
    // A few faults may come from the call itself (its pipe, the strings); a fork would
    // have cost one a page written: 2048 here.
    EXPECT_LT(after.ru_minflt - before.ru_minflt, 64) << "pages of the parent were left copy-on-write";
}

// Whether `pid` has ended: gone, or a zombie nobody reaped yet (a container's init may not).
bool ended(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return true;
    const std::size_t close = line.rfind(')');
    return close != std::string::npos && line.size() > close + 2 && line[close + 2] == 'Z';
}

// A helper process runs `start` (which starts a child that would sleep 60 s and writes
// its pid to `pid_file`), is killed, and the child must end within 5 s.
template <class Start>
void child_dies_with_its_parent(Start start) {
    const std::string pid_file = ::testing::TempDir() + "physmem-process-test-" + std::to_string(::getpid());
    ::unlink(pid_file.c_str());
    const pid_t helper = ::fork();
    ASSERT_GE(helper, 0);
    if (helper == 0) {
        try {
            start(pid_file);
        } catch (...) {
        }
        ::_exit(0);
    }
    pid_t child = 0;
    for (int i = 0; i < 500 && child == 0; ++i) {
        std::ifstream in(pid_file);
        if (!(in >> child)) child = 0, std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_GT(child, 0) << "the child never started";
    ::kill(helper, SIGKILL);
    int status = 0;
    ::waitpid(helper, &status, 0);
    bool gone = false;
    for (int i = 0; i < 500 && !(gone = ended(child)); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!gone) ::kill(child, SIGKILL);
    ::unlink(pid_file.c_str());
    EXPECT_TRUE(gone) << "child " << child << " outlived its killed parent";
}

const char* kSleeper = "echo $$ > \"$0\"; exec sleep 60";

TEST(Process, RunChildDiesWithItsParent) {
    child_dies_with_its_parent([](const std::string& f) { process::run_child("/bin/sh", {"sh", "-c", kSleeper, f}, {}); });
}

TEST(Process, SpawnedChildDiesWithItsParent) {
    child_dies_with_its_parent([](const std::string& f) {
        process::spawn("/bin/sh", {"sh", "-c", kSleeper, f}, {}, "/dev/null");
        ::pause();
    });
}

}  // namespace
