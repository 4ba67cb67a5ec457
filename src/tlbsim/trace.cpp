// src/tlbsim/trace.cpp — trace files: the magic, then 8-byte entries (see trace.hpp).
#include "physmem/tlbsim/trace.hpp"

#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <system_error>

namespace physmem::tlbsim {

namespace {

[[noreturn]] void fail(int err, const std::string& what, const std::string& path) {
    throw std::system_error(err, std::generic_category(), what + " " + path);
}

}  // namespace

TraceWriter::TraceWriter(const std::string& path) : path_(path) {
    f_ = std::fopen(path.c_str(), "wb");
    if (!f_) fail(errno, "cannot create trace file", path);
    buf_.reserve(kBuffer);
    if (std::fwrite(kTraceMagic, 1, sizeof kTraceMagic, f_) != sizeof kTraceMagic) fail(errno, "cannot write", path);
}

TraceWriter::~TraceWriter() {
    if (!f_) return;
    try {
        close();
    } catch (...) {  // close() reports; a destructor cannot
    }
}

void TraceWriter::drain() {
    if (!buf_.empty() && std::fwrite(buf_.data(), sizeof(std::uint64_t), buf_.size(), f_) != buf_.size())
        fail(errno, "cannot write", path_);
    written_ += buf_.size();
    buf_.clear();
}

void TraceWriter::close() {
    if (!f_) return;
    std::FILE* f = f_;
    drain();
    f_ = nullptr;
    if (std::fclose(f) != 0) fail(errno, "cannot close", path_);
}

void read_trace(const std::string& path, std::size_t chunk, const std::function<void(std::span<const Entry>)>& f) {
    std::FILE* in = std::fopen(path.c_str(), "rb");
    if (!in) fail(errno, "cannot open trace file", path);
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> guard(in, &std::fclose);
    char magic[sizeof kTraceMagic];
    if (std::fread(magic, 1, sizeof magic, in) != sizeof magic || std::memcmp(magic, kTraceMagic, sizeof magic) != 0)
        throw std::runtime_error(path + ": not a physmem trace (no PMTRACE1 magic)");
    std::vector<Entry> buf(chunk ? chunk : 1);
    std::uint64_t index = 0;
    for (;;) {
        std::size_t bytes = std::fread(buf.data(), 1, buf.size() * sizeof(Entry), in);
        if (bytes % sizeof(Entry) != 0)
            throw std::runtime_error(path + ": truncated entry at index " + std::to_string(index + bytes / 8));
        std::size_t n = bytes / sizeof(Entry);
        for (std::size_t i = 0; i < n; ++i)
            if (!buf[i].valid()) throw std::runtime_error(path + ": invalid entry at index " + std::to_string(index + i));
        if (n) f(std::span<const Entry>(buf.data(), n));
        index += n;
        if (n < buf.size()) break;
    }
    if (std::ferror(in)) fail(errno, "cannot read", path);
}

}  // namespace physmem::tlbsim
