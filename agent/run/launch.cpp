#include "agent/run/launch.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/machine/pmu_readings.hpp"
#include "agent/run/child_signals.hpp"
#include "collectors/clock.hpp"
#include "collectors/fs_root.hpp"

extern char** environ;

namespace ceiling::measure {

namespace fs = std::filesystem;

namespace {

// ceiling's own children, each "command line (pid N)" (its first 60 characters; the command
// name where that is unreadable): after the program ended, the descendants it left running
// (re-parented to ceiling, its subreaper), so the note names what still works.
std::vector<std::string> running_children() {
    const auto& proc = collectors::FsRoot::system();
    std::vector<std::string> out;
    for (const auto& tid : proc.list("/proc/self/task")) {
        const auto pids = proc.read_text("/proc/self/task/" + tid + "/children");
        if (!pids) continue;
        std::istringstream in(*pids);
        for (long pid = 0; in >> pid;) {
            const std::string dir = "/proc/" + std::to_string(pid);
            std::string name = proc.read_text(dir + "/cmdline").value_or("");
            // Arguments end in NULs; a script given with -c may hold newlines: one line.
            for (char& c : name)
                if (static_cast<unsigned char>(c) < ' ') c = ' ';
            while (!name.empty() && name.back() == ' ') name.pop_back();
            if (name.size() > 60) name = name.substr(0, 57) + "...";
            if (name.empty()) name = proc.read_line(dir + "/comm").value_or("?");
            out.push_back(name + " (pid " + std::to_string(pid) + ")");
        }
    }
    return out;
}

bool is_executable_file(const fs::path& p, bool* exists) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return false;
    if (!S_ISREG(st.st_mode)) return false;
    *exists = true;
    return ::access(p.c_str(), X_OK) == 0;
}

std::string errno_text(int e) { return std::strerror(e); }

}  // namespace

ResolvedProgram resolve_program(const std::string& name, const std::string& path_env) {
    ResolvedProgram r;
    if (name.empty()) return {{}, 127, "empty program name"};
    if (name.find('/') != std::string::npos) {
        struct stat st {};
        if (::stat(name.c_str(), &st) != 0) return {{}, 127, name + ": " + errno_text(errno)};
        if (S_ISDIR(st.st_mode)) return {{}, 126, name + ": is a directory"};
        if (::access(name.c_str(), X_OK) != 0)
            return {{}, 126, name + ": not executable (" + errno_text(errno) + ")"};
        return {name, 0, {}};
    }
    // As execvp: an empty PATH element means the current directory; a non-executable match
    // is remembered but the search goes on, and only if nothing executable follows is the
    // result "permission denied" (126) rather than "not found" (127).
    bool found_unexecutable = false;
    fs::path first_unexecutable;
    std::size_t begin = 0;
    while (begin <= path_env.size()) {
        const std::size_t colon = path_env.find(':', begin);
        const std::string dir =
            path_env.substr(begin, colon == std::string::npos ? std::string::npos : colon - begin);
        const fs::path candidate = (dir.empty() ? fs::path(".") : fs::path(dir)) / name;
        bool exists = false;
        if (is_executable_file(candidate, &exists)) return {candidate, 0, {}};
        if (exists && !found_unexecutable) {
            found_unexecutable = true;
            first_unexecutable = candidate;
        }
        if (colon == std::string::npos) break;
        begin = colon + 1;
    }
    if (found_unexecutable)
        return {{}, 126, first_unexecutable.string() + ": not executable (permission denied)"};
    return {{}, 127, name + ": command not found"};
}

std::string signal_name(int sig) {
    if (const char* abbrev = sigabbrev_np(sig)) return std::string("SIG") + abbrev;
    return "signal " + std::to_string(sig);
}

ProcessEnd process_end_from_status(int status) {
    ProcessEnd e;
    if (WIFEXITED(status)) {
        e.kind = EndKind::exited;
        e.exit_code = WEXITSTATUS(status);
        e.message = "exited with status " + std::to_string(*e.exit_code);
    } else if (WIFSIGNALED(status)) {
        e.kind = EndKind::signaled;
        e.signal = WTERMSIG(status);
        e.signal_name = signal_name(*e.signal);
        e.core_dumped = WCOREDUMP(status);
        e.message = "killed by " + e.signal_name + (e.core_dumped ? " (core dumped)" : "");
    } else {
        e.kind = EndKind::exited;
        e.message = "ended with wait status " + std::to_string(status);
    }
    return e;
}

