#include "agent/run/child_signals.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "agent/run/launch.hpp"
#include "collectors/fs_root.hpp"
#include "collectors/process_accounting.hpp"

namespace ceiling::measure {

namespace {

constexpr std::array<int, 3> stop_signals = {SIGINT, SIGTERM, SIGHUP};

// The self-pipe the handlers write a byte to, so the wait below wakes for a signal caught on
// any thread, and none is lost between looking and sleeping. Made once, never closed.
int wake_pipe[2] = {-1, -1};

std::atomic<int> first_signal{0};
std::atomic<int> signals_received{0};
std::atomic<std::int64_t> first_signal_ns{0};
std::atomic<unsigned> sent_by_process{0};   // a bit per signal kill(1) sent ceiling
std::atomic<unsigned> sent_by_terminal{0};  // a bit per signal the terminal sent its group
std::atomic<int> kill_after{0};             // the signal that asked for SIGKILL, once

void make_wake_pipe() {
    if (wake_pipe[0] < 0 && ::pipe2(wake_pipe, O_NONBLOCK | O_CLOEXEC) != 0)
        wake_pipe[0] = wake_pipe[1] = -1;
}

void wake() {
    const int saved = errno;
    if (wake_pipe[1] >= 0) {
        [[maybe_unused]] const ssize_t n = ::write(wake_pipe[1], "x", 1);
    }
    errno = saved;
}

std::int64_t monotonic_ns() {
    timespec t{};
    ::clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// Async-signal-safe: atomics, clock_gettime and write only. Handlers do not nest (sa_mask).
void on_stop_signal(int sig, siginfo_t* info, void*) {
    int none = 0;
    first_signal.compare_exchange_strong(none, sig);
    // SI_KERNEL: the terminal sent it to the foreground process group.
    const bool terminal = info && info->si_code == SI_KERNEL;
    const std::int64_t now = monotonic_ns();
    if (signals_received.fetch_add(1) == 0)
        first_signal_ns = now;
    else if (terminal || now - first_signal_ns.load() >= static_cast<std::int64_t>(stop_grace_s * 1e9))
        kill_after = sig;
    (terminal ? sent_by_terminal : sent_by_process).fetch_or(1u << sig);
    wake();
}

void on_child_event(int) { wake(); }

// Every process the program is: ceiling's children (the program, and orphans re-parented to
// ceiling as their subreaper; ceiling starts no others while it runs) and their descendants.
std::vector<pid_t> program_processes() {
    const auto& proc = collectors::FsRoot::system();
    std::vector<pid_t> out;
    std::vector<std::string> dirs = {"/proc/self"};
    // Bounded: pids reused while this walks could otherwise make a cycle.
    for (std::size_t i = 0; i < dirs.size() && out.size() < 100000; ++i)
        for (const auto& tid : proc.list(dirs[i] + "/task")) {
            const auto children = proc.read_text(dirs[i] + "/task/" + tid + "/children");
            if (!children) continue;
            std::istringstream in(*children);
            for (long pid = 0; in >> pid;) {
                out.push_back(static_cast<pid_t>(pid));
                dirs.push_back("/proc/" + std::to_string(pid));
            }
        }
    return out;
}

bool is_zombie(pid_t pid) {
    const auto stat = collectors::FsRoot::system().read_text("/proc/" + std::to_string(pid) + "/stat");
    const auto fields = stat ? collectors::parse_proc_stat(*stat) : std::nullopt;
    return !fields || fields->state == 'Z' || fields->state == 'X';
}

// `sig` to the program's processes; `outside_group_only`: to those that left ceiling's
// process group (the terminal reached the others already).
void signal_program(int sig, bool outside_group_only) {
    const pid_t group = ::getpgrp();
    for (const pid_t p : program_processes())
        if (!outside_group_only || ::getpgid(p) != group) ::kill(p, sig);
}

// SIGKILL to every process of the program. One that forks while the first pass walks leaves
// a child it did not see: passes go on until every process found is dead.
void kill_program() {
    for (int pass = 0; pass < 100; ++pass) {
        bool alive = false;
        for (const pid_t p : program_processes())
            if (!is_zombie(p)) {
                ::kill(p, SIGKILL);
                alive = true;
            }
        if (!alive) return;
        ::usleep(2000);
    }
}

// What the handlers caught, acted on: forwarded (with SIGCONT to a stopped child, which
// could not act on it otherwise), and SIGKILL where a second signal asked for it.
void act_on_signals(pid_t child, bool child_stopped) {
    const unsigned by_process = sent_by_process.exchange(0);
    const unsigned by_terminal = sent_by_terminal.exchange(0);
    for (const int s : stop_signals) {
        if (by_process & (1u << s)) signal_program(s, false);
        if (by_terminal & (1u << s)) signal_program(s, true);
    }
    if ((by_process | by_terminal) && child_stopped) signal_program(SIGCONT, false);
    if (const int s = kill_after.exchange(0)) {
        spdlog::warn("{} again: killing the program (pid {}) and every process it started (SIGKILL)",
                     signal_name(s), child);
        kill_program();
    }
}

// Consumes the child's stop or continue event (waitid without WNOWAIT), so the next look
// sees what follows it.
void consume(pid_t pid, int which) {
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(pid), &info, which | WNOHANG) != 0 && errno == EINTR) {
    }
}

void say_stopped(pid_t pid, int sig) {
    // Still stopped: after Ctrl-Z and `fg` ceiling, stopped with it, sees the event late.
    const auto stat = collectors::FsRoot::system().read_text("/proc/" + std::to_string(pid) + "/stat");
    const auto fields = stat ? collectors::parse_proc_stat(*stat) : std::nullopt;
    if (fields && fields->state != 'T') return;
    spdlog::warn("the program (pid {}) is stopped by {}; its time goes on: `kill -CONT {}` continues "
                 "it, Ctrl-C or `kill -TERM {}` ends it",
                 pid, signal_name(sig), pid, ::getpid());
}

struct ChildEvents {
    struct sigaction old {};
    ChildEvents() {
        struct sigaction sa {};
        sa.sa_handler = on_child_event;
        sa.sa_flags = SA_RESTART;  // stops and continues too: no SA_NOCLDSTOP
        sigemptyset(&sa.sa_mask);
        ::sigaction(SIGCHLD, &sa, &old);
    }
    ~ChildEvents() { ::sigaction(SIGCHLD, &old, nullptr); }
};

}  // namespace

