#pragma once
// RunRecord: everything one `ceiling run` or `ceiling suite` produced, kept so that
// `ceiling report` can re-render and re-judge it and `ceiling diff` can compare two of them
// without re-running anything. Versioned JSON (schema_version, units in field names).
//
// The record holds the measurements the verdicts came from, so re-judging against another
// machine profile or other thresholds (`report --profile`) needs no re-run. The verdicts of
// the time are kept too (diagnosis, budget checks), for diff's "bound changed" and "budget
// flipped" and for readers without ceiling.

#include <map>
#include <unordered_map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnosis/budget.hpp"
#include "diagnosis/diagnosis.hpp"
#include "diagnosis/answer.hpp"
#include "diagnosis/op_summary.hpp"
#include "diagnosis/machine_profile.hpp"
#include "diagnosis/measurement.hpp"
#include "diagnosis/thresholds.hpp"

namespace ceiling {

// The note a run record carries when no GPU activity was seen on a machine without a CUDA
// driver: kept in the record (it says why GPU figures are absent), left out of the printed
// summary (no program can have used a GPU there; a CPU program's summary stays about it).
inline constexpr std::string_view no_cuda_driver_note = "GPU activity: none recorded: no usable CUDA driver here";

// Version 1: first release. Readers refuse any other version with one line naming it.
inline constexpr int run_record_schema_version = 1;

// What produced the record. `suite` records hold kernels, `run` records hold NVTX ranges.
enum class RecordKind { run, suite };
inline constexpr std::array<std::string_view, 2> record_kind_names = {"run", "suite"};

// How one execution of a program ended. not_started: it never ran (not found, not
// executable, the launch failed), `message` says why.
enum class EndKind { exited, signaled, not_started };
inline constexpr std::array<std::string_view, 3> end_kind_names = {"exited", "signaled",
                                                                   "not_started"};

struct ProcessEnd {
    EndKind kind = EndKind::exited;
    std::optional<int> exit_code;  // kind == exited
    std::optional<int> signal;     // kind == signaled
    std::string signal_name;       // "SIGSEGV"; empty unless signaled
    bool core_dumped = false;
    std::string message;           // one line for people: "exited with status 3", "killed by SIGSEGV"

