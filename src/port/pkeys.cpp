// src/port/pkeys.cpp — protection keys (x86 PKU/MPK): the system calls, the PKRU register
// and the fault hooks (a key's fault; any other, for checked arrays' poisoned entries). See
// os.hpp.
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <csignal>
#include <cstring>

#include "port/os.hpp"

namespace physmem::os {

namespace {

#if defined(SYS_pkey_alloc) && defined(SYS_pkey_mprotect) && (defined(__x86_64__) || defined(__i386__))
constexpr bool kHaveKeys = true;
#else
constexpr bool kHaveKeys = false;
#endif

constexpr unsigned long kDisableAccess = 0x1;  // PKEY_DISABLE_ACCESS (linux/mman.h)

#ifndef SEGV_PKUERR
#define SEGV_PKUERR 4
#endif

bool (*g_report)(int key, const void* addr) = nullptr;
std::atomic<bool (*)(const void* addr)> g_other{nullptr};
struct sigaction g_previous;
std::once_flag g_installed;
int g_install_error = 0;

// The key of a SEGV_PKUERR fault: siginfo's si_pkey, where the C library names it.
int fault_key(const siginfo_t* info) {
#ifdef si_pkey
    return static_cast<int>(info->si_pkey);
#else
    (void)info;
    return -1;
#endif
}

// Ends the process by SIGSEGV now, under the default action: not by returning to fault
// again, which relies on sigreturn restoring the thread's PKRU (a kernel that restores
// another value lets the access through).
[[noreturn]] void die_by_segv() {
    signal(SIGSEGV, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGSEGV);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    raise(SIGSEGV);
    _exit(128 + SIGSEGV);  // not reached
}

// A protection-key fault on one of physmem's keys: reported, then the process ends. Any
// other fault (another key's, or not a key's) goes to the handler installed before.
void on_segv(int sig, siginfo_t* info, void* uc) {
    if (info->si_code == SEGV_PKUERR && g_report && g_report(fault_key(info), info->si_addr)) die_by_segv();
    if (auto other = g_other.load(std::memory_order_acquire); info->si_code != SEGV_PKUERR && other && other(info->si_addr)) {
        signal(SIGABRT, SIG_DFL);
        abort();
    }
    if ((g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_sigaction) {
        g_previous.sa_sigaction(sig, info, uc);
        return;
    }
    if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN && g_previous.sa_handler) {
        g_previous.sa_handler(sig);
        return;
    }
    signal(SIGSEGV, SIG_DFL);
}

}  // namespace

int pkey_allocate() noexcept {
    if constexpr (!kHaveKeys) {
        errno = ENOSYS;
        return -1;
    } else {
        return static_cast<int>(syscall(SYS_pkey_alloc, 0UL, kDisableAccess));  // longs: the variadic call's words
    }
}

int pkey_protect(void* p, std::size_t bytes, int key) noexcept {
    if constexpr (!kHaveKeys) {
        return ENOSYS;
    } else {
        if (syscall(SYS_pkey_mprotect, p, bytes, static_cast<long>(PROT_READ | PROT_WRITE), static_cast<long>(key)) == 0)
            return 0;
        return errno;
    }
}

std::uint32_t read_pkru() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    std::uint32_t eax, edx;
    asm volatile(".byte 0x0f, 0x01, 0xee" : "=a"(eax), "=d"(edx) : "c"(0));  // RDPKRU
    return eax;
#else
    return 0;
#endif
}

void write_pkru(std::uint32_t v) noexcept {
#if defined(__x86_64__) || defined(__i386__)
    asm volatile(".byte 0x0f, 0x01, 0xef" : : "a"(v), "c"(0), "d"(0) : "memory");  // WRPKRU
#else
    (void)v;
#endif
}

namespace {
// on_segv as the SIGSEGV handler, once (the handler before it kept in g_previous).
int install_once() noexcept {
    std::call_once(g_installed, [] {
        struct sigaction sa;
        std::memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_segv;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        g_install_error = sigaction(SIGSEGV, &sa, &g_previous) == 0 ? 0 : errno;
    });
    return g_install_error;
}
}  // namespace

int on_pkey_fault(bool (*report)(int key, const void* addr)) noexcept {
    g_report = report;
    return install_once();
}

int on_other_fault(bool (*report)(const void* addr)) noexcept {
    g_other.store(report, std::memory_order_release);
    return install_once();
}

}  // namespace physmem::os
