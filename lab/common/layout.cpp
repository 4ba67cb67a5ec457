// lab/common/layout.cpp — see layout.hpp.
#include "layout.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <unistd.h>

#include "process.hpp"

namespace lab::layout {
namespace {

constexpr const char* kPad = "PHYSMEM_LAB_LAYOUT_PAD";
constexpr const char* kGuard = "PHYSMEM_LAB_LAYOUT_PID";   // pid that already re-executed

std::string note_;                 // why a control could not be applied
std::size_t heap_offset_ = 0;      // bytes of the kept malloc
std::size_t env_bytes_ = 0;        // the environment this process image started with
void* heap_shift_ = nullptr;       // kept for the life of the process

std::uint64_t mix(std::uint64_t x) {   // splitmix64 finaliser
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

std::size_t pad_bytes(const Settings& s) { return s.layout_seed ? 16 * (mix(*s.layout_seed) % 257) : 0; }
std::size_t heap_bytes(const Settings& s) { return s.layout_seed ? 16 * (mix(~*s.layout_seed) % 256) : 0; }

// The padding variable's value: `n` bytes of the whole "NAME=value\0" entry beyond the
// name, so two seeds' environments differ by exactly the difference of their pads.
std::string pad_value(std::size_t n) { return std::string(n, 'x'); }

bool pad_in_place(const Settings& s) {
    const char* have = std::getenv(kPad);
    std::size_t want = pad_bytes(s);
    return s.layout_seed ? (have && std::string(have).size() == want) : true;
}

// The guard's value: the pid, zero-padded to a fixed width so that the environment's
// size (and so the stack's layout) does not depend on the pid.
std::string guard_value() {
    std::string pid = std::to_string(::getpid());
    return std::string(10 - std::min<std::size_t>(10, pid.size()), '0') + pid;
}

bool already_reexecuted() {
    const char* g = std::getenv(kGuard);
    return g && guard_value() == g;
}

}  // namespace

void apply(const Settings& s) {
    bool want_fixed = !s.aslr && process::aslr_active();
    if ((want_fixed || !pad_in_place(s)) && !already_reexecuted()) {
        if (want_fixed && !process::set_no_randomize(true)) note_ = "ASLR left on: personality(ADDR_NO_RANDOMIZE) refused";
        if (s.layout_seed) ::setenv(kPad, pad_value(pad_bytes(s)).c_str(), 1);
        ::setenv(kGuard, guard_value().c_str(), 1);
        process::reexec_self("layout controls");
    }
    env_bytes_ = process::env_bytes();
    if (want_fixed && note_.empty() && process::aslr_active()) note_ = "ASLR still on after the re-exec";
    if (s.aslr && !process::aslr_active()) note_ = "--aslr on, but the system disables randomisation";
    if (std::size_t n = heap_bytes(s)) heap_shift_ = std::malloc(n), heap_offset_ = n;
}

nlohmann::ordered_json record(const Settings& s) {
    int on_stack = 0;
    nlohmann::ordered_json l{{"seed", s.layout_seed ? nlohmann::ordered_json(*s.layout_seed) : nullptr},
                             {"env_pad_bytes", pad_bytes(s)},
                             {"heap_offset_bytes", heap_offset_},
                             {"stack_low12", process::low12(&on_stack)}};
    if (!note_.empty()) l["note"] = note_;
    return {{"aslr", process::aslr_active() ? "on" : "off"}, {"env_bytes", env_bytes_}, {"layout", l}};
}

}  // namespace lab::layout