namespace {

void add_usage(rusage& total, const rusage& r) {
    auto add = [](timeval& a, const timeval& b) {
        a.tv_sec += b.tv_sec;
        a.tv_usec += b.tv_usec;
        if (a.tv_usec >= 1'000'000) {
            a.tv_sec += 1;
            a.tv_usec -= 1'000'000;
        }
    };
    add(total.ru_utime, r.ru_utime);
    add(total.ru_stime, r.ru_stime);
    // A peak over processes that ran at different times: the largest, never a sum. An
    // orphan's copy of memory at its fork was the program's, never ceiling's.
    total.ru_maxrss = std::max(total.ru_maxrss, r.ru_maxrss);
    total.ru_minflt += r.ru_minflt;
    total.ru_majflt += r.ru_majflt;
    total.ru_nvcsw += r.ru_nvcsw;
    total.ru_nivcsw += r.ru_nivcsw;
    total.ru_inblock += r.ru_inblock;
    total.ru_oublock += r.ru_oublock;
}

// The environment for the child, built before fork: nothing allocates after it.
std::vector<std::string> child_environment(const LaunchSpec& spec) {
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        const std::string kv = *e;
        const auto eq = kv.find('=');
        const std::string key = kv.substr(0, eq);
        bool replaced = false;
        for (const auto& [k, v] : spec.set_env) replaced = replaced || k == key;
        if (!replaced) env.push_back(kv);
    }
    for (const auto& [k, v] : spec.set_env) env.push_back(k + "=" + v);
    return env;
}

// The I/O of an exited, unreaped process: final, with its reaped descendants'.
std::optional<collectors::ProcIo> final_io(pid_t pid) {
    auto io = collectors::read_proc_io(collectors::FsRoot::system(), std::to_string(pid));
    // A field missing from the file (an old kernel) makes the total unknown, not smaller.
    if (io && !(io->read_call_bytes && io->write_call_bytes && io->storage_read_bytes &&
                io->storage_write_bytes))
        io.reset();
    return io;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
    std::vector<char*> p;
    p.reserve(strings.size() + 1);
    for (auto& s : strings) p.push_back(s.data());
    p.push_back(nullptr);
    return p;
}

// The signals the child blocks until it is released (child_signals.hpp forwards them).
constexpr std::array<int, 3> forwarded_signals = {SIGINT, SIGTERM, SIGHUP};

