// lab/experiments/redis.cpp — a real server under each malloc: Debian's redis-server with
// the allocator preloaded, driven by redis-benchmark and by the program's own client.
//
//   physmem_lab_redis --variant malloc-thp --size 64M --param alloc=physmem
//                     --param peers=glibc,jemalloc,tcmalloc,mimalloc     (one line)
//
// Variant malloc-B as in alloc.cpp: physmem (as alloc or a peer) preloads libphysmem.so
// with PHYSMEM_MALLOC_BACKING=B; the others run on their own defaults (as alloc: malloc-4k
// only). Debian's
// redis-server links jemalloc, so every allocator is preloaded, glibc's too (libc.so.6
// first in the search order is what makes its malloc the one redis calls).
//
// --param peers names allocators measured in the same process beside --param alloc, so that
// their ratios are taken side by side (this machine's speed drifts by tens of percent over
// minutes; pairs of passes a second apart drift together). Per allocator, two servers, each
// on a Unix socket in a private directory, persistence off:
// 1. Throughput: one redis-benchmark run per pass (--param requests requests, a keyspace of
//    as many keys, --param clients connections, --param pipeline deep, --param value-byte
//    values) for each command of --param commands. Before each of --param alloc's passes,
//    every peer runs one pass of the same command (timed here the same way); the first
//    command is the record's timing, the others its phases (ns per request, the
//    benchmark's start-up included; the benchmark's own requests/s are kept beside). Every
//    pass starts from an empty server; GET's reads what an untimed SET wrote just before,
//    LPOP's pops what an untimed LPUSH pushed.
// 2. Footprint, one allocator after the other: keys of 16-1024 bytes (deterministic from
//    --seed) until their values total --size bytes, then 70% of them deleted, then --param
//    idle-ms with no client call: the server's peak RSS, its RSS after the idle time and
//    what redis counts as used. Every kept value is read back and compared, and every
//    deleted key must be gone; the values' digest must be the same under every allocator.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "context.hpp"
#include "kernels/alloc_procfs.hpp"
#include "preload.hpp"
#include "process.hpp"
#include "resp.hpp"

namespace {

namespace fs = std::filesystem;
using lab::preload::Malloc;
namespace procfs = lab::alloc::procfs;

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_redis",
    .experiment = "redis",
    .unit = "request",
    .kinds = {lab::Kind::malloc},
    .default_block_size = 64 << 10,
    .params = {{"alloc", "glibc", {"glibc", "physmem", "jemalloc", "tcmalloc", "mimalloc"}, "which malloc serves redis-server"},
               {"peers", "", {}, "allocators measured beside it, comma-separated (e.g. glibc,jemalloc): their passes interleaved with its own"},
               {"commands", "set,get,lpush,lpop,sadd,hset", {}, "redis-benchmark tests timed, comma-separated (-t)"},
               {"requests", "100000", {}, "requests per benchmark pass (-n), also the keyspace (-r)"},
               {"clients", "50", {}, "benchmark connections (-c)"},
               {"pipeline", "16", {}, "requests in flight per connection (-P)"},
               {"value-bytes", "64", {}, "value size of SET and the others (-d)"},
               {"idle-ms", "2000", {}, "ms the footprint server is left without client calls after the deletes"}},
};

std::string need_program(const std::string& name) {
    std::string p = lab::process::find_on_path(name);
    if (p.empty()) throw physmem::backing_unavailable(name + " not installed (apt-get install redis-server redis-tools)");
    return p;
}

// The server's environment: ours without LD_PRELOAD, plus the allocator's (physmem's
// backing: the variant's).
std::vector<std::string> server_env(const lab::Settings& s, const Malloc& m) {
    std::vector<std::string> env;
    for (const std::string& e : lab::process::own_env())
        if (e.rfind("LD_PRELOAD=", 0) != 0 && e.rfind("PHYSMEM_MALLOC_BACKING=", 0) != 0) env.push_back(e);
    env.push_back("LD_PRELOAD=" + m.lib);
    if (m.name == "physmem") env.push_back("PHYSMEM_MALLOC_BACKING=" + std::string(physmem::to_string(s.backing)));
    return env;
}

