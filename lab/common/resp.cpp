// lab/common/resp.cpp — see resp.hpp. The lab's only socket calls.
#include "resp.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace lab::resp {

namespace {

[[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error("redis protocol: " + what);
}

}  // namespace

Client::Client(const std::string& path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path) fail("socket path too long: " + path);
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) fail(std::string("socket: ") + std::strerror(errno));
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        int err = errno;
        ::close(fd_);
        fd_ = -1;
        fail("connect " + path + ": " + std::strerror(err));
    }
}

Client::~Client() {
    if (fd_ >= 0) ::close(fd_);
}

void Client::queue(const std::vector<std::string>& args) {
    out_ += '*' + std::to_string(args.size()) + "\r\n";
    for (const std::string& a : args) {
        out_ += '$' + std::to_string(a.size()) + "\r\n";
        out_ += a;
        out_ += "\r\n";
    }
}

void Client::flush() {
    std::size_t sent = 0;
    while (sent < out_.size()) {
        ssize_t n = ::send(fd_, out_.data() + sent, out_.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail(std::string("send: ") + std::strerror(errno));
        sent += static_cast<std::size_t>(n);
    }
    out_.clear();
}

char Client::byte() {
    if (at_ == in_.size()) {
        in_.clear();
        at_ = 0;
        char buf[1 << 16];
        ssize_t n;
        do n = ::recv(fd_, buf, sizeof buf, 0);
        while (n < 0 && errno == EINTR);
        if (n == 0) fail("the server closed the connection");
        if (n < 0) fail(std::string("recv: ") + std::strerror(errno));
        in_.assign(buf, static_cast<std::size_t>(n));
    }
    return in_[at_++];
}

std::string Client::line() {
    std::string s;
    for (char c = byte(); c != '\r'; c = byte()) s += c;
    if (byte() != '\n') fail("a line not ended by CRLF");
    return s;
}

std::string Client::bytes(std::size_t n) {
    std::string s;
    s.reserve(n);
    while (s.size() < n) {
        if (at_ == in_.size()) s += byte();
        std::size_t take = std::min(n - s.size(), in_.size() - at_);
        s.append(in_, at_, take);
        at_ += take;
    }
    if (byte() != '\r' || byte() != '\n') fail("a bulk string not ended by CRLF");
    return s;
}

Reply Client::read() {
    if (!out_.empty()) flush();
    Reply r;
    char kind = byte();
    std::string head = line();
    switch (kind) {
        case '+': r.type = Type::simple; r.text = head; return r;
        case '-': r.type = Type::error; r.text = head; return r;
        case ':': r.type = Type::integer; r.integer = std::stoll(head); return r;
        case '$': {
            long long n = std::stoll(head);
            if (n < 0) return r;  // nil
            r.type = Type::bulk;
            r.text = bytes(static_cast<std::size_t>(n));
            return r;
        }
        case '*': {
            long long n = std::stoll(head);
            if (n < 0) return r;
            r.type = Type::array;
            r.integer = n;
            for (long long i = 0; i < n; ++i) r.items.push_back(read());
            return r;
        }
        default: fail(std::string("unexpected reply type '") + kind + "'");
    }
}

}  // namespace lab::resp