// Writes the byte that lets the child exec. A child already dead (killed before it read the
// byte) has closed the pipe's read end, and the write would raise SIGPIPE, whose default
// kills ceiling and loses the record: SIGPIPE is blocked in this thread for the write (a
// write's SIGPIPE goes to the writing thread) and a pending one is taken back; the child's
// end is then reported by waiting for it, as for any other end.
void release_child(int fd) {
    sigset_t pipe_only, old;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
    while (::write(fd, "x", 1) < 0 && errno == EINTR) {
    }
    const timespec now{0, 0};
    while (::sigtimedwait(&pipe_only, nullptr, &now) == SIGPIPE) {
    }
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

// What the forked child says before it runs: the peak of fork's copy of ceiling's memory,
// its group's limits, its CPU mask.
void read_launch_state(ChildResult& result, pid_t pid) {
    // The child holds fork's copy of ceiling's memory until exec; exec puts that copy's peak
    // into the maxrss wait4 reports, so it is read now to tell it from the program's.
    if (const auto usage =
            collectors::read_proc_usage(collectors::FsRoot::system(), std::to_string(pid)))
        result.launch_rss_bytes = usage->max_rss_bytes;
    // The group the child was forked into, before it runs: its limits, and the quota's
    // periods so far.
    result.limits =
        collectors::read_cgroup_limits(collectors::FsRoot::system(), std::to_string(pid));
    // Only a mask narrower than this host's online CPUs: judged against another host's
    // profile, a smaller host is not a mask.
    if (cpu_set_t mask; ::sched_getaffinity(pid, sizeof mask, &mask) == 0 &&
                        CPU_COUNT(&mask) < ::sysconf(_SC_NPROCESSORS_ONLN))
        result.affinity_cpus = CPU_COUNT(&mask);
}

// Reads the exec-errors pipe to its end (EOF: exec succeeded) and closes it. A child that
// reported exec's errno is reaped and the failure thrown (126, or 127 when not found).
void throw_if_exec_failed(int exec_errors_read, pid_t pid, const LaunchSpec& spec) {
    int exec_errno = 0;
    ssize_t n = 0;
    while ((n = ::read(exec_errors_read, &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
    }
    ::close(exec_errors_read);
    if (n == static_cast<ssize_t>(sizeof exec_errno)) {
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        const bool not_found = exec_errno == ENOENT || exec_errno == ENOTDIR;
        throw LaunchFailure(not_found ? 127 : 126,
                            spec.argv.at(0) + ": cannot execute: " + errno_text(exec_errno));
    }
}

// Reaps the exited child: its final I/O read first, then its end and its rusage.
void reap_child(ChildResult& result, pid_t pid) {
    result.io = final_io(pid);
    int status = 0;
    rusage ru{};
    while (::wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) throw std::runtime_error("wait4: " + errno_text(errno));
    }
    result.end = process_end_from_status(status);
    result.usage = ru;
}

// Descendants the program left behind were re-parented to us (subreaper): those already
// finished are reaped and counted; those still running are not waited for (a daemon
// would block ceiling forever) but counted as such.
void account_orphans(ChildResult& result) {
    for (;;) {
        siginfo_t exited{};
        if (::waitid(P_ALL, 0, &exited, WEXITED | WNOHANG | WNOWAIT) != 0 || exited.si_pid == 0)
            break;
        const pid_t p = exited.si_pid;
        const auto io = final_io(p);
        result.io =
            result.io && io ? std::optional(collectors::add(*result.io, *io)) : std::nullopt;
        rusage orphan{};
        int s = 0;
        if (::wait4(p, &s, WNOHANG, &orphan) <= 0) break;
        add_usage(result.usage, orphan);
        ++result.orphans_reaped;
    }
    // A child left is a running orphan (ceiling starts no other children while running):
    // waitid succeeds with nothing to report instead of failing with ECHILD.
    siginfo_t info{};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0) {
        result.orphans_named = running_children();
        result.orphans_running = std::max<int>(1, static_cast<int>(result.orphans_named.size()));
    }
}

}  // namespace

bool become_subreaper() { return ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0; }

namespace {

// A file with a NUL in its first line is a binary (of another machine, say), not a script:
// bash's test before it hands a file exec refused to sh.
bool looks_binary(const std::string& path) {
    char head[256];
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return false;
    const ssize_t n = ::read(fd, head, sizeof head);
    ::close(fd);
    for (ssize_t i = 0; i < n && head[i] != '\n'; ++i)
        if (head[i] == '\0') return true;
    return false;
}

// What the child execs, built before fork: nothing allocates after it.
struct ExecPlan {
    std::string exe;
    std::vector<std::string> argv_strings, env_strings, sh_strings;
    std::vector<char*> argv, envp, sh_argv;
    bool script_fallback = false;  // exec's ENOEXEC runs it with /bin/sh, as execvp and bash do