    // The status a shell would report: the exit code, 128 + signal, 127 when not started
    // because it was not found and 126 otherwise (sh(1) conventions).
    int shell_status() const;
    bool succeeded() const { return kind == EndKind::exited && exit_code == 0; }
};

// One named series sampled while a program ran (achieved rates over time). Times are seconds
// since the execution started; a value is the rate or level over the interval ending at t.
struct Series {
    std::string name;  // "cpu_cores", "rss_bytes", "read_bytes_per_s"
    std::string unit;  // "cores", "bytes", "bytes/s"
    Source source = Source::software;
    std::vector<double> t_s;
    std::vector<double> values;
};

// One process of a program's tree as the sampler saw it: its CPU time (all its threads, at
// the last look that found it) and how long it was seen, first look to last. Which process of
// a pipeline (`gen | gzip`) was the busy stage, while the others waited on it.
struct ProcessUse {
    int pid = 0;
    std::string name;  // its command name, as the last look saw it
    double cpu_s = 0;
    double seen_s = 0;
};

struct Execution {
    int index = 0;        // 0-based, warm-ups included, in launch order
    bool warmup = false;  // warm-ups are kept for the record but never in statistics
    // The GPU counting execution (`run --gpu-counters`): its kernels were replayed once per
    // counter pass, so its times are not real; it gives kernels their counted work only.
    bool counting = false;
    std::optional<int> pid;
    double wall_s = 0;    // launch to reaping, ceiling's monotonic clock
    ProcessEnd end;
    std::vector<CounterValue> counters;  // this execution's totals (rusage, collectors)
    std::vector<Series> time_series;     // empty when sampling was off
    // Its processes, most CPU time first, where it ran more than one (else empty, and in
    // older records); at most max_process_uses of them.
    std::vector<ProcessUse> processes;
};
inline constexpr std::size_t max_process_uses = 16;

// A region label saying why its work is unknown where something measured it in part (a torch
// model whose ops without a work formula took much of its time): its diagnosis says so
// instead of judging the known part.
inline constexpr const char* work_unknown_label = "work_unknown";
// Labels of a `run --torch` region (agent/run/torch_run.cpp sets them).
inline constexpr const char* torch_role_label = "torch";  // model, transform, module, op, call
inline constexpr const char* torch_op_label = "op";        // "aten.convolution"
inline constexpr const char* torch_op_class_label = "op_class";  // "conv depthwise"

// Where a recorded region came from: an NVTX range of a wrapped program, or a kernel the
// suite ran with analytically known work.
enum class RegionKind { range, kernel };
inline constexpr std::array<std::string_view, 2> region_kind_names = {"range", "kernel"};

// One region (all its instances) of the timed executions.
struct RecordedRegion {
    RegionKind kind = RegionKind::range;
    std::string path;    // unique key: enclosing names joined by '/', e.g. "step/forward"
    std::string name;    // the region's own name, declared-work suffix removed
    std::string parent;  // path of the enclosing region on the same thread; empty at top level
    std::string domain;  // NVTX domain; empty for the default domain
    bool model = false;  // matched --model-regions: part of "the model"
    std::size_t instances = 0;  // over all timed executions
    int threads = 0;            // distinct threads it ran on
    int processes = 0;          // distinct processes it ran in
    bool unclosed = false;      // some instance was still open when its process ended
    // Inclusive time summed over instances, one value per timed execution (a region that
    // never ran in one execution has 0 there).
    std::vector<double> total_s_per_execution;
    // Mean per timed execution of the time not inside an enclosed region (push/pop ranges
    // on one thread only); absent for kernels and start/end ranges.
    std::optional<double> self_s;
    // Cores the process kept busy while the region was open: its CPU time (all threads)
    // over wall time, summed over instances; error bounds the interpolation of CPU-time reads
    // (agent/run/region.cpp). Threads outside the region's work count too. Absent when
    // not measured (kernels, records of older versions).
    std::optional<double> busy_cores;
    std::optional<double> busy_cores_error;
    // Instances of one size are judged at their median duration; where some took over twice
    // the median (of four or more), busy_cores, its error, descendant_, other_ and
    // peak_busy_cores are those of the rest, and this counts the instances left out (a cold
    // start's wait would read as cores the typical instance left idle). Absent otherwise.
    std::optional<int> busy_cores_outliers;
    // Cores the processes below its process (those it started, and theirs) kept busy while
    // it was open: their CPU time over the same wall time, from the sampler's /proc readings.
    // Absent when they used none (or for older records).
    std::optional<double> descendant_busy_cores;
    // Its error: the sampler reads them every interval, and a range's ends fall between two
    // readings (workers reaped just before the range ends). Absent with it.
    std::optional<double> descendant_busy_cores_error;
    // Threads of its process runnable but queued for a CPU on average while it was open (the
    // scheduler's statistics, per thread): time it wanted a CPU and did not get one. Absent
    // where not read (or for older records).
    std::optional<double> queued_threads;
    // Cores the host's other processes (all but its own, those it started and ceiling: a
    // local server, a sibling worker, other programs) kept busy while it was open, from
    // /proc/stat's per-tick CPU time less those: where a range that waited for another
    // process had its work done, and whether the cores it left were idle. Absent where the
    // sampler's readings did not cover its instances (or for older records).
    std::optional<double> other_busy_cores;
    // The cores its process held at once while it was open: of the sampler's looks (one
    // interval each) inside its instances, the busy cores its busiest 10 % of time reached,
    // averaged over instances by time. Only for a program that is one process, with exact
    // CPU time, over instances of three looks or more covering half its time; else absent.
    // Well above busy_cores: cores the region held part of the time and left idle the rest
    // (a team waiting for its slowest thread, serial sections).
    std::optional<double> peak_busy_cores;
    // How many threads of the program shared its work while it was open (the sampler's
    // working-threads windows over its instances, weighted by time; for instances shorter
    // than a window, the threads around them). Well above busy_cores, with CPUs left idle,
    // its threads took turns. Absent where not sampled, and in older records.
    std::optional<double> working_threads;
    // Of busy_cores, the cores other recording threads of its process spent in their own
    // ranges open beside it (a pipeline's other stages; not ranges wholly inside its
    // instances, which may be its work handed on), from each thread's own CPU-time reads.
    // Its roof is that of busy_cores less these. Absent where threads did not read theirs.
    std::optional<double> beside_busy_cores;
    // Of busy_cores, the cores its process's threads that record no ranges kept busy (busy
    // cores less every recording thread's own CPU time): its helpers (an OpenMP team, a BLAS
    // pool) or work beside it (a loader, a logging thread), which CPU time cannot tell apart.
    // Judged as its helpers; the diagnosis says what it would read were they not. Absent
    // where threads did not read their CPU time, and in older records.
    std::optional<double> unranged_busy_cores;
    // What storage served the program (its process tree) per second while it was open, each
    // way: the bytes over the time of the instances the sampler's readings covered. Absent
    // where none was covered, and in older records.
    std::optional<double> storage_read_bytes_per_s;
    std::optional<double> storage_write_bytes_per_s;
    // Of busy cores, those its process tree kept busy in the kernel (stime: system calls,
    // copies, page faults) while it was open, from the sampler's readings (per clock tick:
    // rough for instances of a few ms, summed over many). Absent where not covered.
    std::optional<double> system_busy_cores;
    // Its program's threads blocked on storage (flushes, file I/O, faults on mapped files) on
    // average while it was open, from the sampler's looks at their system calls. Absent where
    // not covered, and in older records.
    std::optional<double> storage_wait_threads;
    // Mean number of its instances open at once in one process while any was open: their
    // summed time over the union of their intervals, per process and execution. Above 1
    // when threads ran it side by side (a range each thread of a parallel loop pushes
    // around its own share): the region then did that many instances' work in one
    // instance's time, on the cores busy_cores counts. Absent for kernels and older records.
    std::optional<double> concurrency;
    // With --model-regions: mean per timed execution of the wall time in no model region
    // that this region holds (innermost open region; shared equally with regions open at the
    // same instant elsewhere), so that these and the model's time add up to the wall time.
    std::optional<double> non_model_s;
    // name = path; durations_s = durations of instances (uniformly subsampled when there are
    // more than the record keeps: durations_subsampled), duration_s summarises all of them;
    // work = declared work per instance (mean when instances declared different amounts).
    Measurement measurement;
    bool durations_subsampled = false;
    // Facts about the region that are not measurements, e.g. for a suite kernel "kernel",
    // "problem", "variant", "shape", "series", "implementation", "advice" (a known handicap
    // of the implementation here, with its fix) and "detail". Empty for NVTX ranges.
    std::map<std::string, std::string> labels;
    // A label's value; empty where the region has none.
    std::string label(const std::string& key) const {
        const auto it = labels.find(key);
        return it == labels.end() ? std::string() : it->second;
    }
    // Mean per timed execution of the time it was open: its instances' time, those side by
    // side in one process counted once (concurrency). Instances in several processes still
    // add up.
    double open_s_per_execution() const;
    // The cores it held at once, at most `usable` (the CPUs it could use: a container's quota
    // lets threads run on more CPUs at once than its share over a period), where that is
    // `held_cores_ratio` x its busy cores (at least one) or more: the cores it is judged at,
    // the rest of their time idle in it. Else none.
    std::optional<double> held_cores(const Thresholds& t,
                                     std::optional<double> usable = std::nullopt) const;
    // The cores it is judged at when its work ran below its process: where its own process
    // mostly waited (under half a core busy or queued for one) and the processes it started kept
    // more cores busy (a region around a subprocess, a multiprocessing pool's map), its process's
    // and theirs together; else absent (its own process's busy_cores: workers busy beside a region
    // that computes itself, a data loader's beside a forward pass, are not its work).
    std::optional<double> with_descendants_cores() const;
};

// Busy cores below which a region's process mostly waited while it was open (a process that
// computes keeps a core or more busy).
inline constexpr double waited_below_cores = 0.5;

// The diagnosis of one region or kernel whose work is known (declared or analytic).
struct RegionVerdict {
    std::string path;
    Diagnosis diagnosis;
};

struct RunOptions {
    int repeat = 1;
    int warmup = 0;
    std::optional<double> interval_s;  // sampling interval; absent when sampling was off
    std::optional<std::string> model_regions;  // --model-regions REGEX
};

// A roof measured again right after a run (agent/machine/roof_check.hpp): how far the
// machine was, then, from the profile the run is judged against. Evidence, not a roof.
struct RoofCheck {
    std::string level;   // "DRAM"; empty for a compute roof
    std::string kernel;  // the sweep kernel of the profile's DRAM roof, or the compute roof
    int threads = 1;
    // In the roof's unit: bytes/s (bandwidth) or ops/s (compute).
    double profile_per_s = 0;
    double now_per_s = 0;  // best of a few timed runs
    RoofKind kind = RoofKind::bandwidth;
    // The slowest of those runs: a host whose bandwidth toggles within tenths of a second
    // (seen on a Zen 5 VM: 33 and 54 GB/s in alternate 20 ms passes of one triad) can give
    // a best run at the profile while the program beside it streamed at half. Absent in
    // records written before it was kept.
    std::optional<double> slowest_per_s;
    // Threads the profile's figure was measured at: `threads` where the profile has that
    // roof; another thread count where the verdicts' roof was derived from it (roofline.hpp),
    // so the check also says how far the derivation was off. Records before it: `threads`.
    std::optional<int> profile_threads;
    // The suite's cases this roof was measured in turns with (their region names): the
    // check is theirs alone. Empty for a check after a `run`, which holds for the whole run.
    std::vector<std::string> beside;
    bool derived() const { return profile_threads && *profile_threads != threads; }
    double ratio() const { return now_per_s / profile_per_s; }
    std::optional<double> slowest_ratio() const {
        if (!slowest_per_s) return std::nullopt;
        return *slowest_per_s / profile_per_s;
    }
};

// Relative difference between a roof measured now and the profile's beyond which the note
// says the run may be off: the roofs' own run-to-run spread on a quiet machine stays below it.
inline constexpr double roof_check_tolerance = 0.10;

// Whether the check's own looks disagreed beyond the tolerance: its slowest run more than
// roof_check_tolerance below its best.
inline bool moved_within(const RoofCheck& c) {
    return c.slowest_per_s && *c.slowest_per_s < (1 - roof_check_tolerance) * c.now_per_s;
}

// Whether a check moved beyond roof_check_tolerance, either way, or its slowest look fell
// below it (the host's rate moved during the check: a program beside it may have run at
// either).
inline bool outside_tolerance(const RoofCheck& c) {
    const auto slowest = c.slowest_ratio();
    return c.ratio() < 1 - roof_check_tolerance || c.ratio() > 1 + roof_check_tolerance ||
           (slowest && *slowest < 1 - roof_check_tolerance);
}

struct RunRecord {
    int schema_version = run_record_schema_version;
    RecordKind kind = RecordKind::run;
    std::string created_at;  // ISO 8601 UTC
    std::vector<std::string> command;  // argv as given (run) or ceiling's own (suite)
    std::string executable;            // resolved path; empty for suite
    std::string working_directory;
    std::string hostname;
    // Rank in a multi-process job, from the launcher's environment (rank_source names the
    // variable, e.g. "OMPI_COMM_WORLD_RANK").
    std::optional<int> rank;
    std::optional<int> world_size;
    std::string rank_source;
    std::map<std::string, std::string> versions;     // ceiling, git_commit, compiler, kernel...
    std::map<std::string, std::string> environment;  // allowlisted variables only
    RunOptions options;
    // Interrupted (Ctrl-C, SIGTERM) or cut short: fewer executions than asked, or the last
    // one ended early. The rest of the record is valid for what did run.
    bool partial = false;
    std::string partial_reason;
    ProcessEnd end;  // how the run ended: the last execution's end
    std::vector<Execution> executions;
    // The whole program: durations_s = wall time of each timed execution, counters summed
    // over them. For suite records, the suite as a whole.
    Measurement whole;
    std::vector<RecordedRegion> regions;
    // Per timed execution: wall time covered by at least one model region (the union over
    // threads and nesting), and by at least one region of any kind. Empty without regions.
    std::vector<double> model_time_s_per_execution;
    std::vector<double> region_time_s_per_execution;
    // Per timed execution: wall time from its launch to the first region's start, and from
    // the last region's end to its end (start-up, and what follows). Empty without regions,
    // and in records written before they were kept.
    std::vector<double> before_regions_s_per_execution;
    std::vector<double> after_regions_s_per_execution;
    std::optional<MachineProfile> machine_profile;  // the profile it was judged against
    std::string machine_profile_path;
    Thresholds thresholds;                   // the ones it was judged with
    std::optional<Budgets> budgets;          // as stated (flags over --budget FILE)
    std::vector<BudgetCheck> budget_checks;  // judged; empty without budgets
    std::optional<Diagnosis> diagnosis;      // the run as a whole (absent: not judged)
    std::vector<RegionVerdict> region_diagnoses;
    std::vector<std::string> notes;  // what could not be measured, and why
    std::vector<RoofCheck> roof_checks;  // empty: none was needed (or --no-roof-check)
    OpSummary op_summary;  // a torch run's ops by type, judged with the rest (empty otherwise)
    // The region whose diagnosis stood for the model's work in the run's (its heaviest model
    // region placed on the roofline); empty when none was.
    std::string model_region;
    RunAnswer answer;  // what the answer stands on (answer.hpp), decided with the verdicts

