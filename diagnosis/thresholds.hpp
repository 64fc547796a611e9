#pragma once
// The numbers the diagnosis compares against, as configuration with DESIGN.md's defaults.
// Every field is listed in one table (name, member, meaning) so a config file, a
// `--threshold NAME=VALUE` flag and the documentation all use the same names.

#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace ceiling {

struct Thresholds {
    // Fractions of a roof (achieved / roof).
    double far = 0.10;        // below: far from its roof
    double near_roof = 0.60;  // at or above: near that roof, i.e. bound by it
    double done = 0.70;       // at or above: done, little left to gain on this roof
    // Roofs are medians of noisy measurements, so a point may land slightly above one. Within
    // this margin it is "at the roof"; beyond it the point is a measurement error or the roof
    // is underestimated, never "110%".
    double above_roof_tolerance = 0.05;
    // Relative spread ((p90 - p10) / median) above which a distribution is unstable. Same
    // value `ceiling machine` uses to flag a roof noisy.
    double unstable_spread = 0.10;
    // Share of wall time in model regions below which the run is "not the model".
    double model_share = 0.50;
    // Footprint / capacity (memory or memory budget) at or above which it is capacity bound.
    double capacity = 0.90;

    // System-bound evidence (process accounting over the run's wall time).
    double cpu_utilisation = 0.50;  // busy CPU time / (wall x cores used) below this: idle
    // voluntary / all context switches at or above which idle cores mean waiting (blocked),
    // below which queueing for a CPU (preempted).
    double voluntary_switch_share = 0.50;
    // Busy cores over the threads that shared its CPU time (at most the CPUs it could use)
    // below which, its work spread over threads, they took turns rather than ran at once.
    double thread_concurrency = 0.60;
    // Threads of a region's process queued for a CPU on average while it was open (and at
    // least as many as the cores it kept busy), at or above which it waited for a CPU: said
    // first among its moves.
    double queued_threads = 0.5;
    // Time per op of a call made of ops (a PyTorch model's), less ceiling's recording, below
    // which its ops are tiny: a framework spends a few microseconds per op on a CPU on
    // dispatch, checks and allocation, so that is most of their time.
    double tiny_op_s = 10e-6;
    // Contention: involuntary switches per second of its CPU time (while most switches are
    // involuntary), and the host's CPU time stolen by the hypervisor, at or above which
    // other work competed for the CPUs.
    double involuntary_switches_per_cpu_s = 20;
    double steal_share = 0.05;
    double run_queue_per_cpu = 1.25;  // runnable threads per CPU on the host: oversubscribed
    // A region's peak busy cores (what it held at once) over its mean busy cores (at least
    // one) at or above which it is judged against the cores it held: the rest idled in it.
    double held_cores_ratio = 1.15;
    // Other work's runnable threads per CPU (the host's less the program's own) below which
    // a run queue past the CPUs, and the preemptions with it, are the program's own doing.
    double others_run_queue_per_cpu = 0.25;
    // Page faults per resident page at the peak footprint at or above which memory was
    // touched afresh over and over (first touch faults at most once per page).
    double fault_churn_ratio = 2.0;
    double system_time_share = 0.20;       // system / (user + system) at or above: syscalls, faults
    // The same share at or above which, its cores busy (cpu_utilisation not fired), the
    // kernel is what bounds it: not the model (kernel bound). Half: the kernel does more of
    // its work than its own code.
    double kernel_time_share = 0.50;
    // Read and write calls per second of wall time at or above which, at fewer bytes each
    // than small_io_call_bytes, their number is said (each costs 0.3-1 us in the kernel, so
    // 50 K/s is 2-5 % of a core at least).
    double io_calls_per_s = 50000;
    // Below a KiB a call: a 4 KiB stdio buffer is buffered, a line or a record per call is not.
    double small_io_call_bytes = 1024;
    // Counts per run below which the rates above are not judged: 10 K calls or faults are a
    // few milliseconds in the kernel (a buffered program's 734 writes in 8 ms, a short
    // program's start-up faults, are 88 K/s and 12 K/s of nothing).
    double io_calls_min = 10000;
    double page_faults_min = 10000;
    // Seconds in the kernel per run below which its share is a process's start-up (exec,
    // loading its libraries, ceiling's own setup: 3-5 ms on the VMs here), not its work: a
    // 6 ms program with a 4.5 ms loop read "kernel bound" at 50 %.
    double system_time_min_s = 0.05;
    double context_switches_per_s = 2000;  // voluntary + involuntary, per second of wall time
    double page_faults_per_s = 10000;      // minor + major, per second of wall time
    double major_page_faults_per_s = 1;    // faults that read from disk
    // Threads and processes started per second of wall time (forks and clones on the host),
    // and per run below which their rate is not judged (a program's pool, a shell's few
    // commands).
    double tasks_started_per_s = 1000;
    double tasks_started_min = 1000;
    // Major faults per run below which their rate is not judged: a library paged in at the
    // start of a 0.4 s program is 2.5/s, not memory pressure.
    double major_page_faults_min = 10;
    // Threads blocked on storage (flushes, file I/O, faults on mapped files) on average over
    // the wall time, of a program whose own code left its cores idle (user time under
    // cpu_utilisation of them), at or above which it
    // waits on storage: not the model (I/O bound). A lower bound of the time in its I/O calls
    // (their CPU time in the kernel is not in it: a log flushed after every 4 KiB record was
    // blocked 0.60 of its time and 0.37 in the kernel), so a quarter is already the largest
    // part of a program's time that computes less than half of it.
    double storage_wait_threads = 0.25;
    // Threads blocked in sleeps, on sockets or in event loops on average over the wall time,
    // of a program whose own code left its cores idle, at or above which it waits on
    // something outside its work: not the model (waiting). Half a thread: most of a
    // one-threaded program's time, where its own code is under half of its cores.
    double outside_wait_threads = 0.5;
    double device_wait_share = 0.20;       // wall time blocked on an accelerator
    double device_copy_share = 0.10;       // wall time copying between host and device
    // Share of its control group's CPU-quota periods in which the group ran out of quota, at
    // or above which the quota (a container's CPU limit) is what held the process back.
    double cpu_quota_throttled_share = 0.25;
    // Budgets: inside every one with at least this margin ((budget - actual) / budget), stop
    // optimising; less leaves no room for thermal throttling or a year of features.
    double stop_margin = 0.20;
};

// One named field of Thresholds.
struct ThresholdField {
    std::string_view name;
    double Thresholds::*member;
    std::string_view meaning;
};
std::span<const ThresholdField> threshold_fields();

// Throws std::invalid_argument with one line naming the field(s) at fault: roof fractions
// must satisfy 0 < far < near_roof <= done <= 1 ("out of order" otherwise), shares lie in
// (0, 1], rates are positive.
void validate(const Thresholds& t);

// Sets one field by name (as in the table); throws std::invalid_argument for an unknown
// name. Does not validate (several fields may change together).
void set_threshold(Thresholds& t, std::string_view name, double value);

// "near_roof=0.5" -> set_threshold(t, "near_roof", 0.5); throws std::invalid_argument when
// malformed.
void apply_threshold_assignment(Thresholds& t, std::string_view assignment);

// JSON object of some fields over `base` (absent fields keep base's value; an unknown key is
// an error, so a typo is not silently ignored). Validates the result.
Thresholds parse_thresholds(const std::string& json_text, const Thresholds& base = {});

void to_json(nlohmann::json& j, const Thresholds& t);
void from_json(const nlohmann::json& j, Thresholds& t);  // over defaults, validated

}  // namespace ceiling