    ExecPlan(const ExecPlan&) = delete;  // the pointers point into its own strings
    explicit ExecPlan(const LaunchSpec& spec)
        : exe(spec.executable.string()), argv_strings(spec.argv), env_strings(child_environment(spec)) {
        argv = pointers(argv_strings);
        envp = pointers(env_strings);
        sh_strings = {"/bin/sh", exe};
        sh_strings.insert(sh_strings.end(), argv_strings.begin() + (argv_strings.empty() ? 0 : 1),
                          argv_strings.end());
        sh_argv = pointers(sh_strings);
        script_fallback = !looks_binary(exe);
    }
};

// The forked child: waits for the go byte, then execs; exec's errno goes to `exec_errors`.
// Async-signal-safe calls only.
[[noreturn]] void exec_child(const ExecPlan& plan, int exec_errors, int go, pid_t parent) {
    // The program does not outlive a ceiling killed with SIGKILL (or crashed): nothing
    // would reap it or say what it did. A parent gone before this took effect is seen by
    // getppid.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(127);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    // The forwarded signals stay blocked until the go byte is read: one forwarded in the
    // meantime then ends the child at the unblocking below, after ceiling's write, not
    // before it (which made that write raise SIGPIPE in ceiling).
    sigset_t forwarded;
    sigemptyset(&forwarded);
    for (int s : forwarded_signals) sigaddset(&forwarded, s);
    ::sigprocmask(SIG_BLOCK, &forwarded, nullptr);
    for (int s : forwarded_signals) ::sigaction(s, &dfl, nullptr);
    char c = 0;
    while (::read(go, &c, 1) < 0 && errno == EINTR) {
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(plan.exe.c_str(), plan.argv.data(), plan.envp.data());
    int e = errno;
    // A script without a "#!" line: the kernel does not know how to run it, a shell does.
    if (e == ENOEXEC && plan.script_fallback) {
        ::execve(plan.sh_argv[0], plan.sh_argv.data(), plan.envp.data());
        e = errno;
    }
    while (::write(exec_errors, &e, sizeof e) < 0 && errno == EINTR) {
    }
    ::_exit(127);
}

}  // namespace

ChildResult run_child(const LaunchSpec& spec, const std::function<void(pid_t)>& on_started,
                      const std::function<void()>& on_ended) {
    const ExecPlan plan(spec);

    // exec_errors reports exec's errno (close-on-exec: EOF means exec succeeded); go holds
    // the child back until counters are attached.
    int exec_errors[2];
    int go[2];
    if (::pipe2(exec_errors, O_CLOEXEC) != 0)
        throw std::runtime_error("pipe: " + errno_text(errno));
    if (::pipe2(go, O_CLOEXEC) != 0) {
        ::close(exec_errors[0]);
        ::close(exec_errors[1]);
        throw std::runtime_error("pipe: " + errno_text(errno));
    }

    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
        const int e = errno;
        for (int fd : {exec_errors[0], exec_errors[1], go[0], go[1]}) ::close(fd);
        throw std::runtime_error("fork: " + errno_text(e));
    }
    if (pid == 0) {
        ::close(exec_errors[0]);
        ::close(go[1]);
        exec_child(plan, exec_errors[1], go[0], parent);
    }

    ::close(exec_errors[1]);
    ::close(go[0]);
    if (spec.before_exec) spec.before_exec(pid);
    ChildResult result;
    result.pid = pid;
    read_launch_state(result, pid);
    const auto throttled_before =
        result.limits.cpu
            ? collectors::read_cpu_throttling(collectors::FsRoot::system(), *result.limits.cpu)
            : std::nullopt;
    rusage self_start{};
    const bool self_read = ::getrusage(RUSAGE_SELF, &self_start) == 0;
    result.start_ns = collectors::now_ns();
    release_child(go[1]);
    ::close(go[1]);

    throw_if_exec_failed(exec_errors[0], pid, spec);

    if (on_started) on_started(pid);
    // Waited for without reaping first: an exited, unreaped process still has its final
    // /proc/PID/io (its own and its reaped descendants'), which reaping folds into ceiling's.
    if (!wait_for_exit(pid)) throw std::runtime_error("waitid: " + errno_text(errno));
    result.end_ns = collectors::now_ns();
    if (rusage self_end{}; self_read && ::getrusage(RUSAGE_SELF, &self_end) == 0)
        result.observer_wakeups = static_cast<double>(self_end.ru_nvcsw - self_start.ru_nvcsw);
    if (throttled_before)
        if (const auto after =
                collectors::read_cpu_throttling(collectors::FsRoot::system(), *result.limits.cpu))
            result.throttling = collectors::throttling_delta(*throttled_before, *after);
    if (on_ended) on_ended();
    reap_child(result, pid);
    account_orphans(result);
    return result;
}

