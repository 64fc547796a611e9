#pragma once
// Counting a program from its first instruction: fork a child that waits at a gate, open
// counters on it with inherit + enable_on_exec, then let it exec. Every thread and process
// it creates is counted, and the totals are read after it exits. `ceiling run` uses
// CountedProcess; a launcher that needs its own fork can use GatedChild with
// CountTarget::exec_child(pid) directly.

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/types.h>

#include "collectors/perf_events.hpp"
#include "collectors/process_accounting.hpp"
#include "collectors/reading.hpp"

namespace ceiling::collectors {

// The program could not be started. exit_status follows the shell: 127 when it was not
// found, 126 when it was found but could not be executed.
struct LaunchError : std::runtime_error {
    LaunchError(int status, int err, const std::string& message)
        : std::runtime_error(message), exit_status(status), error(err) {}
    int exit_status;
    int error;  // errno of the failed execve
};

// A forked child blocked before execve until release().
class GatedChild {
  public:
    // argv[0] is looked up in PATH (no shell). env_overrides ("NAME=value") replace or add
    // to this process's environment for the child. The child starts with no signals
    // blocked and SIGPIPE at its default.
    static GatedChild fork(const std::vector<std::string>& argv,
                           const std::vector<std::string>& env_overrides = {});
    GatedChild(GatedChild&& o) noexcept;
    GatedChild& operator=(GatedChild&&) = delete;
    GatedChild(const GatedChild&) = delete;
    GatedChild& operator=(const GatedChild&) = delete;
    ~GatedChild();  // a child never released is killed and reaped

    pid_t pid() const { return pid_; }
    // Lets the child exec. Returns 0 when execve succeeded, else its errno; the child has
    // then exited with status 127 and must still be reaped (waitpid).
    int release();

  private:
    GatedChild(pid_t pid, int gate_fd, int error_fd)
        : pid_(pid), gate_fd_(gate_fd), error_fd_(error_fd) {}
    pid_t pid_ = -1;
    int gate_fd_ = -1;   // write end: one byte opens the gate
    int error_fd_ = -1;  // read end: EOF on successful exec (CLOEXEC), else the errno
};

// How a process ended, in the convention `ceiling run` returns.
struct ProcessExit {
    int exit_status = 0;        // exit code, or 128 + signal when killed
    std::optional<int> signal;  // the signal that killed it
    bool core_dumped = false;
    int wait_status = 0;  // raw waitpid status
    double wall_s = 0;    // from exec to exit
    // wait4's rusage: the child plus every descendant it waited for.
    ProcessUsage usage;
};
ProcessExit exit_from_wait_status(int wait_status);

struct LaunchOptions {
    std::vector<std::string> argv;
    std::vector<std::string> env_overrides;  // "NAME=value"
    std::vector<CounterSpec> counters;       // empty: the software events
    PerfEventApi* api = nullptr;             // null: the kernel's
};

class CountedProcess {
  public:
    // Forks, opens the counters on the child, lets it exec. Throws LaunchError when it
    // cannot be executed. Counters that cannot be opened do not stop the program: the
    // failure is in the readings' warnings and those values are absent.
    static CountedProcess launch(const LaunchOptions& options);

    CountedProcess(CountedProcess&& o) noexcept;
    CountedProcess& operator=(CountedProcess&&) = delete;
    ~CountedProcess();  // a process never waited for is killed and reaped

    pid_t pid() const { return pid_; }
    // Counter totals so far, for sampling while it runs.
    Readings read() const;

    struct Result {
        ProcessExit exit;
        // Counter totals over the whole process tree, wall_s, and the rusage readings.
        Readings readings;
    };
    // Blocks until the process exits (retrying on EINTR, so signal forwarding can run).
    Result wait();
    // Returns nullopt while it still runs.
    std::optional<Result> try_wait();

  private:
    CountedProcess(pid_t pid, PerfEventSet counters, std::int64_t start_ns)
        : pid_(pid), counters_(std::move(counters)), start_ns_(start_ns) {}
    Result finish(int wait_status, const rusage& ru);
    pid_t pid_ = -1;
    PerfEventSet counters_;
    std::int64_t start_ns_ = 0;
    bool reaped_ = false;
};

}  // namespace ceiling::collectors
