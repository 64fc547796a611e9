#pragma once
// Clock and process accounting, available everywhere: wall time, user and system CPU
// time, peak RSS, minor/major faults, voluntary/involuntary context switches, I/O bytes,
// and what the host's other work took from it (steal time, runnable threads). From
// getrusage/wait4 for the calling process or a reaped child, from /proc/PID for a process
// still running (sampling) or exited but not yet reaped, both read through an injectable
// FsRoot.

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
    double cutime_ticks = 0;  // field 16: children it waited for
    double cstime_ticks = 0;  // field 17
    double num_threads = 0;   // field 20
    double start_ticks = 0;   // field 22: with the pid, names a process (pids are reused)
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

// /proc/PID/io (proc(5)). Of a thread group it sums every thread, live or exited, and every
// child the process reaped; of a process that exited but is not reaped yet (a zombie) it is
// therefore the final count of the process and its reaped descendants. Absent fields stay
// nullopt (the file is missing without CONFIG_TASK_IO_ACCOUNTING: then I/O is unknown).
struct ProcIo {
    // rchar / wchar: bytes passed to read-like / write-like system calls, whatever served
    // them (page cache, pipes, sockets, terminals).
    std::optional<double> read_call_bytes;
    std::optional<double> write_call_bytes;
    // read_bytes / write_bytes: bytes fetched from / sent to storage (a block device).
    // Writes count when a page of a block-backed file is dirtied, so a write counts at once
    // (not at writeback); tmpfs and other memory-only filesystems count none.
    std::optional<double> storage_read_bytes;
    std::optional<double> storage_write_bytes;
    // syscr / syscw: how many read-like / write-like system calls passed those bytes (their
    // mean size says whether the program buffers: 3 million 1-byte writes spent 93 % of a
    // program's CPU time in the kernel).
    std::optional<double> read_calls;
    std::optional<double> write_calls;
};
// "rchar: 123" lines; a value that is not a whole number leaves its field absent.
ProcIo parse_proc_io(std::string_view text);
std::optional<ProcIo> read_proc_io(const FsRoot& root, std::string_view pid);
// Field by field sum; a field absent on either side stays absent.
ProcIo add(const ProcIo& a, const ProcIo& b);
// Readings named read_call_bytes, write_call_bytes, read_calls, write_calls,
// storage_read_bytes, storage_write_bytes; absent values are left out.
Readings io_readings(const ProcIo& io);

// The host's CPU time from /proc/stat's aggregate "cpu" line, in clock ticks, summed over
// every CPU: all of it (user .. steal; guest time is already inside user and nice), the
// part the hypervisor gave to other guests (steal), and the part no task ran (idle and
// iowait: a CPU waiting for I/O with nothing to run). The rest, total - steal - idle, is CPU
// time some task of this host used.
// With them, /proc/stat's "processes" line: the tasks the host has started since boot (every
// fork and clone, threads included), when present.
struct HostCpuTicks {
    double total = 0;
    double steal = 0;
    double idle = 0;
    std::optional<double> tasks_started;
    double busy() const { return total - steal - idle; }
};
std::optional<HostCpuTicks> parse_host_cpu_ticks(std::string_view proc_stat);
// Runnable threads on the host now: the first number of /proc/loadavg's "running/total"
// (nr_running, the reader itself included).
std::optional<double> parse_loadavg_runnable(std::string_view loadavg);

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
