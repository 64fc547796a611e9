#include "collectors/counted_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collectors/clock.hpp"
#include "collectors/software_events.hpp"

extern char** environ;

namespace ceiling::collectors {

namespace {

std::vector<std::string> merged_environment(const std::vector<std::string>& overrides) {
    std::vector<std::string> env;
    auto key = [](const std::string& kv) { return kv.substr(0, kv.find('=')); };
    for (char** e = environ; e && *e; ++e) {
        std::string kv(*e);
        bool replaced = false;
        for (const auto& o : overrides) replaced = replaced || key(o) == key(kv);
        if (!replaced) env.push_back(std::move(kv));
    }
    env.insert(env.end(), overrides.begin(), overrides.end());
    return env;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
    std::vector<char*> out;
    for (auto& s : v) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

void write_all(int fd, const void* data, std::size_t n) {
    const auto* p = static_cast<const char*>(data);
    while (n > 0) {
        const ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        p += w;
        n -= static_cast<std::size_t>(w);
    }
}

}  // namespace

GatedChild GatedChild::fork(const std::vector<std::string>& argv,
                            const std::vector<std::string>& env_overrides) {
    if (argv.empty()) throw std::invalid_argument("GatedChild::fork: empty argv");
    // Everything the child needs is built before fork: after fork in a threaded process
    // only async-signal-safe calls are allowed.
    std::vector<std::string> args = argv;
    std::vector<std::string> env = merged_environment(env_overrides);
    std::vector<char*> c_args = c_strings(args), c_env = c_strings(env);

    int gate[2], error[2];
    if (pipe2(gate, O_CLOEXEC) != 0)
        throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    if (pipe2(error, O_CLOEXEC) != 0) {
        const int e = errno;
        ::close(gate[0]);
        ::close(gate[1]);
        throw std::runtime_error(std::string("pipe: ") + std::strerror(e));
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
        const int e = errno;
        for (int fd : {gate[0], gate[1], error[0], error[1]}) ::close(fd);
        throw std::runtime_error(std::string("fork: ") + std::strerror(e));
    }
    if (pid == 0) {
        ::close(gate[1]);
        ::close(error[0]);
        char go = 0;
        ssize_t n = 0;
        do {
            n = ::read(gate[0], &go, 1);
        } while (n < 0 && errno == EINTR);
        if (n != 1) _exit(127);  // the parent went away without releasing us
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        signal(SIGPIPE, SIG_DFL);
        execvpe(c_args[0], c_args.data(), c_env.data());
        const int err = errno;
        write_all(error[1], &err, sizeof err);
        _exit(127);
    }
    ::close(gate[0]);
    ::close(error[1]);
    return GatedChild(pid, gate[1], error[0]);
}

GatedChild::GatedChild(GatedChild&& o) noexcept
    : pid_(o.pid_), gate_fd_(o.gate_fd_), error_fd_(o.error_fd_) {
    o.pid_ = -1;
    o.gate_fd_ = o.error_fd_ = -1;
}

GatedChild::~GatedChild() {
    if (gate_fd_ >= 0) {
        // Never released: closing the gate makes the child exit without running anything.
        ::close(gate_fd_);
        if (pid_ > 0) {
            int status = 0;
            while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
            }
        }
    }
    if (error_fd_ >= 0) ::close(error_fd_);
}

int GatedChild::release() {
    if (gate_fd_ < 0) return 0;
    const char go = 1;
    write_all(gate_fd_, &go, 1);
    ::close(gate_fd_);
    gate_fd_ = -1;
    int err = 0;
    ssize_t n = 0;
    do {
        n = ::read(error_fd_, &err, sizeof err);
    } while (n < 0 && errno == EINTR);
    ::close(error_fd_);
    error_fd_ = -1;
    return n == static_cast<ssize_t>(sizeof err) ? err : 0;
}

ProcessExit exit_from_wait_status(int status) {
    ProcessExit e;
    e.wait_status = status;
    if (WIFEXITED(status)) {
        e.exit_status = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        e.signal = WTERMSIG(status);
        e.exit_status = 128 + WTERMSIG(status);
        e.core_dumped = WCOREDUMP(status);
    }
    return e;
}

CountedProcess CountedProcess::launch(const LaunchOptions& options) {
    GatedChild child = GatedChild::fork(options.argv, options.env_overrides);
    PerfEventApi& api = options.api ? *options.api : system_perf_event_api();
    PerfEventSet counters = PerfEventSet::open(
        CountTarget::exec_child(child.pid()),
        options.counters.empty() ? software_counter_specs() : options.counters, api);
    const std::int64_t start = now_ns();
    if (const int err = child.release(); err != 0) {
        int status = 0;
        while (waitpid(child.pid(), &status, 0) < 0 && errno == EINTR) {
        }
        const int exit_status = err == ENOENT || err == ENOTDIR ? 127 : 126;
        throw LaunchError(exit_status, err,
                          "cannot run '" + options.argv[0] + "': " + std::strerror(err));
    }
    return CountedProcess(child.pid(), std::move(counters), start);
}

CountedProcess::CountedProcess(CountedProcess&& o) noexcept
    : pid_(o.pid_), counters_(std::move(o.counters_)), start_ns_(o.start_ns_), reaped_(o.reaped_) {
    o.pid_ = -1;
    o.reaped_ = true;
}

CountedProcess::~CountedProcess() {
    if (reaped_ || pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
}

Readings CountedProcess::read() const { return counters_.read(); }

CountedProcess::Result CountedProcess::finish(int wait_status, const rusage& ru) {
    reaped_ = true;
    Result r;
    r.exit = exit_from_wait_status(wait_status);
    r.exit.wall_s = static_cast<double>(now_ns() - start_ns_) * 1e-9;
    r.exit.usage = usage_from_rusage(ru);
    // The counters outlive the process: their totals include every inherited child that
    // has exited (the kernel folds a child's count into its parent's at exit).
    Reading wall;
    wall.name = "wall_s";
    wall.value = r.exit.wall_s;
    wall.unit = "s";
    wall.source = ReadingSource::timing;
    r.readings.values.push_back(std::move(wall));
    r.readings.append(counters_.read());
    r.readings.append(usage_readings(r.exit.usage));
    return r;
}

CountedProcess::Result CountedProcess::wait() {
    if (reaped_) throw std::logic_error("CountedProcess::wait: already reaped");
    int status = 0;
    rusage ru{};
    while (wait4(pid_, &status, 0, &ru) < 0) {
        if (errno != EINTR) throw std::runtime_error(std::string("wait4: ") + std::strerror(errno));
    }
    return finish(status, ru);
}

std::optional<CountedProcess::Result> CountedProcess::try_wait() {
    if (reaped_) throw std::logic_error("CountedProcess::try_wait: already reaped");
    int status = 0;
    rusage ru{};
    pid_t r = 0;
    do {
        r = wait4(pid_, &status, WNOHANG, &ru);
    } while (r < 0 && errno == EINTR);
    if (r < 0) throw std::runtime_error(std::string("wait4: ") + std::strerror(errno));
    if (r == 0) return std::nullopt;
    return finish(status, ru);
}

}  // namespace ceiling::collectors
