// What the system did while a region was open, beyond its declared work: storage near its
// roof, time in the kernel, and ceiling's own recording inside its timing (region_judging.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "agent/judge/region_judging.hpp"
#include "diagnosis/format.hpp"
#include "diagnosis/process_evidence.hpp"
#include "diagnosis/roofline.hpp"

namespace ceiling::judge {
namespace {

// Its program's threads blocked on storage while it was open and its own code (user time)
// left its cores idle: the table's I/O row decides it however little it moved (a range
// around 400 records each flushed with fdatasync, at 1 % of the storage write roof, read
// "latency bound: more bytes in flight").
bool weigh_storage_waits(const RecordedRegion& reg, Diagnosis& d, const Thresholds& t) {
    if (!reg.storage_wait_threads || !reg.busy_cores ||
        *reg.storage_wait_threads < t.storage_wait_threads)
        return false;
    // Its own code's cores (user time: its system time is mostly its I/O calls).
    const double busy = *reg.busy_cores + reg.descendant_busy_cores.value_or(0.0);
    const double user = std::max(0.0, busy - reg.system_busy_cores.value_or(0.0));
    const double used = std::max(1.0, reg.working_threads.value_or(1.0));
    if (!(user < t.cpu_utilisation * used)) return false;
    d.system.push_back({std::string(storage_wait_signal_name), *reg.storage_wait_threads,
                        t.storage_wait_threads, true,
                        "its program's threads were blocked on storage while it was open and its "
                        "own code (user time) left its cores idle"});
    d.findings.push_back(
        {FindingKind::assumption,
         fixed(*reg.storage_wait_threads, 2) +
             " of its program's threads were blocked on storage on average "
             "while it was open (flushes, file reads and writes, faults on "
             "mapped files: the scheduler's blocked time, by the system call "
             "each was seen waiting in), with " +
             fixed(busy, 2) + " cores busy (" + fixed(user, 2) +
             " in its own code): it waited on storage, whatever its declared bytes read against "
             "memory (a lower bound: the calls' own time in the kernel is not in it)"});
    conclude(d, t);
    return true;
}

}  // namespace

// Storage served the program near its roof while the region was open: the table's I/O row
// decides it, whatever its declared bytes read against memory (a range around reading a
// file, 8 MiB per instance at 10 % of the DRAM read roof, read "latency bound: dependency
// stalls ..." while storage ran at its roof). A signal and a finding with the numbers.
bool weigh_storage(const MachineProfile& profile, const RecordedRegion& reg, Diagnosis& d,
                   const Thresholds& t) {
    if (!profile.storage || (!reg.storage_read_bytes_per_s && !reg.storage_write_bytes_per_s))
        return weigh_storage_waits(reg, d, t);
    ProcessAccounting p;
    p.wall_s = 1;  // rates: the bytes of one second
    p.storage_read_bytes = reg.storage_read_bytes_per_s;
    p.storage_write_bytes = reg.storage_write_bytes_per_s;
    p.storage_read_roof_bytes_per_s = profile.storage->read_roof_bytes_per_s();
    p.storage_write_roof_bytes_per_s = profile.storage->write_roof_bytes_per_s();
    const auto share = storage_roof_share(p);
    if (!share || *share < t.near_roof) return weigh_storage_waits(reg, d, t);
    d.system.push_back({std::string(storage_signal_name), share, t.near_roof, true,
                        "storage read or written near the sequential storage roof while it "
                        "was open"});
    // Each way only where the sampler read it: an unread way is not a zero.
    std::string served;
    for (const auto& [bytes_per_s, way] : {std::pair{reg.storage_read_bytes_per_s, " read"},
                                           std::pair{reg.storage_write_bytes_per_s, " written"}})
        if (bytes_per_s) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.3g GB/s", *bytes_per_s / 1e9);
            served += (served.empty() ? "" : " and ") + std::string(buf) + way;
        }
    d.findings.push_back(
        {FindingKind::assumption,
         "storage served its program " + served +
             " while it was open (its process tree, the sampler's readings): " +
             std::to_string(static_cast<int>(std::lround(*share * 100))) +
             " % of the storage roof `ceiling machine` measured: it waited on storage, "
             "whatever its declared bytes read against memory"});
    conclude(d, t);
    return true;
}

