// lab/stack/thread.cpp — pthread and fork calls of the split-stack suite (thread.hpp).
#include "stack/thread.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <exception>
#include <stdexcept>

namespace lab::stack {

namespace {

struct Task {
    const std::function<void()>* f;
    std::exception_ptr error;
};

void* trampoline(void* arg) {
    auto* t = static_cast<Task*>(arg);
    try {
        (*t->f)();
    } catch (...) {
        t->error = std::current_exception();
    }
    return nullptr;
}

}  // namespace

void run_on_thread(std::size_t stack_bytes, const std::function<void()>& f) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    int err = pthread_attr_setstacksize(&attr, stack_bytes);
    Task task{&f, nullptr};
    pthread_t tid;
    if (err == 0) err = pthread_create(&tid, &attr, trampoline, &task);
    pthread_attr_destroy(&attr);
    if (err != 0)
        throw std::runtime_error("thread with a " + std::to_string(stack_bytes) + "-byte stack: " + std::strerror(err));
    pthread_join(tid, nullptr);
    if (task.error) std::rethrow_exception(task.error);
}

ChildRun run_in_child(std::size_t stack_bytes, const std::function<void()>& f) {
    pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        struct rlimit none{0, 0};
        ::setrlimit(RLIMIT_CORE, &none);
        try {
            run_on_thread(stack_bytes, f);
        } catch (...) {
            ::_exit(3);
        }
        ::_exit(0);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return {WIFEXITED(status) && WEXITSTATUS(status) == 0, WIFSIGNALED(status) ? WTERMSIG(status) : 0};
}

std::size_t largest_fitting(std::size_t hi, const std::function<bool(std::size_t)>& fits) {
    if (fits(hi)) return hi;
    std::size_t lo = 0;  // fits(lo), !fits(hi)
    while (hi - lo > 1) {
        std::size_t mid = lo + (hi - lo) / 2;
        (fits(mid) ? lo : hi) = mid;
    }
    return lo;
}

std::string signal_name(int sig) {
    switch (sig) {
        case SIGSEGV: return "SIGSEGV";
        case SIGBUS: return "SIGBUS";
        case SIGABRT: return "SIGABRT";
        default: return sig ? "signal " + std::to_string(sig) : "none";
    }
}

}  // namespace lab::stack
