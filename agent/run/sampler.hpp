#pragma once
// Samples a running program and its descendants from /proc every interval, on a thread of
// its own, into time series (CPU cores busy, resident memory, threads, bytes read and
// written per second) and into the peaks and host load of the execution (each process's
// own peak memory, how many threads were runnable on the host, steal time). Kept small and
// separate so that the collectors' perf_event sampling (exact CPU time, hardware rates) can
// replace the /proc readings behind the same series.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "agent/record_names.hpp"
#include "agent/run/cumulative_timeline.hpp"
#include "collectors/blocked_call.hpp"
#include "collectors/process_accounting.hpp"
#include "diagnosis/run_record.hpp"

namespace ceiling::measure {

// A thread of ceiling's own that may be runnable beside the sampler while the program runs
// (the NVTX capture read meanwhile, at SCHED_IDLE: on a machine the program keeps busy it
// waits in the run queue from its timer's expiry until the program leaves it a CPU), and so
// is not the host's other work: its thread id (0: none). The sampler reads its state with
// the run queue and leaves it out where runnable.
inline std::atomic<pid_t> own_helper_tid{0};

// One process's own peak resident set so far: VmHWM of /proc/PID/status, which exec starts
// afresh (so it is never ceiling's memory, unlike wait4's ru_maxrss; see launch.hpp).
struct ProcessPeak {
    pid_t pid = 0;
    double start_ticks = 0;  // with the pid, names the process (pids are reused)
    double hwm_bytes = 0;
    std::string name;  // its command name (/proc/PID/stat)
    double cpu_s = 0;  // its own CPU time so far (utime + stime, every thread)
};

// A process of the tree as the samples saw it: from the first sample that found it to the
// last (so within a sampling interval of its real start and end), named as the last sample
// saw it (a fork is named after its parent until it execs).
struct SeenProcess {
    pid_t pid = 0;
    std::string name;
    std::int64_t first_ns = 0;
    std::int64_t last_ns = 0;
    double cpu_s = 0;  // its own CPU time at the last look
};

// The CPU time of the processes below one process at one reading: every live descendant's
// (with the children each has waited for) and the children it has waited for itself. What a
// region whose process hands its work to processes it starts (a subprocess, a multiprocessing
// pool) is judged with (RecordedRegion::descendant_busy_cores).
struct DescendantCpu {
    pid_t pid = 0;
    double start_ticks = 0;
    double cpu_s = 0;
};

// One thread's CPU time so far (utime + stime of /proc/PID/task/TID/stat), and where it
// stood at the look.
struct ThreadCpu {
    pid_t tid = 0;
    double start_ticks = 0;  // with the tid, names the thread (tids are reused)
    double cpu_s = 0;
    // Its scheduler statistics (/proc/PID/task/TID/schedstat, in ns): time on a CPU and time
    // runnable but queued; absent without them (a kernel built without CONFIG_SCHED_INFO).
    std::optional<double> run_ns, queued_ns;
    std::int64_t read_ns = 0;  // when they were read (collectors::now_ns)
    // Blocked (state S or D) at the look: what it waited in; absent when running.
    std::optional<collectors::WaitKind> blocked;
    pid_t pid = 0;  // its process
};

// How many threads shared a CPU time: the participation ratio (sum c)^2 / sum c^2 of their
// CPU times, n for n threads with equal shares, 1 when one thread did it all, ~1.3 for one
// thread with three quarters. nullopt when no thread used any CPU time (a tick).
std::optional<double> working_threads(const std::vector<double>& cpu_s);

// One window of thread_window_s (SampledPeaks::working_threads): its span, how many threads
// shared the CPU time used in it, and that CPU time.
struct ThreadWindow {
    std::int64_t start_ns = 0, end_ns = 0;
    double working_threads = 0;
    double cpu_s = 0;
};

// Totals over the process tree at one instant. CPU and I/O are cumulative (rates come from
// differences), memory and threads are levels. An I/O total is absent when some process's
// /proc/PID/io could not be read (a partial sum would read as a drop).
struct TreeSample {
    std::int64_t t_ns = 0;
    double cpu_s = 0;      // utime + stime + reaped children's, every process in the tree
    double system_s = 0;   // of which in the kernel: stime + reaped children's cstime
    double rss_bytes = 0;  // sum of resident sets
    double threads = 0;
    double processes = 0;
    collectors::ProcIo io;  // summed over the tree (collectors::ProcIo says what each counts)
    // Threads runnable on the host besides ceiling's own (the sampler, running while it
    // reads, and own_helpers_runnable).
    std::optional<double> host_runnable;
    // The tree's own runnable threads (state R, running or queued), at the same instant.
    std::optional<double> own_runnable;
    // Its threads' time blocked so far (since the first look at each), by what they waited in
    // (collectors::WaitKind: the system call each was in and, for one on a descriptor, what
    // that is): thread-seconds, filled in by WaitAccumulator.
    std::array<double, collectors::wait_kind_count> waited_s{};
    // Each process's threads' time runnable but queued for a CPU so far (since the first look
    // at each thread), thread-seconds, filled in by WaitAccumulator: where its CPU time was
    // low because it waited for a CPU, not for work.
    std::vector<std::pair<pid_t, double>> queued_s;
    std::vector<ProcessPeak> peaks;  // every process read
    std::vector<DescendantCpu> descendants;  // every process read, in /proc's clock ticks
    std::vector<ThreadCpu> thread_cpu;       // every thread read
    // CPU time every task of the host has used since boot (/proc/stat, clock ticks: 10 ms
    // per CPU at USER_HZ 100): with the program's, what other processes did meanwhile.
    std::optional<double> host_busy_s;
    // Taken in the first interval, denser than the interval, only so that short programs
    // get their peaks seen; left out of the series.
    bool probe = false;
};

class WaitAccumulator;

// One reading of the tree rooted at `root`, from the /proc tree at `proc` (injectable for
// tests). nullopt when the root is gone. With `waits`, a blocked thread that has not run since
// its last look (WaitAccumulator::unchanged) is not asked its system call again: 200 threads
// parked on a condition variable would double the sampler's reads.
std::optional<TreeSample> sample_tree(pid_t root, const std::filesystem::path& proc = "/proc",
                                      const WaitAccumulator* waits = nullptr);

// What the samples of one execution add up to. Peaks are lower bounds: a process's growth
// after its last sample is not seen (wait4's rusage fills that in for a large one, see
// launch.hpp's process_counters).
struct SampledPeaks {
    int samples = 0;                          // regular samples (probes not counted)
    std::optional<double> tree_rss_bytes;     // highest sum of the tree's resident sets
    std::optional<double> process_hwm_bytes;  // largest VmHWM of any one process
    // Each process's VmHWM, summed over every process seen: the most resident pages first
    // touch can explain the tree's page faults with.
    std::optional<double> process_hwm_sum_bytes;
    std::optional<double> threads;
    // How many threads shared the work at a time: working_threads of the CPU time each
    // thread used within a window of thread_window_s, over the threads alive together
    // through one interval between its samples (the interval whose threads used the most),
    // averaged over the windows weighted by that CPU time. The window is long enough for
    // threads taking turns on a lock to each get some (Python hands the GIL on every 5 ms,
    // not evenly, and /proc counts in 10 ms ticks); threads started one after another are
    // never alive together through an interval, so they count as one. Unknown when no
    // thread used CPU time (a tick) in any window.
    std::optional<double> working_threads;
    std::vector<ThreadWindow> thread_windows;  // each window with CPU time in it, oldest first
    // Over the sampled window, the host as a whole (from /proc/stat and /proc/loadavg):
    std::optional<double> host_cpu_s;    // CPU time of every CPU that elapsed (window x CPUs)
    std::optional<double> host_steal_s;  // of which the hypervisor gave to other guests
    // Threads and processes the host started (forks and clones), its own among them.
    std::optional<double> host_tasks_started;
    // Runnable threads (the sampler's excepted) integrated over the window: divided by
    // host_cpu_s, the mean number of runnable threads per CPU.
    std::optional<double> host_runnable_thread_s;
    // The same for the program's own threads: the share of the run queue that was its own.
    std::optional<double> own_runnable_thread_s;
    // Its threads' time blocked, by what they waited in (TreeSample::waited_s at the last
    // sample): thread-seconds of waiting of each kind. Unknown without a sample.
    std::optional<std::array<double, collectors::wait_kind_count>> waiting_thread_s;
};

// A level that holds its value from one sample to the next, integrated over time; unknown
// until a sample knows it, and a sample that does not know it ends the step before.
class StepIntegral {
  public:
    void add(std::int64_t t_ns, std::optional<double> value);
    std::optional<double> until(std::int64_t end_ns) const;  // the integral, in value x s

