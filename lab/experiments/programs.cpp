// lab/experiments/programs.cpp — small real programs under each malloc: Debian's python3
// and sqlite3 with the allocator preloaded, their start-up and a workload, timed and
// their peak RSS read, side by side.
//
//   physmem_lab_programs --variant malloc-thp --size 16M --param alloc=physmem
//                        --param peers=glibc,jemalloc,tcmalloc,mimalloc     (one line)
//
// Variant malloc-B as in redis.cpp: physmem (as alloc or a peer) runs with
// PHYSMEM_MALLOC_BACKING=B, the others on their own defaults (as alloc: malloc-4k only);
// every allocator is preloaded, glibc's too (its libc.so.6).
//
// Programs (--param programs, comma-separated; the first is the record's timing, the
// others its phases):
//   python-start  python3 -c 'import sys; print(sys.version_info[0])': the interpreter's
//                 start-up and exit
//   python-work   python3: a dict of --size / 320 string keys holding lists of 0-6 floats,
//                 dumped to JSON, and 20 bytearrays of up to 1 MiB; prints the sizes and
//                 the JSON's SHA-256
//   sqlite-start  sqlite3 :memory: 'select 1;'
//   sqlite-work   sqlite3 :memory:: a table of --size / 80 rows, an index on its text
//                 column and a query over both
// Each run is one child: GNU time (the peak RSS the kernel keeps for the child, %M) runs
// env, which sets LD_PRELOAD and execs the program, so neither time nor this program is
// preloaded, and the child's peak starts from env's (~1 MiB), not from this process's (a
// child's peak RSS includes what its process held before exec). Wall time is taken here
// around the child. Before each of --param alloc's runs, every peer runs the same
// program (the passes interleaved: this machine's speed drifts between minutes). Every
// run must exit 0 with no word from the dynamic loader, and print what the first
// allocator's run printed.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "context.hpp"
#include "preload.hpp"
#include "process.hpp"

namespace {

namespace fs = std::filesystem;
using lab::preload::Malloc;

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_programs",
    .experiment = "programs",
    .unit = "run",
    .kinds = {lab::Kind::malloc},
    .default_block_size = 64 << 10,
    .params = {{"alloc", "glibc", {"glibc", "physmem", "jemalloc", "tcmalloc", "mimalloc"}, "which malloc serves the programs"},
               {"peers", "", {}, "allocators measured beside it, comma-separated (e.g. glibc,jemalloc): their runs interleaved with its own"},
               {"programs", "python-start,python-work,sqlite-start,sqlite-work", {}, "programs run, comma-separated (python-start, python-work, sqlite-start, sqlite-work)"}},
};

// An installed tool: the system's own (/usr/bin, /bin: a version manager's shim on PATH
// would be measured with it), else one on PATH.
std::string tool(const std::string& name, const std::string& package) {
    for (const char* dir : {"/usr/bin/", "/bin/"})
        if (::access((dir + name).c_str(), X_OK) == 0) return dir + name;
    std::string p = lab::process::find_on_path(name);
    if (p.empty()) throw physmem::backing_unavailable(name + " not installed (apt-get install " + package + ")");
    return p;
}

// python-work's script: argv[1] keys.
constexpr const char* kPythonWork = R"(import hashlib, json, random, sys
n = int(sys.argv[1])
random.seed(4)
d = {}
for i in range(n):
    d[str(i)] = [random.random() for _ in range(i % 7)]
blob = json.dumps(d, sort_keys=True)
big = [bytearray(random.randrange(1 << 20)) for _ in range(20)]
for b in big:
    b[-1:] = b"x"
print(len(d), sum(len(b) for b in big), hashlib.sha256(blob.encode()).hexdigest())
)";

// sqlite-work's statements over `rows` rows.
std::string sqlite_work(std::uint64_t rows) {
    return "create table t(a integer primary key, b text, c real);\n"
           "with recursive n(i) as (select 1 union all select i + 1 from n where i < " + std::to_string(rows) + ")\n"
           "insert into t select i, hex(i * i) || substr('abcdefghij', 1 + i % 10), i * 0.5 from n;\n"
           "create index tb on t(b);\n"
           "select count(*), sum(length(b)), sum(c), count(distinct substr(b, -3)) from t;\n";
}

// One program: its name and the command that runs it (argv, the executable first).
struct Program {
    std::string name;
    std::vector<std::string> argv;
};

// The program `name` for a run of `size_bytes` (see the file comment). Usage error for an
// unknown name.
Program program(const std::string& name, std::uint64_t size_bytes) {
    if (name == "python-start") return {name, {tool("python3", "python3"), "-c", "import sys; print(sys.version_info[0])"}};
    if (name == "python-work")
        return {name, {tool("python3", "python3"), "-c", kPythonWork, std::to_string(std::max<std::uint64_t>(size_bytes / 320, 1))}};
    if (name == "sqlite-start") return {name, {tool("sqlite3", "sqlite3"), ":memory:", "select 1;"}};
    if (name == "sqlite-work")
        return {name, {tool("sqlite3", "sqlite3"), ":memory:", sqlite_work(std::max<std::uint64_t>(size_bytes / 80, 1))}};
    lab::usage_error(kSpec, "--param programs: unknown program '" + name + "'");
}

// What one run gave.
struct Run {
    double wall_ns = 0, cpu_s = 0;
    std::uint64_t peak_rss_bytes = 0;
    std::string out;
    bool ok = false;  // exit 0, GNU time's report read, no word from the dynamic loader
};

