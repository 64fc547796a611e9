#pragma once
// Clock and process accounting, available everywhere: wall time, user and system CPU
// time, peak RSS, minor/major faults, voluntary/involuntary context switches. From
// getrusage/wait4 for the calling process or a reaped child, from /proc/PID for a process
// still running (sampling), both read through an injectable FsRoot.

#include <optional>
#include <string_view>

#include <sys/resource.h>
#include <sys/types.h>

#include "collectors/collector.hpp"
#include "collectors/fs_root.hpp"

namespace ceiling::collectors {

struct ProcessUsage {
    std::optional<double> user_s;
    std::optional<double> system_s;
    std::optional<double> max_rss_bytes;  // peak resident set (a peak: never differenced)
    std::optional<double> minor_faults;
    std::optional<double> major_faults;
    std::optional<double> voluntary_switches;    // blocked: I/O, locks, sleeps
    std::optional<double> involuntary_switches;  // preempted: more runnable threads than CPUs
};

ProcessUsage usage_from_rusage(const rusage& ru);
// after - before for the counters and times; max_rss_bytes is after's (a peak).
ProcessUsage usage_delta(const ProcessUsage& before, const ProcessUsage& after);

// /proc/PID/stat fields used here (proc(5) numbering).
struct ProcStat {
    char state = '?';
    double minor_faults = 0;  // field 10
    double major_faults = 0;  // field 12
    double utime_ticks = 0;   // field 14, in clock ticks (sysconf(_SC_CLK_TCK))
    double stime_ticks = 0;   // field 15
    double num_threads = 0;   // field 20
    double rss_pages = 0;     // field 24
};
// The command name (field 2) may contain spaces and parentheses: fields are counted from
// the last ')'. nullopt when malformed.
std::optional<ProcStat> parse_proc_stat(std::string_view text);

// /proc/PID/status fields used here; absent ones stay nullopt.
struct ProcStatus {
    std::optional<double> vm_hwm_bytes;  // VmHWM: peak RSS
    std::optional<double> vm_rss_bytes;
    std::optional<double> threads;
    std::optional<double> voluntary_switches;    // voluntary_ctxt_switches
    std::optional<double> involuntary_switches;  // nonvoluntary_ctxt_switches
    std::optional<std::uint64_t> cap_effective;  // CapEff (hex bit mask)
};
ProcStatus parse_proc_status(std::string_view text);

// Usage of a live process (all its threads) from /proc/PID/{stat,status}; `pid` may be
// "self". nullopt when the process is gone or /proc is unreadable.
std::optional<ProcessUsage> read_proc_usage(const FsRoot& root, std::string_view pid,
                                            double clock_ticks_per_s, double page_size_bytes);
std::optional<ProcessUsage> read_proc_usage(const FsRoot& root, std::string_view pid);

// Readings named user_s, system_s, max_rss_bytes, minor_faults, major_faults,
// voluntary_context_switches, involuntary_context_switches; absent values are left out.
Readings usage_readings(const ProcessUsage& u);

// Wall clock plus rusage of the calling process (all threads) or the calling thread only.
class ProcessAccountingCollector : public Collector {
  public:
    enum class Scope { process, thread };
    explicit ProcessAccountingCollector(Scope scope = Scope::process) : scope_(scope) {}
    std::string_view name() const override { return "process accounting"; }
    Capability probe() override { return Capability::yes("getrusage and the monotonic clock"); }
    void start() override;
    Readings stop() override;
    Readings read() override;

  private:
    ProcessUsage sample() const;
    Scope scope_;
    ProcessUsage begin_;
    std::int64_t begin_ns_ = 0;
};

}  // namespace ceiling::collectors