// Much of its program's CPU time while it was open in the kernel (the run's
// system_time_share, asked of the region): system calls, copies, page faults, which its
// declared work does not describe and no roof of it shows. A range around reading a file
// from the page cache (a copy in the kernel) read "latency bound: dependency stalls ..." with
// 97 % of its time in system calls. Said; from kernel_time_share on the table's kernel row
// decides it (the kernel did more of its work than its own code), below that its move
// comes first.
void weigh_kernel_time(const RecordedRegion& reg, Diagnosis& d, const Thresholds& t) {
    if (!reg.system_busy_cores || !reg.busy_cores) return;
    const double busy = *reg.busy_cores + reg.descendant_busy_cores.value_or(0.0);
    if (busy < waited_below_cores) return;
    const double share = std::min(1.0, *reg.system_busy_cores / busy);
    if (share < t.system_time_share) return;
    const std::string percent = std::to_string(static_cast<int>(std::lround(share * 100))) + " %";
    d.findings.push_back(
        {FindingKind::assumption,
         "at least " + percent +
             " of its program's CPU time while it was open was in the kernel (system calls, "
             "copies, page faults; from the sampler's readings): time its declared work does "
             "not describe, and no roof of it shows"});
    if (share >= t.kernel_time_share) {
        d.system.push_back({std::string(kernel_signal_name), share, t.kernel_time_share, true,
                            "most of its program's CPU time while it was open in the kernel",
                            std::nullopt, std::nullopt});
        conclude(d, t);
        return;
    }
    d.first_move = "spend less time in the kernel (at least " + percent +
                   " of its CPU time: fewer and larger system calls, memory reused rather than "
                   "freed and faulted in again, mapped files rather than copying reads); then " +
                   d.first_move;
}

// Where a run's kernel time lay against its regions: a benchmark whose setup faulted in its
// arrays (60 % of its CPU time in the kernel, the triad it declared 23 % of the wall time)
// reads "not the model (kernel bound)", rightly for the process; this says that its regions
// held little of that time, so their own verdicts stand apart from it.
constexpr double outside_share_min = 0.75;

std::optional<Finding> kernel_time_outside_regions(const RunRecord& record,
                                                   std::optional<double> system_s) {
    if (!system_s || !(*system_s > 0) || !record.diagnosis || !record.diagnosis->bound ||
        record.diagnosis->diagnosis != kernel_bound_diagnosis)
        return std::nullopt;
    double inside = 0;
    bool any = false;
    for (const auto& reg : record.regions)
        if (reg.kind == RegionKind::range && reg.parent.empty() && reg.system_busy_cores) {
            inside += *reg.system_busy_cores * reg.open_s_per_execution();
            any = true;
        }
    if (!any) return std::nullopt;
    const double outside = std::max(0.0, 1.0 - inside / *system_s);
    if (outside < outside_share_min) return std::nullopt;
    std::string text = "its regions held at most " + duration(inside) + " of its " +
                       duration(*system_s) +
                       " a run in the kernel (their process's system time while they were "
                       "open): " +
                       percent(outside) + " of it lay outside them";
    if (!record.before_regions_s_per_execution.empty())
        text += " (the wall time before its first region, " +
                duration(mean(record.before_regions_s_per_execution)) +
                ", is where a program's setup faults in its data)";
    text += ": the kernel bound is the process's; its regions are judged on their own below";
    return Finding{FindingKind::assumption, text};
}

// The share of a range's median duration that ceiling's recording (about half of one
// range's cost lies between its two clock reads) from which it is said: 2 million ranges
// of 20 dependent FMAs timed 80 ns each, 34 of them ceiling's.
constexpr double recording_share_min = 0.10;

std::optional<Finding> recording_inside(const RunRecord& record, const RecordedRegion& reg) {
    if (reg.kind != RegionKind::range || reg.measurement.duration_s.count == 0) return std::nullopt;
    const auto cost = counter_peak(record, "nvtx_range_cost_s");
    const double median = reg.measurement.duration_s.median;
    if (!cost || !(*cost > 0) || !(median > 0)) return std::nullopt;
    const double inside = *cost / 2, share = inside / median;
    if (share < recording_share_min) return std::nullopt;
    auto ns = [](double s) { return g3(s * 1e9) + " ns"; };
    return Finding{FindingKind::unstable,
                   "ceiling's recording is inside its timing: about " + ns(inside) +
                       " of each range's " + ns(*cost) +
                       " cost (timed in the program) lies between its clock reads, " +
                       percent(std::min(1.0, share)) + " of its median instance (" + ns(median) +
                       "): ranges this short time ceiling too, and its rates read that much "
                       "low; a range around a batch of them (or fewer, longer ones) measures "
                       "the work"};
}

void weigh_tiny_ops(const RunRecord& record, const RecordedRegion& reg, Diagnosis& d,
                    const Thresholds& t) {
    if (d.bound != Bound::latency || reg.measurement.duration_s.count == 0) return;
    const CounterValue *ops = nullptr, *bare = nullptr;
    for (const auto& c : reg.measurement.counters)
        if (c.name == ops_per_call_counter)
            ops = &c;
        else if (c.name == "uninstrumented_call_s")
            bare = &c;
    if (!ops || !(ops->value >= 2)) return;
    // Its calls without the instrumentation where its model alternated them; else less what
    // ceiling's recording of each op's range cost inside it, where its ops were recorded.
    const double median = bare ? bare->value : reg.measurement.duration_s.median;
    const bool instrumented =
        !bare && std::any_of(record.regions.begin(), record.regions.end(),
                             [&](const RecordedRegion& r) { return r.parent == reg.path; });
    const double cost =
        instrumented ? counter_peak(record, "nvtx_range_cost_s").value_or(0.0) : 0.0;
    const double per_op = std::max(0.0, median / ops->value - cost);
    if (!(per_op < t.tiny_op_s)) return;
    auto us = [](double s) { return g3(s * 1e6) + " us"; };
    const std::string each = g3(ops->value) + " ops a call at " + us(per_op) + " each";
    d.findings.insert(
        d.findings.begin(),
        Finding{FindingKind::assumption,
                "tiny ops: " + each + " (its median call " + us(median) +
                    (bare ? " uninstrumented" : "") +
                    (cost > 0 ? ", less ceiling's " + us(cost) + " recording each op" : "") +
                    "), about what a framework spends on one op's fixed costs on a CPU "
                    "(dispatch, checks, allocating its output, the Python call): those, not its "
                    "arithmetic, are most of its time, which no roof shows"});
    d.first_move = "fewer, larger ops (" + each +
                   ": fuse them with torch.compile, TorchScript or a fused kernel, or give each "
                   "op more work: a larger batch costs little more per op); then " +
                   d.first_move;
}

