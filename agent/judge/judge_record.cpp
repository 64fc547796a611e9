#include "agent/judge/judge_record.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <thread>

#include "agent/inject/nvtx_event_format.hpp"
#include "agent/judge/region_judging.hpp"
#include "agent/judge/op_types.hpp"
#include "agent/record_names.hpp"
#include "diagnosis/format.hpp"
#include "diagnosis/memory_parallelism.hpp"
#include "diagnosis/regions.hpp"
#include "diagnosis/statistics.hpp"
#include "diagnosis/vector_width.hpp"

namespace ceiling::judge {

namespace {

// What the OS said about the program, per timed execution, in the engine's terms.
ProcessAccounting accounting_of(const RunRecord& r) {
    ProcessAccounting p;
    p.wall_s = r.whole.duration_s.count ? r.whole.duration_s.mean : 0.0;
    p.user_s = per_run(r, "user_s");
    p.system_s = per_run(r, "system_s");
    p.voluntary_context_switches = per_run(r, "voluntary_context_switches");
    p.involuntary_context_switches = per_run(r, "involuntary_context_switches");
    p.observer_wakeups = per_run(r, "observer_wakeups");
    p.working_threads = per_run(r, "working_threads");
    p.minor_page_faults = per_run(r, "minor_faults");
    p.major_page_faults = per_run(r, "major_faults");
    p.peak_rss_bytes = peak_memory_bytes(r);
    // The footprint page faults are judged by, and the host's load (launch.hpp).
    p.peak_rss_pages = counter_peak(r, "peak_rss_pages");
    p.host_cpu_s = per_run(r, "host_cpu_s");
    p.host_steal_s = per_run(r, "host_steal_s");
    p.host_runnable_thread_s = per_run(r, "host_runnable_thread_s");
    p.own_runnable_thread_s = per_run(r, "own_runnable_thread_s");
    p.host_tasks_started = per_run(r, "host_tasks_started");
    // Host blocked on the GPU and host<->device copy time, from the CUDA activity
    // (gpu_run.hpp); absent when no GPU activity was seen.
    p.device_wait_s = per_run(r, "host_sync_wait_s");
    p.device_copy_s = per_run(r, "gpu_copy_s");
    // What storage served the program, against the roofs of the storage `machine` measured.
    p.storage_read_bytes = per_run(r, "storage_read_bytes");
    p.storage_write_bytes = per_run(r, "storage_write_bytes");
    // Its read and write calls and what they passed (their mean size: buffered or not).
    const auto sum = [](std::optional<double> a, std::optional<double> b) {
        return a && b ? std::optional<double>(*a + *b) : std::nullopt;
    };
    p.io_calls = sum(per_run(r, "read_calls"), per_run(r, "write_calls"));
    p.io_call_bytes = sum(per_run(r, "read_call_bytes"), per_run(r, "write_call_bytes"));
    // Its threads blocked on storage (the sampler's waiting counters of those kinds).
    for (const auto k : collectors::storage_wait_kinds)
        if (const auto s = per_run(r, waiting_counter(k)))
            p.storage_wait_thread_s = p.storage_wait_thread_s.value_or(0.0) + *s;
    // And in sleeps, on sockets, in event loops.
    for (const auto k : collectors::outside_wait_kinds)
        if (const auto s = per_run(r, waiting_counter(k)))
            p.outside_wait_thread_s = p.outside_wait_thread_s.value_or(0.0) + *s;
    if (r.machine_profile && r.machine_profile->storage) {
        p.storage_read_roof_bytes_per_s = r.machine_profile->storage->read_roof_bytes_per_s();
        p.storage_write_roof_bytes_per_s = r.machine_profile->storage->write_roof_bytes_per_s();
    }
    // Its control group's CPU quota, and how often the quota ran out while it ran.
    p.cpu_quota_cpus = per_run(r, "cpu_quota_cpus");
    p.cpu_quota_periods = per_run(r, "cpu_quota_periods");
    p.cpu_quota_throttled_periods = per_run(r, "cpu_quota_throttled_periods");
    p.cpu_quota_throttled_s = per_run(r, "cpu_quota_throttled_s");
    // Cores the program could keep busy: its most threads at once (sampled), at most the
    // CPUs of this machine and its quota, and at most the threads its work was spread over
    // (working_threads, at least one): a main thread waiting in join for one worker, or an
    // idle pool beside one busy thread, is not a core it left idle (one worker started
    // after another read "50 % ... the process waits"). Unknown without sampling, so
    // utilisation is then unknown too.
    if (const auto threads = counter_peak(r, "peak_threads")) {
        const double cpus =
            usable_cpus(r).value_or(std::max(1u, std::thread::hardware_concurrency()));
        p.cores_used = std::min(*threads, cpus);
        if (p.working_threads)
            p.cores_used = std::min(*p.cores_used, std::max(1.0, *p.working_threads));
    }
    return p;
}

// Whether a PMU counted anything in this record: then a region without counts lacks them for
// another reason than "no PMU here".
bool pmu_counted(const RunRecord& r) {
    auto counted = [](const CounterValue& c) {
        return c.source == Source::pmu && (c.name == "fp_ops" || c.name == "dram_bytes");
    };
    if (std::any_of(r.whole.counters.begin(), r.whole.counters.end(), counted)) return true;
    return std::any_of(r.regions.begin(), r.regions.end(), [](const RecordedRegion& g) {
        return g.measurement.measured_ops_source == Source::pmu ||
               g.measurement.measured_bytes_source == Source::pmu;
    });
}

// A range that neither declares its work nor was counted: said so, with what to do, instead
// of leaving the region out of the diagnosis.
Diagnosis work_unknown(const RecordedRegion& reg, bool counted, const Thresholds& t) {
    Diagnosis d;
    d.subject = reg.path;
    d.diagnosis = "unknown";
    d.verdict = Verdict::unknown;
    d.observation =
        counted ? "no work declared, and the PMU's counts could not be given to every instance of "
                  "it (an instance outside the sampled counts); declare `{ops=... bytes=...}`"
                : "no work declared and no PMU here; declare `{ops=... bytes=...}` or run where "
                  "`ceiling doctor` finds a PMU";
    d.first_move = "declare the region's work or count it, then judge it";
    if (const auto why = reg.labels.find(work_unknown_label); why != reg.labels.end()) {
        d.observation = why->second;
        d.first_move =
            "declare its work (an NVTX range `{ops=... bytes=...}` around the call) or count it "
            "where `ceiling doctor` finds a PMU, then judge it";
    }
    if (reg.measurement.duration_s.count > 0) d.duration_s = reg.measurement.duration_s;
    // Its process (and those it started) mostly idle while it was open: whatever its work,
    // the region waited, and what it waited for comes before any roof: a CPU, where its
    // threads queued for one; else something it blocked on.
    const double busy = reg.busy_cores.value_or(0.0) + reg.descendant_busy_cores.value_or(0.0);
    if (auto queued = queued_for_cpu(t, reg)) {
        d.findings.push_back(queued->finding);
        d.first_move = queued->move + d.first_move;
    } else if (reg.busy_cores && busy < waited_below_cores) {
        d.findings.push_back(
            {FindingKind::assumption,
             "its process kept " + fixed(*reg.busy_cores, 2) + " cores busy while it was open" +
                 (reg.descendant_busy_cores
                      ? " (and the processes it started " + fixed(*reg.descendant_busy_cores, 2) + ")"
                      : std::string()) +
                 ": it mostly waited, for I/O, a lock, a sleep, a device or another process" +
                 (reg.other_busy_cores
                      ? " (the host's other processes kept " + fixed(*reg.other_busy_cores, 2) +
                            " cores busy meanwhile)"
                      : std::string())});
        d.first_move =
            "find what it waits for (its process was idle while it was open); then "
            "declare its work to judge the rest";
    }
    return d;
}

// The interpolation error of a region's busy cores, where it matters: " (+-0.02)", and where
// it exceeds the figure (instances shorter than the time between CPU-time reads) says so.
std::string busy_error(const RecordedRegion& reg) {
    if (!reg.busy_cores || !reg.busy_cores_error || *reg.busy_cores_error < 0.005) return "";
    const std::string e = " (+-" + fixed(*reg.busy_cores_error, 2);
    if (*reg.busy_cores_error < *reg.busy_cores) return e + ")";
    return e + ": its instances are shorter than the " +
           std::to_string(inject::cpu_read_interval_ns / 1000) +
           " us between the process's CPU-time reads, so only roughly known)";
}

// An amount a range leaves out is zero (`{ops=...}` alone is work in registers, `{bytes=...}`
// alone pure data movement), and its side of the roofline then reads 0 %: said, since a
// user who declared only the FLOPs of a matmul that streams memory would otherwise read a
// low compute fraction as latency bound without knowing why.
// Not for `--torch` ops: their work comes from a formula per op (a fill has no operations),
// not from the user.
std::optional<Finding> one_side_declared(const RecordedRegion& reg) {
    const auto& w = reg.measurement.work;
    if (reg.kind != RegionKind::range || reg.labels.contains("torch") || !w ||
        (w->ops > 0) == (w->compulsory_bytes > 0))
        return std::nullopt;
    return Finding{FindingKind::assumption,
                   w->ops > 0 ? "no bytes declared: judged as work in registers that moves "
                                "nothing from memory (its bandwidth side reads 0 %); if it "
                                "reads or writes memory, declare bytes="
                              : "no operations declared: judged as pure data movement (its "
                                "compute side reads 0 %); if it computes, declare ops="};
}

// Work that needs this many times the core time its process (with those it started) had
// while the region was open, at the roof of one core, did not run there: twice, so that the
// sampling's error and a roof measured a little low never make a busy process look idle.
constexpr double outside_work_ratio = 2.0;

// The cores a region's work needs at the 1-thread roof: its largest fraction of a 1-thread
// roof (above 1 where it ran above it).
double cores_needed(const Diagnosis& d) {
    double needed = 0;
    for (const auto& c : d.roofs)
        if (c.fraction && c.threads == 1) needed = std::max(needed, *c.fraction);
    return needed;
}

// A region judged at the 1-thread roof that declares more work than its process's CPU time
// (`cores`, with its error) can do there: a client's range around a request to a local
// server, a call into a process ceiling did not start. Said, with the host's other
// processes' busy cores where the sampler measured them: the verdict describes the work as if
// one core did it, which the process's own time shows it did not.
std::optional<Finding> work_outside(const Diagnosis& d, double cores, const RecordedRegion& reg) {
    if (!(cores < 1)) return std::nullopt;
    const double needed = cores_needed(d);
    if (!(needed >= outside_work_ratio * (cores + reg.busy_cores_error.value_or(0.0))))
        return std::nullopt;
    return Finding{
        FindingKind::assumption,
        "its declared work needs " + fixed(needed, 2) +
            " cores at the 1-thread roof, and its process" +
            (reg.descendant_busy_cores ? " (with those it started)" : "") + " kept " +
            fixed(cores, 2) + " busy while it was open" +
            (reg.other_busy_cores
                 ? " (the host's other processes " + fixed(*reg.other_busy_cores, 2) + ")"
                 : std::string()) +
            ": the work ran outside it, elsewhere (a server or another process ceiling did "
            "not start, a device) or after it ended (handed to a thread, a pool or a stream "
            "without waiting for it: end the range after the wait), or the declared amounts "
            "overcount it; judge it where and while it runs"};
}

// Instances open at once on average below which a region is judged as sequential instances:
// a percent of overlap (async ranges that touch) is within the timing's noise.
constexpr double concurrency_judged = 1.01;

// The machine as a control group with a CPU quota below one CPU sees it per second of wall
// time: every thread runs at most that share of each period, so every CPU roof is that share
// of the measured one.
MachineProfile time_share(MachineProfile p, double share) {
    auto scale = [&](Summary& s) {
        for (double* v : {&s.median, &s.p90, &s.p99, &s.min, &s.max, &s.mean}) *v *= share;
    };
    for (auto& r : p.compute_roofs) {
        scale(r.ops_per_s);
        if (r.theoretical_ops_per_s) *r.theoretical_ops_per_s *= share;
    }
    for (auto& r : p.bandwidth_roofs) scale(r.bytes_per_s);
    return p;
}

// A range on the host (a kernel region, or work declared for the GPU, runs on the device).
bool on_host(const RecordedRegion& reg) {
    const Measurement& m = reg.measurement;
    return reg.kind == RegionKind::range &&
           !(m.work ? m.work->device == Device::gpu
                    : m.measured_kind && m.measured_kind->device == Device::gpu);
}

}  // namespace

std::optional<Diagnosis> judge_region(const MachineProfile& machine, const RecordedRegion& recorded,
                                      const Thresholds& t, bool counted, const CpuLimits& limits) {
    // What other recording threads spent in their own ranges open beside it (a pipeline's
    // other stages) is not its work: its busy cores are its process's less those.
    RecordedRegion own = recorded;
    own.beside_busy_cores.reset();  // set where taken out of busy_cores
    std::string beside;
    if (recorded.busy_cores && recorded.beside_busy_cores && *recorded.beside_busy_cores >= 0.05) {
        const double b = *recorded.beside_busy_cores;
        own.busy_cores = std::max(0.0, *recorded.busy_cores - b);
        own.beside_busy_cores = b;
        if (own.peak_busy_cores)
            own.peak_busy_cores = std::max(*own.busy_cores, *own.peak_busy_cores - b);
        beside = "; its process kept " + fixed(*recorded.busy_cores, 2) + " cores busy, " +
                 fixed(b, 2) +
                 " of them on its other threads inside their own ranges open beside it (other "
                 "stages of a pipeline, from each thread's CPU time): not its work";
    }
    const RecordedRegion& reg = own;
    const std::string basis = beside.empty() ? "CPU time of the whole process"
                                             : "CPU time of the whole process less those ranges'";
    const std::optional<double> usable = within(limits, std::nullopt);
    std::optional<MachineProfile> shared;
    if (limits.quota && *limits.quota < 1 - 1e-9) shared = time_share(machine, *limits.quota);
    const MachineProfile& profile = shared ? *shared : machine;
    const Measurement& given = reg.measurement;
    const bool known = given.work || given.measured_ops || given.measured_bytes;
    if (!known) {
        if (reg.kind != RegionKind::range) return std::nullopt;
        Diagnosis d = work_unknown(reg, counted, t);
        if (!weigh_storage(profile, reg, d, t)) weigh_kernel_time(reg, d, t);
        // Threads that took turns need no roof to be said (a lock held while working).
        if (auto turns = took_turns(profile, t, reg, limits)) {
            d.findings.insert(d.findings.begin(), turns->finding);
            d.first_move = turns->move + d.first_move;
        }
        return d;
    }
    if (given.duration_s.count == 0) return std::nullopt;
    if (!on_host(reg)) return diagnose_kernel(profile, given, t);

    Measurement m = given;
    // Instances side by side on the process's threads: the region did their summed declared
    // work in one instance's time, and busy_cores counts the cores of all of them. (Counted
    // work is the whole process's over each instance already.)
    std::optional<Finding> side_by_side;
    if (reg.concurrency && *reg.concurrency >= concurrency_judged && m.work) {
        const double c = *reg.concurrency;
        m.work->ops *= c;
        m.work->compulsory_bytes *= c;
        side_by_side =
            Finding{FindingKind::assumption,
                    "instances ran side by side: " + fixed(c, 2) +
                        " open at once on average in one process while any was open: judged "
                        "as their sum, " +
                        fixed(c, 2) + " x the declared work per instance's time"};
    }
    std::string why;
    std::optional<double> judged_cores = reg.busy_cores;
    std::string idle;  // the share of the held cores' time idle, when judged at them
    // A container's quota lets its threads run on more CPUs at once than the quota's share
    // of each period: what they held past it, they paid for with time held off the CPUs.
    std::string quota;
    if (const auto& q = limits.quota; q && reg.peak_busy_cores &&
                                      (*reg.peak_busy_cores > *q + 0.05 || shared) &&
                                      *q < profile.host.logical_cpus)
        quota = "; its threads ran on " + fixed(*reg.peak_busy_cores, 2) +
                " CPUs at once at most, but its control group's CPU quota gives " + fixed(*q, 2) +
                " CPUs' time per period: judged at the quota" +
                (shared ? " (every roof " + fixed(*q, 2) + " x the measured one)" : "");
    if (const auto held_at_once = reg.held_cores(t, usable)) {
        // It held more cores at once than it kept busy on average: the idle part of them is
        // distance from the roof (a team waiting for its slowest thread, a serial section),
        // not a lower roof.
        const double held = *held_at_once;
        judged_cores = held;
        m.threads = static_cast<int>(std::ceil(held - 1e-9));
        idle = std::to_string(static_cast<int>(std::lround(100 * (1 - *reg.busy_cores / held)))) +
               " %";
        why = "judged against the roof of the " + fixed(held, 2) +
              " cores it held at once (its busiest 10 % of the sampler's looks), not the " +
              fixed(*reg.busy_cores, 2) + " cores busy on average (" + basis +
              " / wall time while it was "
              "open): " +
              idle +
              " of those cores' time idle inside it: a team waiting for its slowest thread "
              "(load imbalance), serial sections, waits, or preemption by other work; at most "
              "the " +
              std::to_string(m.threads) + "-thread roof" + quota;
    } else if (reg.busy_cores) {
        // Its work ran in processes it started (with_descendants_cores): theirs count too.
        const auto below = reg.with_descendants_cores();
        const double busy = below.value_or(*reg.busy_cores);
        judged_cores = busy;
        m.threads = static_cast<int>(std::ceil(std::max(1.0, busy) - 1e-9));
        const std::string cores =
            below ? fixed(busy, 2) + " cores busy: " + fixed(*reg.busy_cores, 2) +
                        " in its own process and " + fixed(*reg.descendant_busy_cores, 2) +
                        " in the processes it started, where its work ran (their CPU time / "
                        "wall time while it was open)"
                  : fixed(busy, 2) + busy_error(reg) + " cores busy (" + basis +
                        " / wall time while it was "
                        "open)";
        why = (busy <= 1 ? "judged against the 1-thread roof: " + cores
                         : "judged against the roof of " + cores + ": " + fixed(busy, 2) +
                               " x the 1-thread roof (compute: or the per-core share of the "
                               "roof measured on more cores, if higher), at most the " +
                               std::to_string(m.threads) + "-thread roof") +
              quota;
    } else {
        m.threads = std::max(1, reg.threads);
        why = "busy cores not measured: judged against the " + std::to_string(m.threads) +
              "-thread roof of the threads that recorded it";
    }
    why += beside;
    if (const auto n = reg.busy_cores_outliers)
        why +=
            "; busy cores of its instances within 2x the median duration, which its rate is "
            "judged at: " +
            std::to_string(*n) + (*n == 1 ? " slower instance" : " slower instances") +
            " left out (a cold start, a stall: see its p99)";
    Diagnosis d = diagnose_kernel(profile, m, t, judged_cores);
    std::optional<Finding> outside;
    if (idle.empty() && judged_cores) outside = work_outside(d, *judged_cores, reg);
    // Done outside it, above one core's roof, and the host's other processes kept enough
    // cores busy meanwhile to do it: judged at theirs (a two-thread server's answers read
    // 194 % of one core's roof, "above the roof", bound unknown).
    if (outside && d.verdict == Verdict::above_roof && reg.other_busy_cores &&
        cores_needed(d) <= *reg.other_busy_cores * (1 + t.above_roof_tolerance)) {
        // Read per clock tick, it can pass the host's CPUs by a tick's worth.
        const double cpus = profile.host.logical_cpus;
        const double others =
            cpus > 0 ? std::min(*reg.other_busy_cores, cpus) : *reg.other_busy_cores;
        judged_cores = others;
        m.threads = static_cast<int>(std::ceil(std::max(1.0, others) - 1e-9));
        why = "judged against the roof of the " + fixed(others, 2) +
              " cores the host's other processes kept busy while it was open (the host's CPU "
              "time from /proc/stat less its own process's, those it started and ceiling's, / "
              "wall time), not its own process's " +
              fixed(*reg.busy_cores, 2) +
              ": above the 1-thread roof, its work can only have run there; at most the " +
              std::to_string(m.threads) + "-thread roof";
        d = diagnose_kernel(profile, m, t, judged_cores);
    }
    if (!weigh_storage(profile, reg, d, t)) weigh_kernel_time(reg, d, t);
    // Above the roof of cores its process did keep busy: besides the causes any work has, a
    // range can end before the work it declares (a range around submitting to a pool whose
    // threads are busy with earlier submissions).
    if (!outside && d.verdict == Verdict::above_roof && given.work)
        d.findings.push_back(
            {FindingKind::assumption,
             "a range that ends before the work it declares also runs above the roof: work "
             "handed to a thread, a pool or a stream without waiting for it (end the range "
             "after the wait)"});
    // Whatever bounds it, the cores it left idle come first: balanced, the same work takes
    // that much less time (the table's move follows).
    if (!idle.empty())
        d.first_move = "keep the cores it held busy: " + idle +
                       " of their time idle inside it (balance the team's shares, parallelise "
                       "serial sections); then " +
                       d.first_move;
    // First among the findings: they say which roof every fraction is of, and of what work.
    std::vector<Finding> first = {Finding{FindingKind::assumption, why}};
    if (side_by_side) first.push_back(*side_by_side);
    if (outside) {
        first.push_back(*outside);
        // Its own process is not where a lever acts: where the work runs comes first.
        d.first_move =
            "judge the work where it runs (its process did not do it while the range was "
            "open); then " +
            d.first_move;
    } else if (idle.empty()) {
        if (auto queued = queued_for_cpu(t, reg)) {
            first.push_back(queued->finding);
            d.first_move = queued->move + d.first_move;
        } else if (auto turns = took_turns(profile, t, reg, limits)) {
            first.push_back(turns->finding);
            d.first_move = turns->move + d.first_move;
        } else if (auto spare = idle_cores(profile, m, t, reg, d, limits)) {
            first.push_back(spare->finding);
            d.first_move = spare->move + d.first_move;
        }
    }
    d.findings.insert(d.findings.begin(), first.begin(), first.end());
    // Ranges beside it that were its work after all (a team whose members range their shares
    // under another name while its own thread works too): without their cores it ran above
    // the roof of those left, which it cannot have; judged with them.
    if (own.beside_busy_cores && d.verdict == Verdict::above_roof) {
        RecordedRegion whole = recorded;
        whole.beside_busy_cores.reset();
        if (auto alt = judge_region(machine, whole, t, counted, limits);
            alt && alt->verdict != Verdict::above_roof) {
            alt->findings.push_back(
                {FindingKind::assumption,
                 "the ranges open beside it on its other threads (" +
                     fixed(*own.beside_busy_cores, 2) +
                     " cores) did its work: without their cores it ran above the roof of those "
                     "left, so it is judged with them"});
            return alt;
        }
    }
    return d;
}

std::optional<double> peak_memory_bytes(const RunRecord& r) {
    if (auto tree = counter_peak(r, "peak_tree_rss_bytes")) return tree;
    // Never max_rss_bytes (older records): wait4's peak includes ceiling's own memory.
    return counter_peak(r, "peak_rss_bytes");
}

// The region a region budget names: its path, else its name when one region has it, else for
// "model" the one outermost model region. Null with why when none (or several) match.
const RecordedRegion* budget_region(const RunRecord& record, const std::string& key,
                                    std::string& why) {
    if (const RecordedRegion* exact = record.region(key)) return exact;
    std::vector<const RecordedRegion*> named, model;
    for (const auto& r : record.regions) {
        if (r.name == key) named.push_back(&r);
        const RecordedRegion* parent = record.region(r.parent);
        if (r.model && !(parent && parent->model)) model.push_back(&r);
    }
    if (named.size() == 1) return named.front();
    auto paths = [](const std::vector<const RecordedRegion*>& v) {
        std::string s;
        for (const auto* r : v) s += (s.empty() ? "" : ", ") + r->path;
        return s;
    };
    if (named.size() > 1) {
        why =
            "several regions are named '" + key + "' (" + paths(named) + "): name one by its path";
        return nullptr;
    }
    if (key == "model" && model.size() == 1) return model.front();
    if (key == "model" && model.size() > 1) {
        why = "several model regions (" + paths(model) + "): name the one the budget is for";
        return nullptr;
    }
    why = "no region '" + key + "' in this run" +
          (key == "model" ? " (and no region marked as model: --model-regions)" : "");
    return nullptr;
}

std::optional<bool> budgets_met(const RunRecord& record) {
    return ceiling::budgets_met(record.budget_checks);
}

namespace {

// Regions and kernels with known work (declared, analytic or counted) against the roofline;
// ranges without say what is missing. Needs the record's machine profile.
void judge_regions(RunRecord& record) {
    const Thresholds& t = record.thresholds;
    const bool counted = pmu_counted(record);
    for (const auto& recorded : record.regions) {
        // Without a declared working set, at most what its process held (footprint_bounded).
        const auto bounded =
            record.kind == RecordKind::run ? footprint_bounded(record, recorded) : std::nullopt;
        const RecordedRegion& reg = bounded ? bounded->region : recorded;
        std::vector<Finding> beside;
        if (bounded) beside.push_back(bounded->finding);
        const bool suite = record.kind == RecordKind::suite && !record.roof_checks.empty();
        auto d = suite ? judge_region(roofs_beside(record, reg, beside), reg, t, counted,
                                      cpu_limits(record))
                       : judge_region(*record.machine_profile, reg, t, counted, cpu_limits(record));
        if (!d) continue;
        // First among the findings: they say which roof every fraction is of.
        d->findings.insert(d->findings.begin(), beside.begin(), beside.end());
        weigh_roof_checks(record, reg, *d, t, counted);
        const MachineProfile& p = *record.machine_profile;
        if (record.kind == RecordKind::run)
            weigh_unranged_threads(p, reg, *d, t, counted, cpu_limits(record));
        if (auto f = one_side_declared(reg)) d->findings.push_back(std::move(*f));
        if (auto f = cut_short(reg)) d->findings.push_back(std::move(*f));
        if (record.kind == RecordKind::run) {
            if (auto f = held_cores_unresolved(p, t, reg, cpu_limits(record), record.options.interval_s))
                d->findings.push_back(std::move(*f));
            weigh_vector_width(p, *d, t, record.environment);
            if (auto f = recording_inside(record, reg)) d->findings.push_back(std::move(*f));
            if (on_host(reg)) weigh_memory_parallelism(p, *d, reg.busy_cores);
            weigh_tiny_ops(record, reg, *d, t);
        }
        record.region_diagnoses.push_back({reg.path, std::move(*d)});
    }
}

// The run as the engine sees it: the OS's accounting, the regions' times, how much of the
// run they and the model cover, memory against capacity, and the model's own work (its
// heaviest region that could be placed on the roofline).
RunInputs run_inputs(const RunRecord& record) {
    RunInputs in;
    in.process = accounting_of(record);
    // A run's GPU operations (kernel regions) run on the device's timeline: their time is
    // not host time in regions (the range that launched them holds that).
    auto host_time = [&](const RecordedRegion& reg) {
        return record.kind != RecordKind::run || reg.kind != RegionKind::kernel;
    };
    std::map<std::string, std::size_t> index;
    for (const auto& reg : record.regions)
        if (host_time(reg)) index[reg.path] = index.size();
    for (const auto& reg : record.regions) {
        if (!host_time(reg)) continue;
        RegionTiming rt;
        rt.name = reg.path;
        if (const auto it = index.find(reg.parent); !reg.parent.empty() && it != index.end())
            rt.parent = it->second;
        rt.model = reg.model;
        rt.total_s = reg.total_s_per_execution.empty() ? 0.0 : mean(reg.total_s_per_execution);
        const auto runs = std::max<std::size_t>(1, reg.total_s_per_execution.size());
        rt.count = reg.instances / runs;
        rt.non_model_s = reg.non_model_s;
        in.regions.push_back(std::move(rt));
    }
    auto mean_of = [](const std::vector<double>& v) {
        return v.empty() ? std::nullopt : std::optional(mean(v));
    };
    if (auto m = mean_of(record.model_time_s_per_execution)) in.coverage.model_s = *m;
    if (auto m = mean_of(record.region_time_s_per_execution)) in.coverage.regions_s = *m;
    if (auto m = mean_of(record.before_regions_s_per_execution)) in.coverage.before_regions_s = *m;
    if (auto m = mean_of(record.after_regions_s_per_execution)) in.coverage.after_regions_s = *m;
    in.footprint_bytes = in.process.peak_rss_bytes;
    if (record.machine_profile && record.machine_profile->host.memory_bytes > 0)
        in.memory_capacity_bytes = static_cast<double>(record.machine_profile->host.memory_bytes);
    in.memory_limit_bytes = per_run(record, "memory_limit_bytes");
    if (record.budgets) in.memory_budget_bytes = record.budgets->memory_bytes;
    const RegionVerdict* heaviest = nullptr;
    double heaviest_s = -1;
    for (const auto& v : record.region_diagnoses) {
        const RecordedRegion* reg = record.region(v.path);
        if (!reg || !(reg->model || record.kind == RecordKind::suite)) continue;
        if (v.diagnosis.roofs.empty()) continue;  // its work is unknown: nothing to stand for
        const double s = mean(reg->total_s_per_execution);
        if (s > heaviest_s) {
            heaviest_s = s;
            heaviest = &v;
        }
    }
    if (heaviest) in.model = heaviest->diagnosis;
    return in;
}

// The run's own diagnosis (a `run` record's; a suite is not one workload) with the findings
// about the run as a whole.
void judge_run(RunRecord& record, const RunInputs& in) {
    record.diagnosis = diagnose_run(in, record.thresholds);
    record.diagnosis->duration_s =
        record.whole.duration_s.count ? std::optional(record.whole.duration_s) : std::nullopt;
    if (auto f = footprint_growth(record)) record.diagnosis->findings.push_back(std::move(*f));
    if (auto f = kernel_time_outside_regions(record, in.process.system_s))
        record.diagnosis->findings.push_back(std::move(*f));
    if (auto stage = serial_stage(record)) {
        record.diagnosis->findings.push_back(std::move(stage->finding));
        if (!record.diagnosis->bound)
            record.diagnosis->first_move = stage->move + record.diagnosis->first_move;
    }
    if (auto f = one_thread_busy(in.process, usable_cpus(record)))
        record.diagnosis->findings.push_back(std::move(*f));
    if (contention_of(*record.diagnosis))
        for (auto& v : record.region_diagnoses) v.diagnosis.findings.push_back(taken_under_contention());
}

// The record's budgets, whole-run and per region, against what was measured.
void check_budgets(RunRecord& record, const RunInputs& in) {
    const Thresholds& t = record.thresholds;
    BudgetActuals a;
    if (record.whole.duration_s.count > 0) {
        a.latency_s = record.whole.duration_s;
        a.seconds_per_item = record.whole.duration_s.mean;
    }
    a.peak_memory_bytes = peak_memory_bytes(record);
    if (const auto e = per_run(record, "energy_j")) a.energy_j = e;
    if (a.energy_j && in.process.wall_s > 0) a.power_w = *a.energy_j / in.process.wall_s;
    record.budget_checks = judge_budgets(*record.budgets, a, t);
    // Region budgets: the durations of the region's instances over every timed execution,
    // and the machine's wall time per instance (throughput) for a cost.
    double timed_wall_s = 0;
    for (const Execution* e : record.timed_executions()) timed_wall_s += e->wall_s;
    for (const auto& rb : record.budgets->regions) {
        if (rb.empty()) continue;
        BudgetActuals ra;
        std::string why;
        const RecordedRegion* reg = budget_region(record, rb.region, why);
        if (reg && reg->measurement.duration_s.count > 0) {
            ra.latency_s = reg->measurement.duration_s;
            if (reg->instances > 0 && timed_wall_s > 0)
                ra.seconds_per_item = timed_wall_s / static_cast<double>(reg->instances);
        }
        auto checks = judge_region_budget(rb, record.budgets->price_per_hour, ra, t);
        for (auto& c : checks) {
            if (!reg)
                c.note = why;
            else if (rb.region != reg->path)
                c.note += (c.note.empty() ? "" : "; ") + std::string("region ") + reg->path;
            record.budget_checks.push_back(std::move(c));
        }
    }
}

}  // namespace

void judge_record(RunRecord& record) {
    record.region_diagnoses.clear();
    if (record.machine_profile) judge_regions(record);
    const RunInputs in = run_inputs(record);
    if (record.kind == RecordKind::run) judge_run(record, in);
    record.budget_checks.clear();
    if (record.budgets && !record.budgets->empty()) check_budgets(record, in);
    // Last: a model's row carries its region's diagnosis with every finding.
    record.op_summary = summarise_ops(record);
}

}  // namespace ceiling::judge
