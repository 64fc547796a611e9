#pragma once
// What the OS says about a whole run (rusage, procfs, perf software events, the host's
// /proc/stat and run queue) and what it means: system-bound evidence, each rule a metric
// against a threshold, some read together with a second metric that decides the meaning
// (idle cores: waiting or queueing; page faults: first touch or churn), and whether other
// work competed for the CPUs, in which case the run's verdicts were taken under contention.
// `ceiling run` fills ProcessAccounting; nothing here measures anything.

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "diagnosis/diagnosis.hpp"
#include "diagnosis/thresholds.hpp"

namespace ceiling {

// Every field is absent when not measured; counts and times are per execution.
struct ProcessAccounting {
    double wall_s = 0;
    std::optional<double> cores_used;  // threads/cores the process was given or used at most
    std::optional<double> user_s;
    std::optional<double> system_s;
    std::optional<double> voluntary_context_switches;    // blocked: I/O, locks, sleep
    std::optional<double> involuntary_context_switches;  // preempted
    // ceiling's own wakeups while the program ran (its sampler's ticks): each can have
    // preempted one of the program's threads, so as many involuntary switches are not
    // counted as other work's.
    std::optional<double> observer_wakeups;
    // How many threads shared its CPU time: the participation ratio of the sampled threads'
    // CPU times (n for n equal shares, 1 when one thread did it all).
    std::optional<double> working_threads;
    std::optional<double> minor_page_faults;
    std::optional<double> major_page_faults;
    std::optional<double> device_wait_s;  // blocked on an accelerator (synchronise, event wait)
    std::optional<double> device_copy_s;  // host<->device copies
    std::optional<double> peak_rss_bytes;
    // Each process's peak resident set, summed over the processes, in pages: the most page
    // faults first touch can explain (a huge page is one fault for many pages).
    std::optional<double> peak_rss_pages;
    // The host over the run: CPU time of all its CPUs that elapsed (wall x CPUs), the part
    // the hypervisor stole, and runnable threads (ceiling's sampler excepted) integrated
    // over time.
    std::optional<double> host_cpu_s;
    std::optional<double> host_steal_s;
    std::optional<double> host_runnable_thread_s;
    // Threads and processes the host started while it ran (forks and clones): its own where
    // little else ran.
    std::optional<double> host_tasks_started;
    // Of those runnable threads, the program's own (every thread of its process tree in
    // state R at each sample): a run queue past the CPUs that is its own is oversubscription
    // by the program itself, not contention.
    std::optional<double> own_runnable_thread_s;
    // What storage saw of the program (/proc's read_bytes and write_bytes: not what the page
    // cache served), and the storage roofs `ceiling machine` measured (StorageRoof).
    std::optional<double> storage_read_bytes;
    std::optional<double> storage_write_bytes;
    std::optional<double> storage_read_roof_bytes_per_s;
    std::optional<double> storage_write_roof_bytes_per_s;
    // Its threads blocked on storage (flushes, file I/O, faults on mapped files), integrated
    // over the run from the sampler's looks at each thread's system call: thread-seconds.
    std::optional<double> storage_wait_thread_s;
    // Its threads blocked in sleeps, on sockets or in event loops (collectors::
    // outside_wait_kinds), the same way: thread-seconds.
    std::optional<double> outside_wait_thread_s;
    // Its read-like and write-like system calls (files, pipes, sockets, terminals alike) and
    // the bytes they passed (/proc's syscr + syscw and rchar + wchar).
    std::optional<double> io_calls;
    std::optional<double> io_call_bytes;
    // The CPU quota of the control group it ran in (a container's limit), in CPUs, and over
    // the run the quota's periods, those in which the group ran out of quota, and the time
    // its threads were held off the CPUs for it (summed over CPUs). Absent without a quota.
    std::optional<double> cpu_quota_cpus;
    std::optional<double> cpu_quota_periods;
    std::optional<double> cpu_quota_throttled_periods;
    std::optional<double> cpu_quota_throttled_s;
};

// A second metric read with a rule's own, choosing the rule's meaning.
struct Qualifier {
    std::string_view name;
    std::optional<double> (*metric)(const ProcessAccounting&);
    Comparison comparison;
    double Thresholds::*threshold;
};

// One rule of system-bound evidence: a metric of the accounting against a threshold. With
// a qualifier the rule says `meaning` when the qualifier holds, `meaning_otherwise` when it
// does not and `meaning_unknown` when it was not measured; an empty meaning means the rule
// does not fire in that case.
struct SystemRule {
    std::string_view name;  // the metric, with its unit
    std::optional<double> (*metric)(const ProcessAccounting&);
    Comparison comparison;
    double Thresholds::*threshold;
    std::string_view meaning;
    const Qualifier* qualifier = nullptr;
    std::string_view meaning_otherwise = {};
    std::string_view meaning_unknown = {};
    bool contention = false;  // firing means other work competed for the CPUs
    // When this qualifier holds the program's own threads explain the rule: it says
    // `meaning_own` instead, and is not contention.
    const Qualifier* own_doing = nullptr;
    std::string_view meaning_own = {};
    // A count the rule's rate needs before it means anything (a short program's start-up
    // faults, a buffered program's few hundred writes in 8 ms): below it, or unknown, the rule
    // does not fire.
    const Qualifier* enough = nullptr;
};
std::span<const SystemRule> system_rules();

// Fewer threads than this sharing its CPU time is one thread doing the work (with helpers):
// whether threads took turns is not asked. 1.5 is two threads at a 3:1 split or closer.
inline constexpr double working_threads_min = 1.5;
// Of the threads that shared the work and the CPUs they could use (the fewer), the share
// that ran at once on average: busy cores over that number. nullopt below
// working_threads_min working threads (one thread with idle cores is not taking turns).
// The run's thread_concurrency rule and a region's turn-taking both read it.
std::optional<double> thread_concurrency(double busy_cores, std::optional<double> working_threads,
                                         double cpus);

// The storage traffic's share of its roofs (reads against the read roof, writes against the
// write roof, the larger; writes past storage_above_roof left out, the page cache's): the
// run's storage_roof_share rule, also asked of a region over the time it was open.
std::optional<double> storage_roof_share(const ProcessAccounting& p);

// Past this share of its roof a storage write rate is the page cache's, not storage's
// (storage_roof_share; the run summary's I/O line says so).
inline constexpr double storage_above_roof = 1.05;

// Every rule evaluated (value absent when its inputs were not measured; absent never fires).
std::vector<SystemSignal> system_evidence(const ProcessAccounting& p, const Thresholds& t);

// When a contention rule fired, and not of the program's own doing: a finding with the evidence
// (involuntary and voluntary switches, steal, run queue) saying the verdicts were taken under
// contention.
std::optional<Finding> contention_finding(const ProcessAccounting& p,
                                          std::span<const SystemSignal> evidence,
                                          const Thresholds& t);
// Where the CPU quota's periods were read: the quota, how often it ran out and for how long
// the threads were held off the CPUs (the numbers the quota row stands on).
std::optional<Finding> cpu_quota_finding(const ProcessAccounting& p);

// The contention finding of a diagnosis, if it has one.
const Finding* contention_of(const Diagnosis& d);
// What a region judged during such a run carries.
Finding taken_under_contention();

void to_json(nlohmann::json& j, const ProcessAccounting& p);
void from_json(const nlohmann::json& j, ProcessAccounting& p);

}  // namespace ceiling
