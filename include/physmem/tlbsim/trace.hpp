// physmem/tlbsim/trace.hpp — memory-reference traces: one 8-byte entry per reference.
//
// An Entry packs the 64-byte line of a virtual address (bits 63..6), the page size backing
// it (bits 1..0, PageSize) and the kind of reference (bit 2, Ref). The byte within the line
// is dropped: nothing the simulator models depends on it.
//
// A trace file is the 8-byte magic "PMTRACE1" followed by entries, little-endian, to the
// end of the file (TraceWriter / read_trace).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "physmem/tlbsim/config.hpp"

namespace physmem::tlbsim {

// What a reference is: the program's data, or a load of a software walk's inner block
// (a tree array's table entry: the walk physmem does in place of the hardware's).
enum class Ref : std::uint8_t { data = 0, sw_walk = 1 };

class Entry {
  public:
    constexpr Entry() noexcept = default;
    constexpr Entry(std::uint64_t addr, PageSize size, Ref kind) noexcept
        : word_((addr & ~std::uint64_t{63}) | static_cast<std::uint64_t>(size) |
                (static_cast<std::uint64_t>(kind) << 2)) {}
    static constexpr Entry from_word(std::uint64_t w) noexcept {
        Entry e;
        e.word_ = w;
        return e;
    }
    constexpr std::uint64_t addr() const noexcept { return word_ & ~std::uint64_t{63}; }
    constexpr PageSize size() const noexcept { return static_cast<PageSize>(word_ & 3); }
    constexpr Ref kind() const noexcept { return static_cast<Ref>((word_ >> 2) & 1); }
    constexpr std::uint64_t word() const noexcept { return word_; }
    // false for a size code of 3 (no such page size: a corrupt trace).
    constexpr bool valid() const noexcept { return (word_ & 3) != 3; }

  private:
    std::uint64_t word_ = 0;
};

inline constexpr char kTraceMagic[8] = {'P', 'M', 'T', 'R', 'A', 'C', 'E', '1'};

// Writes a trace file, buffered. Throws std::system_error when the file cannot be created
// or written (the message names the path).
class TraceWriter {
  public:
    explicit TraceWriter(const std::string& path);
    ~TraceWriter();  // flushes; errors at this point are lost — call close() to see them
    TraceWriter(const TraceWriter&) = delete;
    TraceWriter& operator=(const TraceWriter&) = delete;

    void write(Entry e) {
        buf_.push_back(e.word());
        if (buf_.size() == kBuffer) drain();
    }
    void close();
    std::uint64_t written() const noexcept { return written_ + buf_.size(); }

  private:
    static constexpr std::size_t kBuffer = 1 << 16;
    void drain();
    std::string path_;
    std::FILE* f_ = nullptr;
    std::vector<std::uint64_t> buf_;
    std::uint64_t written_ = 0;
};

// Reads a trace file in chunks of up to `chunk` entries, calling f(std::span<const Entry>)
// for each. Throws std::system_error (cannot open/read) or std::runtime_error (bad magic,
// a truncated entry, an invalid entry: the message gives its index).
void read_trace(const std::string& path, std::size_t chunk, const std::function<void(std::span<const Entry>)>& f);

}  // namespace physmem::tlbsim