  private:
    std::optional<std::pair<std::int64_t, double>> last_;  // (t_ns, value)
    double sum_ = 0;
    bool known_ = false;
};

// Folds samples into SampledPeaks, oldest first; a pure step so tests can drive it with
// recorded samples. `finish` closes the window at `end_ns` with the host's CPU ticks then.
class PeakAccumulator {
  public:
    void add(const TreeSample& s);
    SampledPeaks finish(std::int64_t end_ns, std::optional<collectors::HostCpuTicks> host_start,
                        std::optional<collectors::HostCpuTicks> host_end,
                        double clock_ticks_per_s) const;

  private:
    SampledPeaks peaks_;
    std::map<std::pair<pid_t, double>, double> hwm_;                // (pid, start ticks) -> VmHWM
    // The open window were it closed at `now_ns` (its latest sample); nullopt when no
    // thread used CPU time in it.
    std::optional<ThreadWindow> thread_window(std::int64_t now_ns) const;
    void open_window(const TreeSample& s);
    void note_threads(const std::vector<ThreadCpu>& threads);
    // The open window: when it started, how many samples it holds, and each thread seen in
    // it ((tid, start) keyed): the first and last of those samples that saw it, its CPU time
    // at the window's start (0 for a thread the first sample did not see: it started within)
    // and at its last sighting.
    struct WindowThread {
        int first = 0, last = 0;
        double start_cpu_s = 0, last_cpu_s = 0;
    };
    std::optional<std::int64_t> window_start_ns_;
    int window_samples_ = 0;
    std::map<std::pair<pid_t, double>, WindowThread> window_threads_;
    std::int64_t last_thread_ns_ = 0;
    std::vector<ThreadWindow> thread_windows_;  // closed
    StepIntegral host_runnable_, own_runnable_;
};

// Time blocked by kind, from looks at each thread. Between two looks a thread was blocked for
// the time it neither ran nor queued (its schedstat: exact; a look's state alone catches a
// short wait's share unevenly: a log flushed after every record was blocked 60 % of a second
// by schedstat, 25-42 % by 10 ms looks), and that time is put on the kind it waited in at the
// later look, else at the earlier one, else the last kind it was seen waiting in (a thread
// that flushes after every write is mostly seen running between its waits); never seen
// waiting, it is left out (no kind to put it on). Without schedstat, the interval when the
// later look found it blocked. Each interval is timed by the thread's own reads: the scan of
// a tree with many threads takes a while. Pure: driven by samples.
class WaitAccumulator {
  public:
    // Adds `s`'s threads and writes the cumulative waits so far into s.waited_s, and each
    // process's queued time so far into s.queued_s.
    void add(TreeSample& s);
    // What the thread waited in at its last look, where it has not run since (the same time
    // on a CPU): it waits in the same call still.
    std::optional<collectors::WaitKind> unchanged(pid_t tid, double start_ticks,
                                                  std::optional<double> run_ns) const;

