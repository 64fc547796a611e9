// How one region is judged against the roofline: at the cores its process really kept busy
// while it was open (declared in region_judging.hpp).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "agent/inject/nvtx_event_format.hpp"
#include "agent/judge/region_judging.hpp"
#include "diagnosis/format.hpp"

namespace ceiling::judge {

namespace {

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
    // Under --torch ceiling declared every op it has a formula for: nothing is the user's to
    // declare. What is unknown is said as what it is (an op without a formula, a module or
    // model whose ops lack them), and its ops with formulas are judged in the op summary.
    if (const auto role = reg.labels.find(torch_role_label); role != reg.labels.end()) {
        const auto op = reg.labels.find(torch_op_label);
        if (role->second == "op")
            d.observation = "no work formula for " +
                            (op != reg.labels.end() ? op->second : std::string("this op")) +
                            " in ceiling's PyTorch formulas: its time is measured, its work is not";
        else if (reg.labels.find(work_unknown_label) == reg.labels.end())
            d.observation = "a PyTorch " + role->second + " with no op of known work inside it";
        d.first_move = "its time is what is known: the ops with formulas are judged by type in the "
                       "op summary";
    }
    // Its one instance still open when its process ended: its declared work is not counted (a
    // range cut short did not do it), so asking for it would mislead.
    if (reg.unclosed && reg.instances <= 1) {
        d.observation = "its one instance was still open when its process ended (killed, or an "
                        "exit inside the range): cut short, it did not do the work it declares";
        d.first_move = "nothing to judge: end the range before the process exits, or let it run "
                       "to its end";
        return d;
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
        d.first_move = "find what it waits for (its process was idle while it was open)" +
                       std::string(reg.labels.count(torch_role_label)
                                       ? ""
                                       : "; then declare its work to judge the rest");
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

// The sampler's error on the cores the processes it started kept busy, in words; empty
// where small.
std::string descendant_error(const RecordedRegion& reg) {
    const double e = reg.descendant_busy_cores_error.value_or(0.0);
    return e < 0.005 ? "" : " (+-" + fixed(e, 2) + ", read every sampler interval)";
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
    // The error of the cores it is judged at: its own process's, and where those it started
    // count (with_descendants_cores), the sampler's on theirs (a pool's workers reaped just
    // before the range ends fall in the reading after it; under load that interval is long).
    const double error = reg.busy_cores_error.value_or(0.0) +
                         (reg.with_descendants_cores()
                              ? reg.descendant_busy_cores_error.value_or(0.0)
                              : 0.0);
    if (!(needed >= outside_work_ratio * (cores + error))) return std::nullopt;
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

// A region as its own: less what other recording threads spent in their own ranges open
// beside it, and the clause saying so (empty where nothing was taken out).
struct OwnShare {
    RecordedRegion region;
    std::string beside;
};

// What other recording threads spent in their own ranges open beside it (a pipeline's
// other stages) is not its work: its busy cores are its process's less those.
OwnShare without_ranges_beside(const RecordedRegion& recorded) {
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
    return {std::move(own), std::move(beside)};
}

// A range without known work: what is missing, and what its process's time says anyway.
Diagnosis judge_unknown_work(const MachineProfile& profile, const RecordedRegion& reg,
                             const Thresholds& t, bool counted, const CpuLimits& limits) {
    Diagnosis d = work_unknown(reg, counted, t);
    if (!weigh_storage(profile, reg, d, t)) weigh_kernel_time(reg, d, t);
    // Threads that took turns need no roof to be said (a lock held while working).
    if (auto turns = took_turns(profile, t, reg, limits)) {
        d.findings.insert(d.findings.begin(), turns->finding);
        d.first_move = turns->move + d.first_move;
    }
    return d;
}

// A range on the host with known work, as judged: its profile (the machine's time share under
// a quota below one CPU), the region as its own, and what was taken out of it.
struct HostRange {
    const MachineProfile& profile;
    const RecordedRegion& reg;
    const Thresholds& t;
    const CpuLimits& limits;
    bool shared;         // profile is the machine's time share under its quota
    std::string beside;  // the clause saying which ranges beside it were taken out, or empty
};

// What a host range's verdict rests on, built up as it is judged.
struct HostBasis {
    Measurement m;  // the work judged, with the threads of the roof it is judged at
    std::optional<double> judged_cores;
    std::string why;   // the first finding: which roof every fraction is of, and of what work
    std::string idle;  // the share of the held cores' time idle, when judged at them
    std::optional<Finding> side_by_side;
    std::optional<Finding> outside;
};

// Instances side by side on the process's threads: the region did their summed declared
// work in one instance's time, and busy_cores counts the cores of all of them. (Counted
// work is the whole process's over each instance already.)
void sum_side_by_side(const RecordedRegion& reg, HostBasis& b) {
    Measurement& m = b.m;
    if (reg.concurrency && *reg.concurrency >= concurrency_judged && m.work) {
        const double c = *reg.concurrency;
        m.work->ops *= c;
        m.work->compulsory_bytes *= c;
        b.side_by_side =
            Finding{FindingKind::assumption,
                    "instances ran side by side: " + fixed(c, 2) +
                        " open at once on average in one process while any was open: judged "
                        "as their sum, " +
                        fixed(c, 2) + " x the declared work per instance's time"};
    }
}

// A container's quota lets its threads run on more CPUs at once than the quota's share
// of each period: what they held past it, they paid for with time held off the CPUs.
std::string quota_clause(const HostRange& h) {
    const RecordedRegion& reg = h.reg;
    std::string quota;
    if (const auto& q = h.limits.quota; q && reg.peak_busy_cores &&
                                        (*reg.peak_busy_cores > *q + 0.05 || h.shared) &&
                                        *q < h.profile.host.logical_cpus) {
        quota = "; its threads ran on " + fixed(*reg.peak_busy_cores, 2) +
                " CPUs at once at most, but its control group's CPU quota gives " + fixed(*q, 2) +
                " CPUs' time per period: judged at the quota" +
                (h.shared ? " (every roof " + fixed(*q, 2) + " x the measured one)" : "");
    }
    return quota;
}

// It held more cores at once than it kept busy on average: the idle part of them is
// distance from the roof (a team waiting for its slowest thread, a serial section),
// not a lower roof.
void judge_at_held_cores(const RecordedRegion& reg, double held, const std::string& basis,
                         const std::string& quota, HostBasis& b) {
    b.judged_cores = held;
    b.m.threads = static_cast<int>(std::ceil(held - 1e-9));
    b.idle =
        std::to_string(static_cast<int>(std::lround(100 * (1 - *reg.busy_cores / held)))) + " %";
    b.why = "judged against the roof of the " + fixed(held, 2) +
            " cores it held at once (its busiest 10 % of the sampler's looks), not the " +
            fixed(*reg.busy_cores, 2) + " cores busy on average (" + basis +
            " / wall time while it was "
            "open): " +
            b.idle +
            " of those cores' time idle inside it: a team waiting for its slowest thread "
            "(load imbalance), serial sections, waits, or preemption by other work; at most "
            "the " +
            std::to_string(b.m.threads) + "-thread roof" + quota;
}

// Judged at the cores it kept busy on average.
void judge_at_busy_cores(const RecordedRegion& reg, const std::string& basis,
                         const std::string& quota, HostBasis& b) {
    // Its work ran in processes it started (with_descendants_cores): theirs count too.
    const auto below = reg.with_descendants_cores();
    const double busy = below.value_or(*reg.busy_cores);
    b.judged_cores = busy;
    b.m.threads = static_cast<int>(std::ceil(std::max(1.0, busy) - 1e-9));
    const std::string cores =
        below ? fixed(busy, 2) + " cores busy: " + fixed(*reg.busy_cores, 2) +
                    " in its own process and " + fixed(*reg.descendant_busy_cores, 2) +
                    descendant_error(reg) +
                    " in the processes it started, where its work ran (their CPU time / "
                    "wall time while it was open)"
              : fixed(busy, 2) + busy_error(reg) + " cores busy (" + basis +
                    " / wall time while it was "
                    "open)";
    b.why = (busy <= 1 ? "judged against the 1-thread roof: " + cores
                       : "judged against the roof of " + cores + ": " + fixed(busy, 2) +
                             " x the 1-thread roof (compute: or the per-core share of the "
                             "roof measured on more cores, if higher), at most the " +
                             std::to_string(b.m.threads) + "-thread roof") +
            quota;
}

// The cores a host range is judged at (held at once, else busy on average, else its recording
// threads), and the sentence saying which and why.
void choose_cores(const HostRange& h, HostBasis& b) {
    const RecordedRegion& reg = h.reg;
    const std::string basis = h.beside.empty() ? "CPU time of the whole process"
                                               : "CPU time of the whole process less those ranges'";
    b.judged_cores = reg.busy_cores;
    const std::string quota = quota_clause(h);
    if (const auto held_at_once = reg.held_cores(h.t, within(h.limits, std::nullopt))) {
        judge_at_held_cores(reg, *held_at_once, basis, quota, b);
    } else if (reg.busy_cores) {
        judge_at_busy_cores(reg, basis, quota, b);
    } else {
        b.m.threads = std::max(1, reg.threads);
        b.why = "busy cores not measured: judged against the " + std::to_string(b.m.threads) +
                "-thread roof of the threads that recorded it";
    }
    b.why += h.beside;
    if (const auto n = reg.busy_cores_outliers) {
        b.why +=
            "; busy cores of its instances within 2x the median duration, which its rate is "
            "judged at: " +
            std::to_string(*n) + (*n == 1 ? " slower instance" : " slower instances") +
            " left out (a cold start, a stall: see its p99)";
    }
}

// Done outside it, above one core's roof, and the host's other processes kept enough
// cores busy meanwhile to do it: judged at theirs (a two-thread server's answers read
// 194 % of one core's roof, "above the roof", bound unknown).
bool others_could_do_it(const HostRange& h, const HostBasis& b, const Diagnosis& d) {
    return b.outside && d.verdict == Verdict::above_roof && h.reg.other_busy_cores &&
           cores_needed(d) <= *h.reg.other_busy_cores * (1 + h.t.above_roof_tolerance);
}

// Judged again at the cores the host's other processes kept busy (others_could_do_it).
void judge_at_others_cores(const HostRange& h, HostBasis& b, Diagnosis& d) {
    const RecordedRegion& reg = h.reg;
    // Read per clock tick, it can pass the host's CPUs by a tick's worth.
    const double cpus = h.profile.host.logical_cpus;
    const double others = cpus > 0 ? std::min(*reg.other_busy_cores, cpus) : *reg.other_busy_cores;
    b.judged_cores = others;
    b.m.threads = static_cast<int>(std::ceil(std::max(1.0, others) - 1e-9));
    b.why = "judged against the roof of the " + fixed(others, 2) +
            " cores the host's other processes kept busy while it was open (the host's CPU "
            "time from /proc/stat less its own process's, those it started and ceiling's, / "
            "wall time), not its own process's " +
            fixed(*reg.busy_cores, 2) +
            ": above the 1-thread roof, its work can only have run there; at most the " +
            std::to_string(b.m.threads) + "-thread roof";
    d = diagnose_kernel(h.profile, b.m, h.t, b.judged_cores, evidence_of(h.profile, reg));
}

// The findings and moves that come before the table's: which roof, the cores it left idle,
// work done elsewhere, or threads that queued, took turns or left cores idle.
void put_first(const HostRange& h, const HostBasis& b, Diagnosis& d) {
    const RecordedRegion& reg = h.reg;
    // Whatever bounds it, the cores it left idle come first: balanced, the same work takes
    // that much less time (the table's move follows).
    if (!b.idle.empty()) {
        d.first_move = "keep the cores it held busy: " + b.idle +
                       " of their time idle inside it (balance the team's shares, parallelise "
                       "serial sections); then " +
                       d.first_move;
    }
    // First among the findings: they say which roof every fraction is of, and of what work.
    std::vector<Finding> first = {Finding{FindingKind::assumption, b.why}};
    if (b.side_by_side) first.push_back(*b.side_by_side);
    if (b.outside) {
        first.push_back(*b.outside);
        // Its own process is not where a lever acts: where the work runs comes first.
        d.first_move =
            "judge the work where it runs (its process did not do it while the range was "
            "open); then " +
            d.first_move;
    } else if (b.idle.empty()) {
        const auto cpus = within(h.limits, h.profile.host.logical_cpus > 0
                                               ? std::optional<double>(h.profile.host.logical_cpus)
                                               : std::nullopt);
        if (auto queued = queued_for_cpu(h.t, reg, cpus)) {
            first.push_back(queued->finding);
            d.first_move = queued->move + d.first_move;
        } else if (auto turns = took_turns(h.profile, h.t, reg, h.limits)) {
            first.push_back(turns->finding);
            d.first_move = turns->move + d.first_move;
        } else if (auto spare = idle_cores(h.profile, b.m, h.t, reg, d, h.limits)) {
            first.push_back(spare->finding);
            d.first_move = spare->move + d.first_move;
        }
    }
    d.findings.insert(d.findings.begin(), first.begin(), first.end());
}

// Other work measured competing with the region while it ran, in words: other processes'
// busy cores, or its threads queued for a CPU. What lets its unhindered instances speak for
// its code (typical_seconds).
std::optional<std::string> host_interference(const RecordedRegion& reg, const Thresholds& t) {
    if (reg.other_busy_cores && *reg.other_busy_cores >= competing_cores_min)
        return "other work kept " + fixed(*reg.other_busy_cores, 2) + " cores busy";
    if (reg.queued_threads && *reg.queued_threads >= t.queued_threads)
        return "its threads queued " + fixed(*reg.queued_threads, 2) + " for a CPU on average";
    return std::nullopt;
}

// A range on the host with known work against the roof of the cores it is judged at.
Diagnosis judge_host_range(const HostRange& h) {
    const RecordedRegion& reg = h.reg;
    const Thresholds& t = h.t;
    HostBasis b;
    b.m = reg.measurement;
    b.m.host_interference = host_interference(reg, t);
    sum_side_by_side(reg, b);
    choose_cores(h, b);
    Diagnosis d = diagnose_kernel(h.profile, b.m, t, b.judged_cores, evidence_of(h.profile, reg));
    if (b.idle.empty() && b.judged_cores) b.outside = work_outside(d, *b.judged_cores, reg);
    if (others_could_do_it(h, b, d)) judge_at_others_cores(h, b, d);
    if (!weigh_storage(h.profile, reg, d, t)) weigh_kernel_time(reg, d, t);
    // Above the roof of cores its process did keep busy: besides the causes any work has, a
    // range can end before the work it declares (a range around submitting to a pool whose
    // threads are busy with earlier submissions).
    if (!b.outside && d.verdict == Verdict::above_roof && reg.measurement.work) {
        d.findings.push_back(
            {FindingKind::assumption,
             "a range that ends before the work it declares also runs above the roof: work "
             "handed to a thread, a pool or a stream without waiting for it (end the range "
             "after the wait)"});
    }
    put_first(h, b, d);
    return d;
}

// Ranges beside it that were its work after all (a team whose members range their shares
// under another name while its own thread works too): without their cores it ran above
// the roof of those left, which it cannot have; judged with them.
std::optional<Diagnosis> judged_with_ranges_beside(const MachineProfile& machine,
                                                   const RecordedRegion& recorded, double beside,
                                                   const Thresholds& t, bool counted,
                                                   const CpuLimits& limits) {
    RecordedRegion whole = recorded;
    whole.beside_busy_cores.reset();
    if (auto alt = judge_region(machine, whole, t, counted, limits);
        alt && alt->verdict != Verdict::above_roof) {
        alt->findings.push_back(
            {FindingKind::assumption,
             "the ranges open beside it on its other threads (" + fixed(beside, 2) +
                 " cores) did its work: without their cores it ran above the roof of those "
                 "left, so it is judged with them"});
        return alt;
    }
    return std::nullopt;
}

}  // namespace

Evidence evidence_of(const MachineProfile& profile, const RecordedRegion& reg) {
    Evidence e;
    const bool torch = reg.labels.count(torch_role_label) > 0;
    e.library_op = torch;
    e.busy_cores = reg.busy_cores;
    if (reg.measurement.work) e.written_bytes = reg.measurement.work->written_bytes;
    if (reg.working_threads) e.threads = reg.working_threads;
    else if (reg.threads > 0) e.threads = reg.threads;
    e.accelerator = !profile.gpus.empty();
    if (torch) e.interpreted = true;
    // One op's typical time: an op's own, or a call's over the ops it ran.
    const Summary& d = reg.measurement.duration_s;
    if (d.count > 0 && reg.label(torch_role_label) == "op") e.op_s = d.median;
    for (const auto& c : reg.measurement.counters)
        if (d.count > 0 && c.name == ops_per_call_counter && c.value >= 1) e.op_s = d.median / c.value;
    return e;
}

// A range on the host (a kernel region, or work declared for the GPU, runs on the device).
bool on_host(const RecordedRegion& reg) {
    const Measurement& m = reg.measurement;
    return reg.kind == RegionKind::range &&
           !(m.work ? m.work->device == Device::gpu
                    : m.measured_kind && m.measured_kind->device == Device::gpu);
}

std::optional<Diagnosis> judge_region(const MachineProfile& machine, const RecordedRegion& recorded,
                                      const Thresholds& t, bool counted, const CpuLimits& limits) {
    const OwnShare own = without_ranges_beside(recorded);
    const RecordedRegion& reg = own.region;
    std::optional<MachineProfile> shared;
    if (limits.quota && *limits.quota < 1 - 1e-9) shared = time_share(machine, *limits.quota);
    const MachineProfile& profile = shared ? *shared : machine;
    const Measurement& given = reg.measurement;
    const bool known = given.work || given.measured_ops || given.measured_bytes;
    if (!known) {
        if (reg.kind != RegionKind::range) return std::nullopt;
        return judge_unknown_work(profile, reg, t, counted, limits);
    }
    if (given.duration_s.count == 0) return std::nullopt;
    if (!on_host(reg)) return diagnose_kernel(profile, given, t, std::nullopt, evidence_of(profile, reg));

    Diagnosis d = judge_host_range({profile, reg, t, limits, shared.has_value(), own.beside});
    if (reg.beside_busy_cores && d.verdict == Verdict::above_roof) {
        if (auto alt = judged_with_ranges_beside(machine, recorded, *reg.beside_busy_cores, t,
                                                 counted, limits))
            return alt;
    }
    return d;
}

}  // namespace ceiling::judge