// Our environment without a preload or physmem's backing (the child's come with env).
std::vector<std::string> child_env() {
    std::vector<std::string> env;
    for (const std::string& e : lab::process::own_env())
        if (e.rfind("LD_PRELOAD=", 0) != 0 && e.rfind("PHYSMEM_MALLOC_BACKING=", 0) != 0) env.push_back(e);
    return env;
}

// What runs a program: GNU time, env, and the file time writes its report to.
struct Harness {
    std::string time, env, report;
};

// Runs `p` under `m` once (see the file comment).
Run run_once(const lab::Settings& s, const Harness& h, const Malloc& m, const Program& p) {
    std::vector<std::string> argv{h.time, "-f", "%M %U %S", "-o", h.report, h.env, "LD_PRELOAD=" + m.lib};
    if (m.name == "physmem") argv.push_back("PHYSMEM_MALLOC_BACKING=" + std::string(physmem::to_string(s.backing)));
    argv.insert(argv.end(), p.argv.begin(), p.argv.end());
    const auto t0 = std::chrono::steady_clock::now();
    lab::process::ChildResult r = lab::process::run_child(h.time, argv, child_env(), true);
    Run out;
    out.wall_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    out.out = std::move(r.out);
    std::ifstream in(h.report);
    double kb = 0, user = 0, sys = 0;
    const bool read = static_cast<bool>(in >> kb >> user >> sys);
    out.peak_rss_bytes = static_cast<std::uint64_t>(kb) * 1024;
    out.cpu_s = user + sys;
    out.ok = r.exit_code == 0 && read && kb > 0 && out.out.find("ld.so") == std::string::npos;
    return out;
}

std::uint64_t fnv1a(const std::string& s) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
    return h;
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const std::string& a = s.param("alloc");
    if (a != "physmem" && s.backing != physmem::Backing::page_4k)
        lab::usage_error(kSpec, "--variant: " + a + " runs on its own defaults: malloc-4k only");
    std::vector<Program> progs;
    for (const std::string& n : lab::preload::split_list(s.param("programs"))) progs.push_back(program(n, s.size_bytes));
    if (progs.empty()) lab::usage_error(kSpec, "--param programs: name at least one");
    const Harness h{tool("time", "time"), tool("env", "coreutils"),
                    (fs::temp_directory_path() / ("physmem-programs-" + std::to_string(::getpid()))).string()};
    const std::vector<Malloc> all = lab::preload::for_children(s.param("alloc"), s.param("peers"));

    bool ok = true;
    std::uint64_t digest = 0;
    lab::Json per = lab::Json::object();
    bool first = true;
    for (const Program& p : progs) {
        std::vector<std::vector<Run>> runs(all.size());
        std::string expected;
        bool have_expected = false;
        auto keep = [&](std::size_t i, Run r) {
            if (!have_expected) expected = r.out, have_expected = true;
            ok = ok && r.ok && r.out == expected;
            runs[i].push_back(std::move(r));
        };
        auto pass = [&] {  // the first allocator's: timed by measure()
            keep(0, run_once(s, h, all[0], p));
            return runs[0].back().peak_rss_bytes;
        };
        auto reset = [&] {  // the others' runs, each timed here
            for (std::size_t i = 1; i < all.size(); ++i) keep(i, run_once(s, h, all[i], p));
        };
        lab::Timing t = first ? ctx.measure(1, pass, reset) : ctx.measure_phase(p.name, 1, pass, reset);
        first = false;
        const std::size_t warm = runs[0].size() - t.ns_per_op.size();  // warm-up runs: not kept
        lab::Json allocs = lab::Json::object();
        for (std::size_t i = 0; i < all.size(); ++i) {
            std::vector<double> wall, cpu;
            std::vector<std::uint64_t> rss;
            for (std::size_t k = std::min(warm, runs[i].size()); k < runs[i].size(); ++k)
                wall.push_back(runs[i][k].wall_ns), cpu.push_back(runs[i][k].cpu_s), rss.push_back(runs[i][k].peak_rss_bytes);
            if (i == 0) wall = t.ns_per_op;
            allocs[all[i].name] = {{"wall_ns", wall}, {"cpu_s", cpu}, {"peak_rss_bytes", rss}, {"library", all[i].lib}};
        }
        std::vector<std::string> shown(p.argv.begin(), p.argv.end());
        for (std::string& x : shown)  // a script: its first line
            if (std::size_t cut = std::min(x.find('\n'), std::size_t{77}); cut < x.size()) x = x.substr(0, cut) + " ...";
        per[p.name] = {{"command", shown}, {"output", expected.substr(0, 200)}, {"allocators", allocs}};
        digest ^= fnv1a(expected);
    }
    std::error_code ec;
    fs::remove(h.report, ec);
    ctx.checksum(digest);
    ctx.set_elements(progs.size());
    std::vector<std::string> names;
    for (const Malloc& m : all) names.push_back(m.name);
    lab::Json field = {{"allocator", a},
                       {"allocators", names},
                       {"order", "per run of each program, the others' runs then this allocator's"},
                       {"physmem_backing", std::string(physmem::to_string(s.backing))},
                       {"measured_by", "GNU time %M (the child's peak RSS) around env LD_PRELOAD=..."},
                       {"programs", per}};
    for (const Program& p : progs)  // "python", "sqlite": the versions of the tools run
        field[p.name.substr(0, p.name.find('-'))] = lab::process::version_of(p.argv[0]);
    ctx.set_field("programs", std::move(field));
    ctx.verify(ok, "under every allocator every run exited 0, with no word from the dynamic loader, and printed what "
                   "the first run printed");
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