  private:
    struct Seen {
        std::optional<std::int64_t> t_ns;  // of its last look
        std::int64_t sample_ns = 0;        // the sample of its last look
        std::optional<double> run_ns, queued_ns;
        std::optional<collectors::WaitKind> blocked, last_kind;
    };
    std::map<std::pair<pid_t, double>, Seen> threads_;
    std::array<double, collectors::wait_kind_count> waited_s_{};
    std::map<pid_t, double> queued_s_;
};

// The thread-seconds blocked on storage (flushes and file I/O) so far at a sample: what the
// run's and a region's storage waits are made of.
double storage_waited_s(const TreeSample& s);

// A process's cumulative value as the samples read it: the points kept, and the last reading
// when it equals the last point (kept once the value moves on, so the growth is placed
// between the two readings around it, not spread back to the last change).
struct ProcessSeries {
    ProcessTimeline timeline;
    std::optional<TimelinePoint> unchanged;
};

class Sampler {
  public:
    // Takes the first sample at once (so a program that ends before the thread starts is
    // still seen), then samples `root` on a thread of its own: a few probes at 0.1, 0.2,
    // 0.4 ... ms, then every `interval_s`. `cpu_seconds`, when given and answering,
    // replaces /proc's tick-granular CPU time (e.g. perf task-clock of the whole tree).
    using CpuReader = std::function<std::optional<double>()>;
    Sampler(pid_t root, double interval_s, CpuReader cpu_seconds = {},
            std::filesystem::path proc = "/proc");
    // The host's count of tasks (threads and processes) started since boot, now.
    static std::optional<double> host_tasks_started_now(const std::filesystem::path& proc = "/proc");
    ~Sampler();
    Sampler(const Sampler&) = delete;
    Sampler& operator=(const Sampler&) = delete;
    // Stops the thread; the regular samples taken, oldest first.
    std::vector<TreeSample> stop();
    // The host's count of started tasks as read before the program was released (see
    // host_tasks_started_now): the count then covers the threads it starts at once, before
    // this sampler's first look.
    void count_tasks_from(std::optional<double> tasks_started) { tasks_before_ = tasks_started; }
    // Highest tree-wide resident memory seen (0 before the first sample).
    double peak_rss_bytes() const { return peak_rss_bytes_.load(); }
    double peak_threads() const { return peak_threads_.load(); }
    // After stop(): what the samples add up to over the window from construction to stop.
    const SampledPeaks& peaks() const { return peaks_; }
    // After stop(): every process the samples saw, in the order first seen.
    std::vector<SeenProcess> processes() const;
    // After stop(): for each process whose descendants used CPU time, that time as the
    // samples read it (a point where it changed, and the reading before each change).
    std::vector<ProcessTimeline> descendant_cpu() const;
    // After stop(): for each process whose threads queued for a CPU, that time (thread-
    // seconds), kept the same way.
    std::vector<ProcessTimeline> process_queued() const;
    // After stop(): the CPU time every process of the host but ceiling used, cumulative from
    // boot, at each reading: the host's busy time less ceiling's own. Within a clock tick per
    // CPU of the truth at each point (the host's time is counted per tick).
    std::vector<TimelinePoint> host_cpu() const { return host_cpu_; }