SignalForwarding::SignalForwarding() {
    make_wake_pipe();
    first_signal = 0;
    signals_received = 0;
    sent_by_process = 0;
    sent_by_terminal = 0;
    kill_after = 0;
    struct sigaction sa {};
    sa.sa_sigaction = on_stop_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (const int s : stop_signals) sigaddset(&sa.sa_mask, s);
    for (const int s : stop_signals) ::sigaction(s, &sa, nullptr);
}

SignalForwarding::~SignalForwarding() {
    struct sigaction sa {};
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    for (const int s : stop_signals) ::sigaction(s, &sa, nullptr);
}

std::optional<int> SignalForwarding::received() const {
    const int s = first_signal.load();
    return s ? std::optional<int>(s) : std::nullopt;
}

bool wait_for_exit(pid_t pid) {
    make_wake_pipe();
    const ChildEvents events;
    bool stopped = false;
    for (;;) {
        act_on_signals(pid, stopped);
        siginfo_t info{};
        if (::waitid(P_PID, static_cast<id_t>(pid), &info,
                     WEXITED | WSTOPPED | WCONTINUED | WNOHANG | WNOWAIT) != 0) {
            if (errno == EINTR) continue;
            return false;
        }
        if (info.si_pid == pid) {
            if (info.si_code == CLD_STOPPED) {
                consume(pid, WSTOPPED);
                stopped = true;
                say_stopped(pid, info.si_status);
                continue;
            }
            if (info.si_code == CLD_CONTINUED) {
                consume(pid, WCONTINUED);
                stopped = false;
                continue;
            }
            if (info.si_code == CLD_EXITED || info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED)
                return true;
        }
        // Sleeps until a handler writes: a signal for the program, or the child's next event.
        pollfd p{wake_pipe[0], POLLIN, 0};
        if (wake_pipe[0] < 0) {
            ::usleep(10000);  // no pipe (out of descriptors): look again shortly
            continue;
        }
        ::poll(&p, 1, -1);
        char drained[64];
        while (::read(wake_pipe[0], drained, sizeof drained) > 0) {
        }
    }
}

}  // namespace ceiling::measure