// One redis-server in a private directory, stopped (and the directory removed) on
// destruction.
class Server {
  public:
    Server(const lab::Settings& s, const Malloc& m, const std::string& name) {
        std::string tmpl = (fs::temp_directory_path() / "physmem-redis-XXXXXX").string();
        if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
        dir_ = tmpl;
        socket_ = dir_ + "/redis.sock";
        const std::string exe = need_program("redis-server");
        pid_ = lab::process::spawn(exe,
                                   {exe, "--port", "0", "--unixsocket", socket_, "--unixsocketperm", "700",
                                    "--save", "", "--appendonly", "no", "--dir", dir_, "--daemonize", "no",
                                    "--loglevel", "warning", "--logfile", "", "--databases", "1"},
                                   server_env(s, m), dir_ + "/server.log");
        wait_ready(name);
    }
    ~Server() {
        if (pid_ > 0) lab::process::stop(pid_, SIGTERM, 5.0);
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    const std::string& socket() const { return socket_; }
    std::size_t status_bytes(const std::string& key) const {
        return procfs::field_kb("/proc/" + std::to_string(pid_) + "/status", key);
    }
    std::size_t rollup_bytes(const std::string& key) const {
        return procfs::field_kb("/proc/" + std::to_string(pid_) + "/smaps_rollup", key);
    }
    // Whether `lib` is mapped in the server (the preload took).
    bool maps(const std::string& lib) const {
        std::ifstream in("/proc/" + std::to_string(pid_) + "/maps");
        for (std::string line; std::getline(in, line);)
            if (line.find(lib) != std::string::npos) return true;
        return false;
    }

  private:
    void wait_ready(const std::string& name) {
        for (int i = 0; i < 1000; ++i) {
            std::string how;
            if (!lab::process::running(pid_, &how)) {
                pid_ = -1;
                throw std::runtime_error(name + ": redis-server ended at start-up (" + how + "): " + log());
            }
            try {
                lab::resp::Client c(socket_);
                if (c.call({"PING"}).text == "PONG") return;
            } catch (const std::runtime_error&) {
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        throw std::runtime_error(name + ": redis-server did not answer within 10 s: " + log());
    }
    std::string log() const {
        std::ifstream in(dir_ + "/server.log");
        std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        return all.substr(0, 400);
    }

    std::string dir_, socket_;
    int pid_ = -1;
};

// One redis-benchmark run of `command`; returns the requests/s it reports. Throws when it
// fails or prints no rate.
double benchmark(const lab::Settings& s, const std::string& socket, const std::string& command) {
    const std::string exe = need_program("redis-benchmark");
    lab::process::ChildResult r = lab::process::run_child(
        exe, {exe, "-s", socket, "-n", s.param("requests"), "-r", s.param("requests"), "-c", s.param("clients"),
              "-P", s.param("pipeline"), "-d", s.param("value-bytes"), "-t", command, "--csv"},
        {"PATH=/usr/bin:/bin"}, true);
    // --csv: a header line, then "NAME","rps",...
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
        auto cells = lab::preload::split_list(line);
        if (cells.size() >= 2 && cells[0] != "\"test\"" && cells[1].size() > 2) {
            double rps = std::strtod(cells[1].c_str() + 1, nullptr);
            if (r.exit_code == 0 && rps > 0) return rps;
        }
    }
    throw std::runtime_error("redis-benchmark -t " + command + " ended with " + r.status + ": " + r.out.substr(0, 300));
}

// Before each timed pass of `command`, untimed: FLUSHALL, then for the commands that read
// or consume data (GET, LPOP) one run of the command that writes it (SET, LPUSH). Every
// pass then starts from the same state (without it SET and LPUSH slow down pass after pass
// as the data grows, and the spread says more about the pass's number than the allocator).
void fresh_data(const lab::Settings& s, const std::string& socket, const std::string& command) {
    lab::resp::Client c(socket);
    if (c.call({"FLUSHALL"}).text != "OK") throw std::runtime_error("FLUSHALL refused");
    if (command == "get") benchmark(s, socket, "set");
    if (command == "lpop") benchmark(s, socket, "lpush");
}

// The throughput half: each command timed through redis-benchmark on one server per
// allocator, the allocators' passes interleaved (see the file comment). Returns, per
// allocator, its ns per request and the benchmark's requests/s per pass and command.
lab::Json throughput(lab::Context& ctx, const std::vector<Malloc>& all) {
    const lab::Settings& s = ctx.settings();
    std::vector<std::unique_ptr<Server>> servers;
    for (const Malloc& m : all) servers.push_back(std::make_unique<Server>(s, m, "throughput, " + m.name));
    const std::uint64_t requests = s.param_size("requests");
    lab::Json out = lab::Json::object();
    for (const Malloc& m : all) out[m.name] = {{"ns_per_request", lab::Json::object()}, {"benchmark_rps", lab::Json::object()}};
    bool first = true;
    for (const std::string& c : lab::preload::split_list(s.param("commands"))) {
        std::vector<std::vector<double>> ns(all.size()), rps(all.size());
        auto pass = [&] {  // the first allocator's: timed by measure()
            rps[0].push_back(benchmark(s, servers[0]->socket(), c));
            return std::uint64_t(rps[0].back());
        };
        auto reset = [&] {  // the others' passes, each timed here, then a fresh first server
            for (std::size_t i = 1; i < all.size(); ++i) {
                fresh_data(s, servers[i]->socket(), c);
                auto t0 = std::chrono::steady_clock::now();
                rps[i].push_back(benchmark(s, servers[i]->socket(), c));
                ns[i].push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
                                double(requests));
            }
            fresh_data(s, servers[0]->socket(), c);
        };
        lab::Timing t = first ? ctx.measure(requests, pass, reset) : ctx.measure_phase(c, requests, pass, reset);
        first = false;
        ns[0] = t.ns_per_op;
        const std::size_t warm = rps[0].size() - t.ns_per_op.size();  // warm-up passes: not kept
        for (std::size_t i = 0; i < all.size(); ++i) {
            out[all[i].name]["ns_per_request"][c] = i ? std::vector<double>(ns[i].begin() + warm, ns[i].end()) : ns[0];
            out[all[i].name]["benchmark_rps"][c] = std::vector<double>(rps[i].begin() + warm, rps[i].end());
        }
    }
    for (std::size_t i = 0; i < all.size(); ++i) {
        out[all[i].name]["peak_rss_bytes"] = servers[i]->status_bytes("VmHWM");
        out[all[i].name]["mapped"] = servers[i]->maps(all[i].lib);
    }
    return out;
}

// Key i's value: 16-1024 bytes, every byte from the seed and i.
std::string value_of(std::uint64_t seed, std::uint64_t i) {
    std::uint64_t x = (seed ^ (i * 0x9e3779b97f4a7c15ULL)) + 0x632be59bd9b4e019ULL;
    auto next = [&] {
        x += 0x9e3779b97f4a7c15ULL;
        std::uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    };
    std::string v(16 + next() % 1009, '\0');
    for (std::size_t at = 0; at < v.size(); at += 8) {
        std::uint64_t w = next();
        std::memcpy(v.data() + at, &w, std::min<std::size_t>(8, v.size() - at));
    }
    return v;
}

bool deleted(std::uint64_t seed, std::uint64_t i) { return (value_of(seed ^ 0x5bd1e995, i)[0] & 0xff) % 10 < 7; }

// Sends `make(i)` for i in [0, n) in pipelined batches; counts the replies `ok` accepts.
template <class Make, class Ok>
std::uint64_t pipelined(lab::resp::Client& c, std::uint64_t n, Make make, Ok ok) {
    std::uint64_t good = 0;
    for (std::uint64_t at = 0; at < n; at += 1000) {
        std::uint64_t end = std::min(n, at + 1000);
        for (std::uint64_t i = at; i < end; ++i) c.queue(make(i));
        for (std::uint64_t i = at; i < end; ++i) good += ok(i, c.read()) ? 1 : 0;
    }
    return good;
}

std::size_t info_field(lab::resp::Client& c, const std::string& key) {
    std::istringstream in(c.call({"INFO", "memory"}).text);
    for (std::string line; std::getline(in, line);)
        if (line.rfind(key + ":", 0) == 0) return std::strtoull(line.c_str() + key.size() + 1, nullptr, 10);
    return 0;
}

// The footprint half (see the file comment). Sets ok when every check held.
lab::Json footprint(lab::Context& ctx, const Malloc& m, bool& ok) {
    const lab::Settings& s = ctx.settings();
    Server server(s, m, "footprint, " + m.name);
    lab::resp::Client c(server.socket());
    const std::uint64_t seed = s.seed;
    std::uint64_t n = 0, bytes = 0, kept_bytes = 0, digest = 0xcbf29ce484222325ULL;
    for (; bytes < s.size_bytes; ++n) bytes += value_of(seed, n).size();
    auto key = [](std::uint64_t i) { return "fp:" + std::to_string(i); };
    auto is = [](const char* text) { return [text](std::uint64_t, const lab::resp::Reply& r) { return r.text == text; }; };
    std::uint64_t set = pipelined(c, n, [&](std::uint64_t i) { return std::vector<std::string>{"SET", key(i), value_of(seed, i)}; }, is("OK"));
    const std::size_t peak = server.status_bytes("VmRSS");
    std::uint64_t gone = 0, kept = 0;
    for (std::uint64_t i = 0; i < n; ++i) deleted(seed, i) ? ++gone : (kept_bytes += value_of(seed, i).size(), ++kept);
    std::uint64_t del = pipelined(
        c, n, [&](std::uint64_t i) { return std::vector<std::string>{deleted(seed, i) ? "DEL" : "EXISTS", key(i)}; },
        [](std::uint64_t, const lab::resp::Reply& r) { return r.type == lab::resp::Type::integer && r.integer == 1; });
    const unsigned idle_ms = static_cast<unsigned>(s.param_size("idle-ms"));
    std::this_thread::sleep_for(std::chrono::milliseconds(idle_ms));
    const std::size_t rss_after = server.status_bytes("VmRSS"), hwm = server.status_bytes("VmHWM");
    const std::size_t anon = server.rollup_bytes("Anonymous"), thp = server.rollup_bytes("AnonHugePages");
    const std::size_t used = info_field(c, "used_memory");
    std::uint64_t read_back = pipelined(
        c, n, [&](std::uint64_t i) { return std::vector<std::string>{"GET", key(i)}; },
        [&](std::uint64_t i, const lab::resp::Reply& r) {
            for (unsigned char ch : r.text) digest = (digest ^ ch) * 0x100000001b3ULL;  // FNV-1a
            return deleted(seed, i) ? r.type == lab::resp::Type::nil : r.type == lab::resp::Type::bulk && r.text == value_of(seed, i);
        });
    const lab::resp::Reply size = c.call({"DBSIZE"});
    ok = set == n && del == n && read_back == n && size.integer == std::int64_t(kept) && server.maps(m.lib);
    ctx.set_elements(n);
    return {{"keys", n}, {"value_bytes", bytes}, {"kept_keys", kept}, {"kept_value_bytes", kept_bytes},
            {"rss_after_fill_bytes", peak}, {"peak_rss_bytes", hwm}, {"idle_ms", idle_ms},
            {"rss_after_idle_bytes", rss_after}, {"anon_after_idle_bytes", anon}, {"thp_after_idle_bytes", thp},
            {"used_memory_after_bytes", used}, {"rss_over_used", used ? double(rss_after) / double(used) : 0.0},
            {"digest", digest},  // of the values read back: the same under every allocator
            {"checks", {{"set_ok", set}, {"deletes_ok", del}, {"read_back_ok", read_back}, {"dbsize", size.integer}}}};
}

std::string server_version() {
    std::string exe = lab::process::find_on_path("redis-server");
    return exe.empty() ? "" : lab::process::version_of(exe);
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const std::string& a = s.param("alloc");
    if (a != "physmem" && s.backing != physmem::Backing::page_4k)
        lab::usage_error(kSpec, "--variant: " + a + " runs on its own defaults: malloc-4k only");
    if (s.param_size("requests") < 1 || s.param_size("clients") < 1 || s.param_size("pipeline") < 1)
        lab::usage_error(kSpec, "--param requests, clients, pipeline: must be >= 1");
    if (lab::preload::split_list(s.param("commands")).empty()) lab::usage_error(kSpec, "--param commands: name at least one");
    need_program("redis-server");
    need_program("redis-benchmark");
    const std::vector<Malloc> all = lab::preload::for_children(s.param("alloc"), s.param("peers"));
    bool ok = true;
    lab::Json per = throughput(ctx, all);
    std::set<std::uint64_t> digests;
    for (const Malloc& m : all) {
        bool fine = false;
        per[m.name]["footprint"] = footprint(ctx, m, fine);
        per[m.name]["library"] = m.lib;
        digests.insert(per[m.name]["footprint"]["digest"].get<std::uint64_t>());
        ok = ok && fine && per[m.name]["mapped"].get<bool>();
    }
    ctx.checksum(*digests.begin());
    ctx.set_field("redis", {{"allocator", a}, {"order", "per pass of each command, the others' passes then this allocator's"},
                            {"server", server_version()}, {"transport", "unix socket"},
                            {"clients", s.param_size("clients")}, {"pipeline", s.param_size("pipeline")},
                            {"value_bytes", s.param_size("value-bytes")}, {"requests", s.param_size("requests")},
                            {"physmem_backing", std::string(physmem::to_string(s.backing))},
                            {"commands", lab::preload::split_list(s.param("commands"))}, {"allocators", per}});
    ctx.verify(ok && digests.size() == 1,
               "under every allocator: every SET answered OK, every deleted key gone and every kept value read "
               "back byte for byte (the same digest), DBSIZE equal to the keys kept, and its library mapped in "
               "both servers");
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