  private:
    void take(pid_t root, const CpuReader& cpu_seconds, bool probe);
    void loop(pid_t root, double interval_s, const CpuReader& cpu_seconds);
    void stop_thread();
    std::filesystem::path proc_;
    // Set by stop(); the loop waits on wake_ so it ends at once, not at its next tick.
    std::atomic<bool> stop_{false};
    std::mutex wake_mutex_;
    std::condition_variable wake_;
    std::atomic<double> peak_rss_bytes_{0};
    std::atomic<double> peak_threads_{0};
    std::vector<TreeSample> samples_;
    PeakAccumulator accumulator_;
    WaitAccumulator waits_;
    std::optional<collectors::HostCpuTicks> host_start_;
    std::optional<double> tasks_before_;
    SampledPeaks peaks_;
    std::map<std::pair<pid_t, double>, std::size_t> seen_index_;  // (pid, start) -> seen_
    std::vector<TimelinePoint> host_cpu_;
    // (pid, start) -> its descendants' CPU time; (pid, 0) -> its threads' time queued.
    std::map<std::pair<pid_t, double>, ProcessSeries> descendants_, queued_;
    std::vector<SeenProcess> seen_;
    std::thread thread_;
};

// The series of a record from samples, times relative to `start_ns`. CPU/I-O rates use a
// trailing window of at least `min_window_s` because /proc counts CPU time in clock ticks
// (10 ms at USER_HZ 100): a 10 ms window would read 0 or 1 core, never 0.5. Probes are
// left out.
std::vector<Series> series_from_samples(const std::vector<TreeSample>& samples,
                                        std::int64_t start_ns, double min_window_s = 0.05);

// Halves the number of points (averaging neighbours) until each series has at most
// `max_points`, so hour-long runs keep a bounded record.
void decimate(std::vector<Series>& series, std::size_t max_points);

}  // namespace ceiling::measure