std::vector<CounterValue> process_counters(const ChildResult& child, const SampledPeaks* sampled,
                                           std::vector<std::string>& notes) {
    auto note = [&](const std::string& n) {
        if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
    };
    collectors::ProcessUsage usage = collectors::usage_from_rusage(child.usage);
    const double ru_peak = usage.max_rss_bytes.value_or(0);
    usage.max_rss_bytes.reset();  // at least ceiling's launch footprint: never recorded as is
    std::vector<CounterValue> out = to_counter_values(collectors::usage_readings(usage));
    auto add = [&](const std::string& name, std::optional<double> v, const char* unit,
                   bool low_confidence = false) {
        if (!v) return;
        CounterValue c;
        c.name = name;
        c.value = *v;
        c.unit = unit;
        c.source = Source::software;
        c.low_confidence = low_confidence;
        out.push_back(std::move(c));
    };
    auto larger = [](std::optional<double> a, std::optional<double> b) -> std::optional<double> {
        if (!a) return b;
        if (!b) return a;
        return std::max(*a, *b);
    };
    // Above the launch footprint (plus slack) ru_maxrss can only be a process of the program.
    const std::optional<double> exact =
        child.launch_rss_bytes && ru_peak > *child.launch_rss_bytes + launch_rss_slack_bytes
            ? std::optional(ru_peak)
            : std::nullopt;
    const bool enough_samples = sampled && sampled->samples >= trusted_samples;
    const bool trusted = exact || enough_samples;
    const auto peak = larger(sampled ? sampled->process_hwm_bytes : std::nullopt, exact);
    add("peak_rss_bytes", peak, "bytes", !trusted);
    if (!peak)
        note(
            "peak memory not measured: the program was not sampled (--interval 0) or ended "
            "before its first sample, and wait4's peak is ceiling's own");
    else if (!trusted)
        note("peak memory is a lower bound: the program ran for fewer than " +
             std::to_string(trusted_samples) +
             " sampling intervals, and growth after the last sample is not seen");
    static const double page_bytes = static_cast<double>(::sysconf(_SC_PAGESIZE));
    if (trusted)
        if (const auto sum = larger(sampled ? sampled->process_hwm_sum_bytes : std::nullopt, exact))
            add("peak_rss_pages", *sum / page_bytes, "pages");
    if (sampled) {
        add("peak_tree_rss_bytes", sampled->tree_rss_bytes, "bytes", !enough_samples);
        add("peak_threads", sampled->threads, "count");
        add("working_threads", sampled->working_threads, "count", !enough_samples);
        add("host_cpu_s", sampled->host_cpu_s, "s");
        add("host_steal_s", sampled->host_steal_s, "s");
        add("host_tasks_started", sampled->host_tasks_started, "count");
        add("host_runnable_thread_s", sampled->host_runnable_thread_s, "s");
        add("own_runnable_thread_s", sampled->own_runnable_thread_s, "s");
        // What its blocked threads waited in, each kind's thread-seconds.
        if (const auto& w = sampled->waiting_thread_s)
            for (std::size_t k = 0; k < w->size(); ++k)
                add(waiting_counter(static_cast<collectors::WaitKind>(k)), (*w)[k], "s");
    }
    add("observer_wakeups", child.observer_wakeups, "count");
    if (const auto& q = child.limits.cpu) {
        add("cpu_quota_cpus", q->cpus, "CPUs");
        if (const auto& t = child.throttling) {
            add("cpu_quota_periods", t->periods, "count");
            add("cpu_quota_throttled_periods", t->throttled_periods, "count");
            add("cpu_quota_throttled_s", t->throttled_s, "s");
        }
    }
    add("memory_limit_bytes", child.limits.memory_limit_bytes, "bytes");
    if (child.affinity_cpus)
        add("affinity_cpus", static_cast<double>(*child.affinity_cpus), "CPUs");
    if (child.io) {
        const auto io = to_counter_values(collectors::io_readings(*child.io));
        out.insert(out.end(), io.begin(), io.end());
    } else {
        note("I/O not measured: /proc/PID/io of the program or a descendant could not be read");
    }
    return out;
}

}  // namespace ceiling::measure
