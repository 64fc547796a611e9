#include "diagnosis/process_evidence.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>

#include "diagnosis/json_support.hpp"
#include "diagnosis/format.hpp"

namespace ceiling {
namespace {

using P = ProcessAccounting;
using Opt = std::optional<double>;

// Two parts of one count (voluntary + involuntary, minor + major). With one part unknown the
// sum of the known one is a lower bound: enough to fire a rule, never a zero for the other.
Opt per_wall_s(const P& p, Opt a, Opt b) {
    if (!(p.wall_s > 0) || (!a && !b)) return std::nullopt;
    return (a.value_or(0.0) + b.value_or(0.0)) / p.wall_s;
}
Opt ratio(Opt a, Opt b) {
    if (!a || !b || !(*b > 0)) return std::nullopt;
    return *a / *b;
}

// Its own code's share of the cores: user time only (a program that waits on storage spends
// its system time in its I/O calls: random 4 KiB O_DIRECT reads kept half a core busy in the
// kernel and were blocked the other half).
Opt user_utilisation(const P& p) {
    if (!p.user_s || !p.cores_used || !(*p.cores_used > 0) || !(p.wall_s > 0)) return std::nullopt;
    return *p.user_s / (p.wall_s * *p.cores_used);
}
Opt cpu_utilisation(const P& p) {
    if (!p.user_s || !p.system_s || !p.cores_used || !(*p.cores_used > 0) || !(p.wall_s > 0))
        return std::nullopt;
    return (*p.user_s + *p.system_s) / (p.wall_s * *p.cores_used);
}
// ceiling's own wakeups that preempted the program. A wakeup preempts at most one thread,
// and one of the program's only when one of them runs on that CPU: about as often as its
// threads are among those runnable on the host (sampled). So the wakeups times that share;
// all of them where it is unknown. Where a CPU sat idle the wakeup went there, so the
// discount is at most too large and what remains a lower bound. Without a discount a 10 ms
// sampler beside a program on every CPU of a 2-CPU VM tripled its preemptions (18 -> 58
// per second of CPU time, 249 at 2 ms) and made every such run "contention"; discounting
// every wakeup hid real contention where the program shared one CPU with two spinners
// (165 preemptions less 156 wakeups, on a CI machine).
Opt own_wakeup_preemptions(const P& p) {
    if (!p.observer_wakeups) return std::nullopt;
    const Opt share = ratio(p.own_runnable_thread_s, p.host_runnable_thread_s);
    return *p.observer_wakeups * std::clamp(share.value_or(1.0), 0.0, 1.0);
}
// Preemptions by anything but ceiling: the involuntary switches less ceiling's own.
Opt preempted_by_others(const P& p) {
    if (!p.involuntary_context_switches) return std::nullopt;
    return std::max(0.0, *p.involuntary_context_switches - own_wakeup_preemptions(p).value_or(0.0));
}
// Blocking (voluntary) against preemption (involuntary): which of the two kept threads off
// their cores. Needs both counts.
Opt voluntary_switch_share(const P& p) {
    const Opt preempted = preempted_by_others(p);
    if (!p.voluntary_context_switches || !preempted) return std::nullopt;
    return ratio(p.voluntary_context_switches, *p.voluntary_context_switches + *preempted);
}
Opt system_time_share(const P& p) {
    if (!p.user_s || !p.system_s) return std::nullopt;
    return ratio(p.system_s, *p.user_s + *p.system_s);
}
Opt context_switches_per_s(const P& p) {
    return per_wall_s(p, p.voluntary_context_switches, preempted_by_others(p));
}
// Per second of its CPU time: how often a running thread was preempted, whatever the share
// of the CPU it got (per wall second that depends on the scheduler's tick and slice). A
// program that mostly sleeps has few preemptions over very little CPU time, so the rule
// also needs most switches to be involuntary.
Opt involuntary_switches_per_cpu_s(const P& p) {
    if (!p.user_s || !p.system_s) return std::nullopt;
    return ratio(preempted_by_others(p), *p.user_s + *p.system_s);
}
// The run's: over the cores it used, which are at most its working threads (cores_used), so
// this is cpu_utilisation where the work was spread over threads. Four Python threads under
// the GIL on 2 CPUs: 4 working threads, 0.99 cores busy, 0.5.
Opt run_thread_concurrency(const P& p) {
    if (!p.cores_used || !(*p.cores_used > 0) || !p.user_s || !p.system_s || !(p.wall_s > 0))
        return std::nullopt;
    return thread_concurrency((*p.user_s + *p.system_s) / p.wall_s, p.working_threads,
                              *p.cores_used);
}
Opt steal_share(const P& p) { return ratio(p.host_steal_s, p.host_cpu_s); }
// Mean runnable threads per CPU: runnable thread-seconds over CPU-seconds of the same window.
Opt run_queue_per_cpu(const P& p) { return ratio(p.host_runnable_thread_s, p.host_cpu_s); }
Opt own_run_queue_per_cpu(const P& p) { return ratio(p.own_runnable_thread_s, p.host_cpu_s); }
// Everyone else's: the host's less the program's own (read at the same samples; a reading a
// moment apart can put the difference below zero).
Opt others_run_queue_per_cpu(const P& p) {
    if (!p.host_runnable_thread_s || !p.own_runnable_thread_s) return std::nullopt;
    return ratio(std::max(0.0, *p.host_runnable_thread_s - *p.own_runnable_thread_s), p.host_cpu_s);
}
// Threads and processes started per second of wall time, on the host while it ran.
Opt tasks_started_per_s(const P& p) { return per_wall_s(p, p.host_tasks_started, std::nullopt); }
Opt page_faults_per_s(const P& p) {
    return per_wall_s(p, p.minor_page_faults, p.major_page_faults);
}
// First touch faults at most once per page it leaves resident (a huge page once for all
// its pages, so huge pages only lower this); more means pages freed and touched afresh.
Opt faults_per_peak_page(const P& p) {
    if (!p.minor_page_faults && !p.major_page_faults) return std::nullopt;
    return ratio(p.minor_page_faults.value_or(0.0) + p.major_page_faults.value_or(0.0),
                 p.peak_rss_pages);
}
Opt major_page_faults_per_s(const P& p) {
    if (!p.major_page_faults || !(p.wall_s > 0)) return std::nullopt;
    return *p.major_page_faults / p.wall_s;
}
// Periods in which the group's threads used up the quota and waited for the next one.
Opt cpu_quota_throttled_share(const P& p) {
    return ratio(p.cpu_quota_throttled_periods, p.cpu_quota_periods);
}
Opt device_wait_share(const P& p) {
    if (!p.device_wait_s || !(p.wall_s > 0)) return std::nullopt;
    return *p.device_wait_s / p.wall_s;
}
Opt device_copy_share(const P& p) {
    if (!p.device_copy_s || !(p.wall_s > 0)) return std::nullopt;
    return *p.device_copy_s / p.wall_s;
}

// The storage traffic's share of its roof: reads against the read roof, writes against the
// write roof, the larger of the two (a program that streams one way is bound by that one).
// Writes beyond their roof are left out: /proc counts writes when pages are dirtied, so a
// program that writes into the page cache faster than storage takes it shows a rate the
// page cache absorbed (flushed later), not one storage held it to. Reads are what storage
// served: beyond the roof they are storage-bound still (deeper queues than the roof's).
Opt storage_share(const P& p) {
    if (!(p.wall_s > 0)) return std::nullopt;
    Opt share;
    const auto take = [&](Opt amount, Opt roof, bool write) {
        if (!amount || !roof || !(*roof > 0)) return;
        const double s = *amount / p.wall_s / *roof;
        share = std::max(share.value_or(0.0), write && s > storage_above_roof ? 0.0 : s);
    };
    take(p.storage_read_bytes, p.storage_read_roof_bytes_per_s, false);
    take(p.storage_write_bytes, p.storage_write_roof_bytes_per_s, true);
    return share;
}

// Threads blocked on storage per second of wall time.
Opt storage_wait_threads(const P& p) {
    if (!p.storage_wait_thread_s || !(p.wall_s > 0)) return std::nullopt;
    return *p.storage_wait_thread_s / p.wall_s;
}

// Threads blocked in sleeps, on sockets or in event loops per second of wall time, less the
// time the host waited on an accelerator: a CUDA runtime waiting for the device may block in
// poll on its descriptor, and that wait is the device's work.
Opt outside_wait_threads(const P& p) {
    if (!p.outside_wait_thread_s || !(p.wall_s > 0)) return std::nullopt;
    return std::max(0.0, *p.outside_wait_thread_s - p.device_wait_s.value_or(0.0)) / p.wall_s;
}

// Read and write calls per second of wall time, and the bytes each passed on average.
Opt io_calls_per_s(const P& p) {
    if (!p.io_calls || !(p.wall_s > 0)) return std::nullopt;
    return *p.io_calls / p.wall_s;
}
Opt bytes_per_io_call(const P& p) { return ratio(p.io_call_bytes, p.io_calls); }

using T = Thresholds;
constexpr Qualifier small_calls = {"bytes_per_io_call", bytes_per_io_call, Comparison::below,
                                   &T::small_io_call_bytes};
// Its own code left its cores idle: waiting on storage held it only then (a loader thread
// blocked on reads beside a busy compute thread is I/O overlapped, not I/O bound).
constexpr Qualifier idled = {"user_utilisation", user_utilisation, Comparison::below,
                             &T::cpu_utilisation};
constexpr Qualifier blocked = {"voluntary_switch_share", voluntary_switch_share,
                               Comparison::at_least, &T::voluntary_switch_share};
constexpr Qualifier preempted = {"voluntary_switch_share", voluntary_switch_share,
                                 Comparison::below, &T::voluntary_switch_share};
constexpr Qualifier churn = {"faults_per_peak_page", faults_per_peak_page, Comparison::at_least,
                             &T::fault_churn_ratio};
// Little other work runnable: a run queue past the CPUs, and the preemptions, are the
// program's own threads (8 OpenMP threads on 2 CPUs read "other work competed ... measure on
// a quiet machine" before).
constexpr Qualifier others_idle = {"others_run_queue_per_cpu", others_run_queue_per_cpu,
                                   Comparison::below, &T::others_run_queue_per_cpu};
constexpr Qualifier enough_faults = {"page_faults",
                                     [](const P& p) -> Opt {
                                         if (!p.minor_page_faults && !p.major_page_faults)
                                             return std::nullopt;
                                         return p.minor_page_faults.value_or(0.0) +
                                                p.major_page_faults.value_or(0.0);
                                     },
                                     Comparison::at_least, &T::page_faults_min};
constexpr Qualifier enough_kernel_time = {"system_s", [](const P& p) { return p.system_s; },
                                          Comparison::at_least, &T::system_time_min_s};
constexpr Qualifier enough_calls = {"io_calls", [](const P& p) { return p.io_calls; },
                                    Comparison::at_least, &T::io_calls_min};
constexpr Qualifier enough_tasks = {"host_tasks_started",
                                    [](const P& p) { return p.host_tasks_started; },
                                    Comparison::at_least, &T::tasks_started_min};
constexpr Qualifier enough_major_faults = {"major_page_faults",
                                           [](const P& p) { return p.major_page_faults; },
                                           Comparison::at_least, &T::major_page_faults_min};

const std::array<SystemRule, 17> rules = {{
    {utilisation_signal_name, cpu_utilisation, Comparison::below, &T::cpu_utilisation,
     "CPU busy well below the cores used, and most context switches voluntary: the process "
     "waits (I/O, locks, sleep, a device)",
     &blocked,
     "CPU busy well below the cores used, but most context switches involuntary: its threads "
     "were preempted and queued for a CPU behind other work, they did not wait",
     "CPU busy well below the cores used: waiting or queued for a CPU (context switches not "
     "measured)"},
    // A row of the decision table too (latency bound, threads took turns), where it fires.
    {turns_signal_name,
     run_thread_concurrency,
     Comparison::below,
     &T::thread_concurrency,
     "its CPU time was spread over several threads, yet fewer ran at once than it had such "
     "threads and CPUs, and most context switches voluntary: its threads took turns, waiting "
     "on each other (a lock held while working: Python's GIL, a mutex around the work; "
     "hand-offs between stages) or on I/O; let them run at once (processes instead of "
     "threads under the GIL, native code that releases it, finer locks) or use fewer threads",
     &blocked,
     {},
     "its CPU time was spread over several threads, yet fewer ran at once than it had such "
     "threads and CPUs: its threads took turns (waiting on each other or on I/O) or queued "
     "for a CPU (context switches not measured)"},
    // A row of the decision table too (not the model, kernel bound), at kernel_time_share
    // where its cores were busy.
    {kernel_signal_name,
     system_time_share,
     Comparison::at_least,
     &T::system_time_share,
     "much CPU time in the kernel: system calls, copies, page faults",
     nullptr,
     {},
     {},
     false,
     nullptr,
     {},
     &enough_kernel_time},
    // Which system calls, where they are reads and writes: their count and mean size (a
    // program writing one byte per call spent 93 % of its CPU time in the kernel, said only
    // as "system calls, copies, page faults").
    {"io_calls_per_s",
     io_calls_per_s,
     Comparison::at_least,
     &T::io_calls_per_s,
     "many small read and write calls (files, pipes, sockets, terminals alike), each a trip "
     "into the kernel for a few bytes: buffer them (stdio or a larger buffer, one call for "
     "many records, readv/writev)",
     &small_calls,
     {},
     {},
     false,
     nullptr,
     {},
     &enough_calls},
    {"context_switches_per_s", context_switches_per_s, Comparison::at_least,
     &T::context_switches_per_s,
     "frequent context switches: blocking, oversubscribed threads, contention"},
    {"involuntary_switches_per_cpu_s",
     involuntary_switches_per_cpu_s,
     Comparison::at_least,
     &T::involuntary_switches_per_cpu_s,
     "preempted often, and most context switches involuntary: more runnable threads than "
     "CPUs, other work's or its own (contention)",
     &preempted,
     {},
     {},
     true,
     &others_idle,
     "preempted often, with little other work runnable (its own threads, where more of them "
     "than CPUs, or brief kernel work): not contention"},
    {"steal_share",
     steal_share,
     Comparison::at_least,
     &T::steal_share,
     "the hypervisor gave these CPUs to other guests (steal time): a shared host",
     nullptr,
     {},
     {},
     true},
    {"run_queue_per_cpu", run_queue_per_cpu, Comparison::at_least, &T::run_queue_per_cpu,
     "more runnable threads than CPUs, nearly all its own: the program oversubscribes the CPUs "
     "itself, its threads take turns on the cores and preempt each other: size its thread "
     "pools to the CPUs (OMP_NUM_THREADS, torch.set_num_threads, pools nested in pools, "
     "worker counts)",
     &others_idle,
     "more runnable threads than CPUs on the host, other work's among them: the CPUs were "
     "oversubscribed",
     "more runnable threads than CPUs on the host, its own and other work's: the CPUs were "
     "oversubscribed"},
    {"page_faults_per_s",
     page_faults_per_s,
     Comparison::at_least,
     &T::page_faults_per_s,
     "frequent page faults, several per page of the peak footprint: memory freed and touched "
     "afresh over and over (allocation churn, or many short-lived threads or processes)",
     &churn,
     "frequent page faults, about one per page of the peak footprint at most: first touch of "
     "the memory it keeps (allocation), not churn",
     "frequent page faults: first touch or churn (the peak footprint was not measured over "
     "enough of the run to tell)",
     false,
     nullptr,
     {},
     &enough_faults},
    // How it spent kernel time starting them: a thread per task (std::async, a thread per
    // request) spent 91 % of its CPU time in the kernel, said only as "system calls, copies,
    // page faults" and "fewer processes started" before.
    {"tasks_started_per_s",
     tasks_started_per_s,
     Comparison::at_least,
     &T::tasks_started_per_s,
     "many threads or processes started (forks and clones on the host while it ran: its own "
     "where little else ran), each a stack mapped, faulted in and freed, and a trip through "
     "the scheduler: keep a pool of workers alive and hand them tasks, instead of one per "
     "task or request",
     nullptr,
     {},
     {},
     false,
     nullptr,
     {},
     &enough_tasks},
    {"major_page_faults_per_s", major_page_faults_per_s, Comparison::at_least,
     &T::major_page_faults_per_s,
     "page faults that read from disk: memory pressure or memory-mapped files paged in",
     &enough_major_faults},
    {"device_wait_share", device_wait_share, Comparison::at_least, &T::device_wait_share,
     "time waiting for the device: synchronisation, serialised launches"},
    {"device_copy_share", device_copy_share, Comparison::at_least, &T::device_copy_share,
     "time copying between host and device"},
    // Also a row of the decision table (not the model, I/O bound), which gives the move.
    {storage_signal_name, storage_share, Comparison::at_least, &T::near_roof,
     "storage read or written near the sequential storage roof `ceiling machine` measured"},
    // A row of the decision table too (not the model, I/O bound), where its own code left
    // its cores idle (user time under cpu_utilisation of them).
    {storage_wait_signal_name, storage_wait_threads, Comparison::at_least, &T::storage_wait_threads,
     "its threads were blocked on storage (flushes, file reads and writes, faults on mapped "
     "files: the scheduler's blocked time, by the system call each was seen waiting in) while "
     "its own code (user time) left its cores idle: it waits on storage, however "
     "little it moves",
     &idled},
    // A row of the decision table too (not the model, waiting), where its own code left its
    // cores idle.
    {outside_wait_signal_name, outside_wait_threads, Comparison::at_least, &T::outside_wait_threads,
     "its threads were blocked in sleeps, on sockets or in event loops (the scheduler's "
     "blocked time, by the system call each was seen waiting in) while its own code (user "
     "time) left its cores idle: it waits on its own timing, a peer or its input, not on "
     "its work",
     &idled},
    // A row of the decision table too (not the model, CPU quota bound).
    {quota_signal_name, cpu_quota_throttled_share, Comparison::at_least,
     &T::cpu_quota_throttled_share,
     "its control group's CPU quota (a container's CPU limit) ran out in these periods: its "
     "threads were held off the CPUs until the next period, whatever their code"},
}};

bool compares(Comparison c, double value, double threshold) {
    return c == Comparison::at_least ? value >= threshold : value < threshold;
}
// A rule's own_doing qualifier holds: measured, and on its side of the threshold.
bool own_doing(const Qualifier& q, const P& p, const Thresholds& t) {
    const Opt v = q.metric(p);
    return v && compares(q.comparison, *v, t.*q.threshold);
}

// The numbers a contention finding quotes, each only when measured.
struct Evidence {
    Opt (*metric)(const P&);
    std::string (*say)(double);
};
const std::array<Evidence, 6> contention_evidence = {{
    {involuntary_switches_per_cpu_s,
     [](double v) {
         return "preempted " + g3(v) + " times per second of CPU time (involuntary switches)";
     }},
    {[](const P& p) {
         if (!p.user_s || !p.system_s) return Opt{};
         return ratio(own_wakeup_preemptions(p), *p.user_s + *p.system_s);
     },
     [](double v) { return "besides about " + g3(v) + " by ceiling's own wakeups (not counted)"; }},
    {[](const P& p) { return per_wall_s(p, p.voluntary_context_switches, std::nullopt); },
     [](double v) { return "blocked " + g3(v) + "/s (voluntary switches)"; }},
    {steal_share, [](double v) { return "steal " + g3(v * 100) + "% of the host's CPU time"; }},
    {run_queue_per_cpu, [](double v) { return g3(v) + " runnable threads per CPU on the host"; }},
    {own_run_queue_per_cpu, [](double v) { return g3(v) + " of them its own"; }},
}};

constexpr std::string_view contention_consequence =
    "taken under contention: other work competed for the CPUs, so times and rates are those "
    "of a shared machine; the roofline stays right but is not what limited this run: judge "
    "the distribution (--repeat N) or measure on a quiet machine";

}  // namespace

std::span<const SystemRule> system_rules() { return rules; }

std::optional<double> storage_roof_share(const ProcessAccounting& p) { return storage_share(p); }

std::optional<double> thread_concurrency(double busy_cores, std::optional<double> working_threads,
                                         double cpus) {
    if (!working_threads || *working_threads < working_threads_min || !(cpus > 0))
        return std::nullopt;
    return busy_cores / std::min(*working_threads, cpus);
}

std::vector<SystemSignal> system_evidence(const ProcessAccounting& p, const Thresholds& t) {
    std::vector<SystemSignal> out;
    for (const auto& r : rules) {
        SystemSignal s;
        s.name = std::string(r.name);
        s.value = r.metric(p);
        s.threshold = t.*r.threshold;
        std::string_view meaning = r.meaning;
        if (r.qualifier) {
            const auto& q = *r.qualifier;
            s.qualifier = std::string(q.name);
            s.qualifier_value = q.metric(p);
            meaning = !s.qualifier_value ? r.meaning_unknown
                      : compares(q.comparison, *s.qualifier_value, t.*q.threshold)
                          ? r.meaning
                          : r.meaning_otherwise;
        }
        // Only where the rule says something at all: its own qualifier may keep it silent.
        if (r.own_doing && !meaning.empty() && own_doing(*r.own_doing, p, t))
            meaning = r.meaning_own;
        s.fired = s.value && !meaning.empty() && compares(r.comparison, *s.value, s.threshold) &&
                  (!r.enough || own_doing(*r.enough, p, t));
        s.meaning = std::string(meaning.empty() ? r.meaning : meaning);
        out.push_back(std::move(s));
    }
    return out;
}

std::optional<Finding> contention_finding(const ProcessAccounting& p,
                                          std::span<const SystemSignal> evidence,
                                          const Thresholds& t) {
    bool contended = false;
    for (const auto& r : rules)
        if (r.contention && !(r.own_doing && own_doing(*r.own_doing, p, t)))
            for (const auto& s : evidence) contended = contended || (s.name == r.name && s.fired);
    if (!contended) return std::nullopt;
    std::string numbers;
    for (const auto& e : contention_evidence)
        if (const auto v = e.metric(p)) numbers += (numbers.empty() ? "" : ", ") + e.say(*v);
    return Finding{FindingKind::contention,
                   "contention: " + numbers + ": verdicts " + std::string(contention_consequence)};
}

std::optional<Finding> cpu_quota_finding(const ProcessAccounting& p) {
    if (!p.cpu_quota_cpus || !p.cpu_quota_periods || !p.cpu_quota_throttled_periods ||
        !(*p.cpu_quota_periods > 0))
        return std::nullopt;
    std::string text = "CPU quota of its control group: " + g3(*p.cpu_quota_cpus) +
                       " CPUs' time per period; it ran out in " +
                       g3(*p.cpu_quota_throttled_periods) + " of " + g3(*p.cpu_quota_periods) +
                       " periods";
    if (p.cpu_quota_throttled_s)
        text += ", its threads held off the CPUs " + g3(*p.cpu_quota_throttled_s) +
                " s in all (summed over CPUs)";
    if (p.wall_s > 0 && p.user_s && p.system_s)
        text += "; it used " + g3((*p.user_s + *p.system_s) / p.wall_s) + " CPUs on average";
    return Finding{FindingKind::assumption, text};
}

const Finding* contention_of(const Diagnosis& d) {
    const auto it = std::find_if(d.findings.begin(), d.findings.end(), [](const Finding& f) {
        return f.kind == FindingKind::contention;
    });
    return it == d.findings.end() ? nullptr : &*it;
}

Finding taken_under_contention() {
    return Finding{FindingKind::contention,
                   "taken under contention: other work competed for the CPUs during this run "
                   "(the run's diagnosis has the evidence)"};
}

void to_json(nlohmann::json& j, const ProcessAccounting& p) {
    j = {{"wall_s", p.wall_s},
         {"cores_used", p.cores_used},
         {"user_s", p.user_s},
         {"system_s", p.system_s},
         {"voluntary_context_switches", p.voluntary_context_switches},
         {"involuntary_context_switches", p.involuntary_context_switches},
         {"observer_wakeups", p.observer_wakeups},
         {"working_threads", p.working_threads},
         {"minor_page_faults", p.minor_page_faults},
         {"major_page_faults", p.major_page_faults},
         {"device_wait_s", p.device_wait_s},
         {"device_copy_s", p.device_copy_s},
         {"peak_rss_bytes", p.peak_rss_bytes},
         {"peak_rss_pages", p.peak_rss_pages},
         {"host_cpu_s", p.host_cpu_s},
         {"host_steal_s", p.host_steal_s},
         {"host_runnable_thread_s", p.host_runnable_thread_s},
         {"own_runnable_thread_s", p.own_runnable_thread_s},
         {"storage_read_bytes", p.storage_read_bytes},
         {"storage_write_bytes", p.storage_write_bytes},
         {"storage_read_roof_bytes_per_s", p.storage_read_roof_bytes_per_s},
         {"storage_write_roof_bytes_per_s", p.storage_write_roof_bytes_per_s},
         {"storage_wait_thread_s", p.storage_wait_thread_s},
         {"host_tasks_started", p.host_tasks_started},
         {"outside_wait_thread_s", p.outside_wait_thread_s},
         {"io_calls", p.io_calls},
         {"io_call_bytes", p.io_call_bytes},
         {"cpu_quota_cpus", p.cpu_quota_cpus},
         {"cpu_quota_periods", p.cpu_quota_periods},
         {"cpu_quota_throttled_periods", p.cpu_quota_throttled_periods},
         {"cpu_quota_throttled_s", p.cpu_quota_throttled_s}};
}
void from_json(const nlohmann::json& j, ProcessAccounting& p) {
    get_field(j, "wall_s", p.wall_s);
    get_optional(j, "cores_used", p.cores_used);
    get_optional(j, "user_s", p.user_s);
    get_optional(j, "system_s", p.system_s);
    get_optional(j, "voluntary_context_switches", p.voluntary_context_switches);
    get_optional(j, "involuntary_context_switches", p.involuntary_context_switches);
    get_optional(j, "observer_wakeups", p.observer_wakeups);
    get_optional(j, "working_threads", p.working_threads);
    get_optional(j, "minor_page_faults", p.minor_page_faults);
    get_optional(j, "major_page_faults", p.major_page_faults);
    get_optional(j, "device_wait_s", p.device_wait_s);
    get_optional(j, "device_copy_s", p.device_copy_s);
    get_optional(j, "peak_rss_bytes", p.peak_rss_bytes);
    get_optional(j, "peak_rss_pages", p.peak_rss_pages);
    get_optional(j, "host_cpu_s", p.host_cpu_s);
    get_optional(j, "host_steal_s", p.host_steal_s);
    get_optional(j, "host_runnable_thread_s", p.host_runnable_thread_s);
    get_optional(j, "own_runnable_thread_s", p.own_runnable_thread_s);
    get_optional(j, "storage_read_bytes", p.storage_read_bytes);  // absent in older records
    get_optional(j, "storage_write_bytes", p.storage_write_bytes);
    get_optional(j, "storage_read_roof_bytes_per_s", p.storage_read_roof_bytes_per_s);
    get_optional(j, "storage_write_roof_bytes_per_s", p.storage_write_roof_bytes_per_s);
    get_optional(j, "storage_wait_thread_s", p.storage_wait_thread_s);  // absent in older ones
    get_optional(j, "outside_wait_thread_s", p.outside_wait_thread_s);
    get_optional(j, "host_tasks_started", p.host_tasks_started);
    get_optional(j, "io_calls", p.io_calls);                            // absent in older ones
    get_optional(j, "io_call_bytes", p.io_call_bytes);
    get_optional(j, "cpu_quota_cpus", p.cpu_quota_cpus);  // absent in older records
    get_optional(j, "cpu_quota_periods", p.cpu_quota_periods);
    get_optional(j, "cpu_quota_throttled_periods", p.cpu_quota_throttled_periods);
    get_optional(j, "cpu_quota_throttled_s", p.cpu_quota_throttled_s);
}

}  // namespace ceiling
