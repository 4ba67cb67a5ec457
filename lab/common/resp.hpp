// lab/common/resp.hpp — a minimal client of the Redis protocol (RESP 2) over a Unix
// socket, for programs that drive a real server (lab/experiments/redis.cpp).
//
//   lab::resp::Client c("/tmp/x/redis.sock");        // throws when it cannot connect
//   c.queue({"SET", "k", "v"}); c.queue({"GET", "k"});  // pipelined: sent on the next read
//   lab::resp::Reply a = c.read(), b = c.read();        // a.text == "OK", b.text == "v"
//
// Contract: replies come back in the order commands were queued; read() sends whatever is
// queued first. Errors of the server are replies (type error, text = its message);
// a broken connection or a reply that is not RESP throws std::runtime_error. Nested
// arrays are read whole and their elements returned as `items` (one level kept).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lab::resp {

enum class Type { simple, error, integer, bulk, nil, array };

struct Reply {
    Type type = Type::nil;
    std::string text;              // simple string, error message or bulk string
    std::int64_t integer = 0;      // integer replies; array length for arrays
    std::vector<Reply> items;      // array elements
};

class Client {
  public:
    // Connects to the server's Unix socket at `path`. Throws std::runtime_error naming the
    // path and the error when it cannot.
    explicit Client(const std::string& path);
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    // Adds one command (its arguments, binary-safe) to the pipeline.
    void queue(const std::vector<std::string>& args);
    // The next reply (sends the pipeline first).
    Reply read();
    // One command and its reply.
    Reply call(const std::vector<std::string>& args) {
        queue(args);
        return read();
    }

  private:
    void flush();
    char byte();
    std::string line();
    std::string bytes(std::size_t n);

    int fd_ = -1;
    std::string out_;   // queued, not yet sent
    std::string in_;    // received, not yet parsed
    std::size_t at_ = 0;
};

}  // namespace lab::resp
