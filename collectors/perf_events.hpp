#pragma once
// A set of perf_event counters on one target: the calling thread, every thread of this
// process, a child process (from its exec, inherited by its threads and children), or
// CPUs (uncore, RAPL). Each event is opened on its own, never in a group, so the kernel
// multiplexes when there are more events than counters and nothing is silently dropped;
// counts are scaled by enabled/running time (counter_scaling.hpp).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <sys/types.h>

#include "collectors/counter_scaling.hpp"
#include "collectors/perf_environment.hpp"
#include "collectors/perf_event_api.hpp"
#include "collectors/reading.hpp"

namespace ceiling::collectors {

// perf_event_attr's event identity: type (PERF_TYPE_* or a sysfs PMU type) and config words.
struct EventEncoding {
    std::uint32_t type = PERF_TYPE_SOFTWARE;
    std::uint64_t config = 0;
    std::uint64_t config1 = 0;
    std::uint64_t config2 = 0;
};

struct CounterSpec {
    std::string name;  // the reading's name
    EventEncoding encoding;
    std::string unit = "count";  // unit of raw count x scale
    double scale = 1;            // e.g. task-clock counts ns: 1e-9 gives seconds
    ReadingSource source = ReadingSource::software;
    EventScope scope = EventScope::software;  // decides how an open failure is explained
};

struct CountTarget {
    enum class Kind { calling_thread, this_process, process, cpus };
    Kind kind = Kind::calling_thread;
    pid_t pid = 0;
    bool inherit = false;         // count threads and processes the target creates later
    bool enable_on_exec = false;  // start counting at the target's next execve
    std::vector<int> cpus;        // Kind::cpus

    // The calling thread only.
    static CountTarget calling_thread();
    // Every thread of this process now, and the threads and children they create later.
    static CountTarget this_process();
    // A forked child blocked before execve: counts from its exec, inherited by every thread
    // and process it creates. Open before letting it exec (`ceiling run` does: agent/run/run_program.cpp).
    static CountTarget exec_child(pid_t pid);
    // A running process: its current threads and what they create from now on.
    static CountTarget process(pid_t pid);
    // CPU-wide counters (uncore, RAPL): one per listed CPU, every process.
    static CountTarget cpu_wide(std::vector<int> cpus);
};

struct PerfEventSetOptions {
    double min_running_fraction = default_min_running_fraction;
    // Programmable counters per thread, when known: opening more hardware events than this
    // warns that they will be multiplexed (they are still all opened).
    std::optional<int> hardware_counters;
    const PerfEnvironment* environment = nullptr;  // for explaining failures; read if null
};

class PerfEventSet {
  public:
    struct Failure {
        std::string counter;
        int error = 0;  // errno
        Capability explanation;
    };

    // Opens every spec on the target. A spec that cannot be opened is listed in failures()
    // and its reading is absent; the rest are opened. Counters start disabled (or armed for
    // exec); call enable().
    static PerfEventSet open(const CountTarget& target, std::vector<CounterSpec> specs,
                             PerfEventApi& api = system_perf_event_api(),
                             const PerfEventSetOptions& options = {});

    PerfEventSet(PerfEventSet&& other) noexcept;
    PerfEventSet& operator=(PerfEventSet&& other) noexcept;
    PerfEventSet(const PerfEventSet&) = delete;
    PerfEventSet& operator=(const PerfEventSet&) = delete;
    ~PerfEventSet();

    const std::vector<CounterSpec>& specs() const { return specs_; }
    const std::vector<Failure>& failures() const { return failures_; }
    std::size_t opened() const;  // specs with at least one open counter
    // Kernel mode had to be excluded (perf_event_paranoid >= 2 without CAP_PERFMON).
    bool user_space_only() const { return user_space_only_; }

    void enable();
    void disable();
    void reset();

    // Per spec, in spec order: the scaled raw count (absent when it could not be opened).
    std::vector<std::optional<ScaledCount>> read_counts() const;
    // Readings (count x scale, in the spec's unit); unmeasurable ones absent, with warnings
    // for failures to open and for multiplexing.
    Readings read() const;
    // One spec's value (count x scale), read alone: a sampler that needs only CPU time then
    // costs one read (an IPI to the CPU the target runs on), not one per event.
    std::optional<double> read_value(std::string_view name) const;

  private:
    PerfEventSet(PerfEventApi& api, std::vector<CounterSpec> specs, double min_running_fraction);
    std::optional<ScaledCount> read_spec(std::size_t i) const;  // absent when not opened
    void close_all();
    void ioctl_all(unsigned long request);

    PerfEventApi* api_;
    std::vector<CounterSpec> specs_;
    std::vector<std::vector<int>> fds_;  // per spec: one per thread or CPU
    std::vector<Failure> failures_;
    std::vector<std::string> warnings_;
    double min_running_fraction_;
    bool user_space_only_ = false;
};

// The kernel switches its perf scheduling hooks on (a static key: code patching with IPIs
// to every CPU, measured 5-20 ms in a VM) when the first per-task event of the whole system
// opens, and off about a second after the last one closes. While an instance lives, it
// holds one dummy event (counts nothing) opened by a helper thread at construction, so that
// cost is paid beside ceiling's own start-up, not by a program waiting for its counters
// before it may exec. Best effort: where perf_event_open is refused, nothing happens here
// and the counters that matter report it themselves.
class PerfHooksWarmup {
  public:
    PerfHooksWarmup();
    ~PerfHooksWarmup();
    PerfHooksWarmup(const PerfHooksWarmup&) = delete;
    PerfHooksWarmup& operator=(const PerfHooksWarmup&) = delete;

  private:
    int fd_ = -1;
    std::thread opener_;
};

}  // namespace ceiling::collectors