    // Timed (non-warm-up) executions, in order.
    std::vector<const Execution*> timed_executions() const;
    // The region at `path`; nullptr where there is none. Looked up in an index of the paths
    // (renderers and the judge ask once per region: a scan each time made a record of 8000
    // regions take seconds), built again whenever `regions` was replaced, grew or shrank.
    // Not for concurrent use.
    const RecordedRegion* region(const std::string& path) const;
    // The judged diagnosis of the region at `path`; nullptr where it was not judged.
    const Diagnosis* diagnosis_of(const std::string& path) const;

  private:
    // Positions by path in one vector, valid while its storage and size are unchanged.
    struct PathIndex {
        const void* data = nullptr;
        std::size_t size = 0;
        std::unordered_map<std::string, std::size_t> at;
    };
    mutable PathIndex region_index_, diagnosis_index_;
};

void to_json(nlohmann::json& j, const RoofCheck& c);
void from_json(const nlohmann::json& j, RoofCheck& c);

std::string_view to_string(RecordKind k);
std::string_view to_string(EndKind k);
std::string_view to_string(RegionKind k);

void to_json(nlohmann::json& j, RecordKind k);
void from_json(const nlohmann::json& j, RecordKind& k);
void to_json(nlohmann::json& j, EndKind k);
void from_json(const nlohmann::json& j, EndKind& k);
void to_json(nlohmann::json& j, RegionKind k);
void from_json(const nlohmann::json& j, RegionKind& k);
void to_json(nlohmann::json& j, const ProcessEnd& e);
void from_json(const nlohmann::json& j, ProcessEnd& e);
void to_json(nlohmann::json& j, const Series& s);
void from_json(const nlohmann::json& j, Series& s);
void to_json(nlohmann::json& j, const Execution& e);
void from_json(const nlohmann::json& j, Execution& e);
void to_json(nlohmann::json& j, const RecordedRegion& r);
void from_json(const nlohmann::json& j, RecordedRegion& r);
void to_json(nlohmann::json& j, const RegionVerdict& v);
void from_json(const nlohmann::json& j, RegionVerdict& v);
void to_json(nlohmann::json& j, const RunOptions& o);
void from_json(const nlohmann::json& j, RunOptions& o);
// from_json throws std::invalid_argument with one line: not an object, no or another
// schema_version, or a missing / mistyped field (nlohmann's message names the key).
void to_json(nlohmann::json& j, const RunRecord& r);
void from_json(const nlohmann::json& j, RunRecord& r);
RunRecord parse_run_record(const std::string& text);

// Reading a record's counters (the execution totals each timed execution holds).
// A counter's total over the timed executions divided by their count; absent where none has it.
std::optional<double> per_run(const RunRecord& r, const std::string& name);
// A counter's largest value over the record's timed executions; absent where none has it.
std::optional<double> counter_peak(const RunRecord& r, const std::string& name);

// What the program was allowed of the host's CPUs, each absent where not recorded: its
// affinity mask's CPUs at start (taskset, numactl, a container's cpuset) and its control
// group's CPU quota.
struct CpuLimits {
    std::optional<double> affinity;
    std::optional<double> quota;
};
CpuLimits cpu_limits(const RunRecord& r);
// The CPUs it could use at once: `cpus` (where known), at most its limits'.
std::optional<double> within(const CpuLimits& l, std::optional<double> cpus);
// Peak resident memory of a record (the process tree when sampled, else the largest
// process), per timed execution; nullopt when not measured.
std::optional<double> peak_memory_bytes(const RunRecord& record);
// The CPUs a recorded program could use at once: the machine's (its profile's), at most its
// control group's CPU quota (a container's limit; fractional). nullopt when neither is known.
std::optional<double> usable_cpus(const RunRecord& record);

// Keeps at most `limit` values, chosen at evenly spaced ranks of the original order, so a
// record stays small for programs with millions of region instances.
std::vector<double> subsample(const std::vector<double>& values, std::size_t limit);

}  // namespace ceiling