std::optional<Finding> cut_short(const RecordedRegion& reg) {
    const auto timed = reg.measurement.duration_s.count;
    if (!reg.unclosed || reg.kind != RegionKind::range || timed == 0 || timed >= reg.instances)
        return std::nullopt;
    const auto left = reg.instances - timed;
    return Finding{
        FindingKind::assumption,
        std::to_string(left) + (left == 1 ? " instance" : " instances") +
            " still open when its process ended (killed, or an exit inside the "
            "range) left out of its timing: cut short, they did not do the work "
            "they declare; judged on its " +
            (timed == 1 ? std::string("closed one") : std::to_string(timed) + " closed ones")};
}

// How many times its footprint a level must hold to be taken as the one its data came from.
constexpr double footprint_room = 2.0;

std::optional<FootprintBound> footprint_bounded(const RunRecord& record,
                                                const RecordedRegion& reg) {
    const auto& w = reg.measurement.work;
    if (!record.machine_profile || reg.kind != RegionKind::range || !w ||
        w->device != Device::cpu || w->working_set_bytes > 0 || !(w->compulsory_bytes > 0))
        return std::nullopt;
    // Its own process idled while it was open: its work ran elsewhere (processes it started,
    // or ones ceiling did not), whose memory this bound may not cover.
    if (reg.busy_cores && *reg.busy_cores < waited_below_cores) return std::nullopt;
    // Its process's peak resident memory, where every execution's is exact (a lower bound
    // bounds nothing): the largest of those that recorded ranges, read at their exit (not for
    // a region cut short: its process may not have exited), else the sampler's largest
    // process's where it read often enough. And what system calls moved (a read() copies from
    // the page cache in DRAM into a buffer that may be small: its data then came from beyond
    // what it held).
    std::optional<double> resident, calls;
    bool at_exit = true;
    for (const Execution* e : record.timed_executions()) {
        std::optional<double> peak, sampled, moved;
        for (const auto& c : e->counters) {
            if (c.name == "peak_rss_at_exit_bytes" && !reg.unclosed) peak = c.value;
            if (c.name == "peak_rss_bytes" && !c.low_confidence) sampled = c.value;
            if (c.name == "read_call_bytes" || c.name == "write_call_bytes")
                moved = moved.value_or(0.0) + c.value;
        }
        at_exit = at_exit && peak;
        if (!peak) peak = sampled;
        if (!peak || !moved) return std::nullopt;
        resident = std::max(resident.value_or(0.0), *peak);
        calls = std::max(calls.value_or(0.0), *moved);
    }
    if (!resident || !(*resident > 0) || *calls > *resident) return std::nullopt;
    const int threads =
        static_cast<int>(std::ceil(std::max(1.0, reg.busy_cores.value_or(1.0)) - 1e-9));
    const Roofline r = make_roofline(*record.machine_profile, w->precision, w->engine, threads);
    // With room to spare: a cache streams partly from the level beyond it well before it is
    // full (and a VM's shared cache holds other tenants' lines too).
    const double room = footprint_room * *resident;
    const LevelRoof* level = r.level_for(room);
    if (!level || r.levels.empty() || level == &r.levels.back()) return std::nullopt;
    FootprintBound b{reg, {}};
    b.region.measurement.work->working_set_bytes = room;
    const auto& bw = level->bandwidth;
    b.finding = Finding{
        FindingKind::assumption,
        "working set not declared: at most " +
            (at_exit ? std::string("the peak resident memory of its processes that record "
                                   "ranges (read as each exited), ")
                     : std::string("its largest process's peak resident memory, ")) +
            bytes(*resident) + " (it cannot read more than it holds, and system calls moved only " +
            bytes(*calls) + "), which " + bw.level + " holds twice over (" +
            (bw.capacity_from == "plateau" ? "its measured plateau reaches " : "its capacity is ") +
            bytes(bw.capacity_bytes.value_or(0)) + "): compared with " + bw.level + ", not " +
            r.levels.back().bandwidth.level +
            "; declare working_set= where its data is smaller still"};
    return b;
}

}  // namespace ceiling::judge
