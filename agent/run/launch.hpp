#pragma once
// Launching a wrapped program the way a shell would, without a shell: PATH lookup with sh's
// 127 / 126 conventions (a script without "#!" run by /bin/sh), the program's stdio
// untouched, signals forwarded (child_signals.hpp), the exit status, resource usage and I/O
// of everything it ran collected when it ends.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/resource.h>
#include <sys/types.h>

#include "agent/run/sampler.hpp"
#include "collectors/cgroup.hpp"
#include "collectors/process_accounting.hpp"
#include "diagnosis/run_record.hpp"

namespace ceiling::measure {

// A program name resolved like execvp would: a name with a '/' is taken as is, otherwise
// the first executable regular file in $PATH wins.
struct ResolvedProgram {
    std::filesystem::path path;  // empty when not runnable
    int status = 0;              // 0 runnable, 127 not found, 126 found but not executable
    std::string error;           // one line: "frobnicate: command not found"
};
ResolvedProgram resolve_program(const std::string& name, const std::string& path_env);

struct LaunchSpec {
    std::filesystem::path executable;
    std::vector<std::string> argv;                             // argv[0] as the user typed it
    std::vector<std::pair<std::string, std::string>> set_env;  // added to (or replacing in) environ
    // Called in ceiling after fork and before the child may exec, with the child's pid, so
    // collectors can attach counters that start at exec (perf_event enable_on_exec).
    std::function<void(pid_t)> before_exec;
};

struct ChildResult {
    pid_t pid = 0;
    std::int64_t start_ns = 0;  // released to exec (CLOCK_MONOTONIC)
    std::int64_t end_ns = 0;    // reaped
    ProcessEnd end;
    // The child and every descendant it or ceiling reaped. Its ru_maxrss is not the
    // program's: at exec Linux keeps the replaced memory's peak (ceiling's, copied by fork)
    // in the process's maxrss, so it reads at least `launch_rss_bytes`.
    rusage usage{};
    // The forked child's peak resident set just before exec: ceiling's memory that
    // usage.ru_maxrss may report (absent when /proc could not tell).
    std::optional<double> launch_rss_bytes;
    // Final I/O of the child and every descendant reaped, read from /proc/PID/io while each
    // was exited but not yet reaped; absent when one could not be read.
    std::optional<collectors::ProcIo> io;
    // ceiling's own voluntary context switches (every thread of it: the sampler's ticks,
    // the waits here) from the child's release to its exit: each is a wakeup of ceiling on
    // a CPU, which can preempt one of the program's threads once when every CPU is busy
    // with them. Absent when getrusage failed.
    std::optional<double> observer_wakeups;
    // The CPU quota and memory limit of the control group the program started in (ceiling's:
    // a container's), and how often the quota held the group back while the program ran
    // (the whole group's periods: the program, ceiling and anything else in it). Absent
    // where no quota is set or cpu.stat could not be read.
    collectors::CgroupLimits limits;
    // The CPUs its affinity mask allowed at start (taskset, numactl, a container's cpuset:
    // ceiling's own mask, inherited) where fewer than the host's online CPUs; else absent.
    std::optional<int> affinity_cpus;
    std::optional<collectors::CpuThrottling> throttling;
    int orphans_reaped = 0;   // descendants re-parented to ceiling (subreaper) and reaped
    int orphans_running = 0;  // descendants still running when the program ended
    // Those descendants (ceiling's children by then, as its subreaper), "name (pid N)", as
    // far as /proc/self/task/*/children lists them.
    std::vector<std::string> orphans_named;
};

// Starts the program and waits for it. Throws LaunchFailure (status 126 / 127, one-line
// message) when exec fails; any other failure to start throws std::runtime_error.
// `on_started` runs in ceiling once the child is exec-ing (e.g. to start a sampler) and
// `on_ended` right after it was reaped, before orphans are collected.
struct LaunchFailure : std::runtime_error {
    LaunchFailure(int s, const std::string& m) : std::runtime_error(m), status(s) {}
    int status;
};
ChildResult run_child(const LaunchSpec& spec, const std::function<void(pid_t)>& on_started,
                      const std::function<void()>& on_ended);

// The counters of one execution, as the record keeps them: wait4's CPU time, faults and
// context switches, the final I/O, the program's own peak memory and the host's load.
// `sampled` (the execution's SampledPeaks, when it was sampled) supplies the peaks and the
// host's load. Peak memory is never ceiling's:
//  - peak_rss_bytes: the largest peak resident set of any one process of the program:
//    its VmHWM (which exec starts afresh) at the last sample, or wait4's ru_maxrss where
//    that exceeds the launch footprint by more than the slack (then it can only be the
//    program's, and it is exact to the end). Otherwise it is a lower bound missing what a
//    process gained after its last sample, at most one interval's growth; marked
//    low_confidence when fewer than `trusted_samples` samples were taken;
//  - peak_tree_rss_bytes: the highest sum of the tree's resident sets at a sample;
//  - peak_rss_pages: each process's peak summed over the processes, in pages: the most
//    page faults first touch can explain. Only where the peak is trusted (exact, or
//    sampled over `trusted_samples` intervals: a steadily growing program then reads at
//    least 90% of its peak), else absent.
// Notes for what could not be measured are appended to `notes` once.
inline constexpr int trusted_samples = 10;
// Pages the held child may fault in between the launch footprint's reading and exec (libc
// and ceiling code, fault-around maps 16 pages at a time), with room to spare.
inline constexpr double launch_rss_slack_bytes = 4.0 * 1024 * 1024;
std::vector<CounterValue> process_counters(const ChildResult& child, const SampledPeaks* sampled,
                                           std::vector<std::string>& notes);

// Makes ceiling the reaper of orphaned descendants (PR_SET_CHILD_SUBREAPER), so a program's
// double-forked children are still counted. Returns false where the kernel refuses.
bool become_subreaper();

// "SIGSEGV" for 11; "signal 42" where the C library has no name.
std::string signal_name(int sig);
ProcessEnd process_end_from_status(int wait_status);

}  // namespace ceiling::measure
