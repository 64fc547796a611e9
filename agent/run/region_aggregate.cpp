// Region instances of the timed executions -> the record's RecordedRegions (region.hpp).
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "agent/run/region.hpp"

namespace ceiling::measure {

namespace {

// Wall time of one execution in no model region, split among the regions that held it: at
// each instant the innermost open push/pop range of every thread (and domain) and every open
// start/end range share it equally. Instants inside a model region (on any thread) are the
// model's, instants in no region are nobody's, so these shares, the model's time and the
// time outside every region add up to the wall time, however regions nest or overlap.
std::vector<double> non_model_split(const NvtxCapture& c, const std::vector<std::size_t>& region_of,
                                    const std::vector<bool>& model, std::size_t regions) {
    struct Boundary {
        std::int64_t t;
        bool start;
        std::size_t instance;
    };
    std::vector<Boundary> bounds;
    bounds.reserve(2 * c.instances.size());
    for (std::size_t i = 0; i < c.instances.size(); ++i) {
        bounds.push_back({c.instances[i].start_ns, true, i});
        bounds.push_back({c.instances[i].end_ns, false, i});
    }
    // Starts first at one instant, so a zero-length instance opens before it closes.
    std::sort(bounds.begin(), bounds.end(), [](const Boundary& a, const Boundary& b) {
        return a.t != b.t ? a.t < b.t : a.start > b.start;
    });
    std::map<std::tuple<int, int, std::string>, std::size_t> lane_of;
    std::vector<std::vector<std::size_t>> lanes;  // open push/pop instances, outermost first
    std::set<std::size_t> open_lanes, open_free;  // lanes with an open range; start/end ranges
    std::vector<std::size_t> lane_index(c.instances.size(), 0);
    for (std::size_t i = 0; i < c.instances.size(); ++i) {
        const auto& r = c.instances[i];
        if (!r.push_pop) continue;
        const auto [it, inserted] = lane_of.try_emplace({r.pid, r.tid, r.domain}, lanes.size());
        if (inserted) lanes.emplace_back();
        lane_index[i] = it->second;
    }
    std::vector<double> split(regions, 0.0);
    std::size_t open_model = 0;
    std::int64_t previous = bounds.empty() ? 0 : bounds.front().t;
    for (const auto& b : bounds) {
        const auto held = open_lanes.size() + open_free.size();
        if (b.t > previous && open_model == 0 && held > 0) {
            const double share =
                static_cast<double>(b.t - previous) * 1e-9 / static_cast<double>(held);
            for (const std::size_t l : open_lanes) split[region_of[lanes[l].back()]] += share;
            for (const std::size_t i : open_free) split[region_of[i]] += share;
        }
        previous = b.t;
        const auto& r = c.instances[b.instance];
        if (model[b.instance]) b.start ? ++open_model : --open_model;
        if (!r.push_pop) {
            b.start ? (void)open_free.insert(b.instance) : (void)open_free.erase(b.instance);
            continue;
        }
        auto& lane = lanes[lane_index[b.instance]];
        if (b.start) {
            lane.push_back(b.instance);
            open_lanes.insert(lane_index[b.instance]);
        } else {
            // Ranges of a lane nest, but one ending at the same instant as its parent may
            // come second: remove this very instance.
            const auto it = std::find(lane.rbegin(), lane.rend(), b.instance);
            if (it != lane.rend()) lane.erase(std::next(it).base());
            if (lane.empty()) open_lanes.erase(lane_index[b.instance]);
        }
    }
    return split;
}

using Spans = std::vector<std::pair<std::int64_t, std::int64_t>>;
double span_sum_s(const Spans& spans) {
    double s = 0;
    for (const auto& [start, end] : spans) s += static_cast<double>(end - start) * 1e-9;
    return s;
}
// Length of the union of the intervals (sorted here by start: the union needs no more).
// One thread's instances arrive in start order already, and sorting 200 000 of them again
// was a fifth of reading a capture.
double union_length_s(Spans& spans) {
    const auto by_start = [](const auto& a, const auto& b) { return a.first < b.first; };
    if (!std::is_sorted(spans.begin(), spans.end(), by_start))
        std::sort(spans.begin(), spans.end(), by_start);
    double total = 0;
    std::int64_t open = 0, close = 0;
    bool any = false;
    for (const auto& [start, end] : spans) {
        if (any && start <= close) {
            close = std::max(close, end);
            continue;
        }
        if (any) total += static_cast<double>(close - open) * 1e-9;
        open = start;
        close = end;
        any = true;
    }
    if (any) total += static_cast<double>(close - open) * 1e-9;
    return total;
}

// Work counted over every instance, or nothing: a partial sum would understate the work.
struct CountSum {
    double value = 0, error = 0;
    std::size_t n = 0;
    bool low_confidence = false;
    void add(const std::optional<CountedAmount>& a) {
        if (!a) return;
        value += a->value;
        error += a->error;
        low_confidence = low_confidence || a->low_confidence;
        ++n;
    }
};

// A count attributed by interpolation is believed only while its bound is small beside it.
constexpr double attribution_error_trusted = 0.10;

void add_counted(Measurement& m, const CountSum& s, std::size_t instances, const char* name,
                 const char* unit, std::optional<double>& per_instance,
                 std::optional<Source>& source) {
    if (instances == 0 || s.n != instances) return;
    per_instance = s.value / static_cast<double>(instances);
    source = Source::pmu;
    CounterValue c;
    c.name = name;
    c.value = s.value;
    c.unit = unit;
    c.source = Source::pmu;
    c.low_confidence = s.low_confidence || s.error > attribution_error_trusted * s.value;
    m.counters.push_back(c);
    c.name = std::string(name) + "_error";  // the attribution's bound, as counted
    c.value = s.error;
    m.counters.push_back(c);
}

}  // namespace

// An instance longer than this many times its region's median duration is an outlier its
// busy cores leave out (where the region is judged at the median), among at least this many.
constexpr double outlier_ratio = 2.0;
constexpr std::size_t min_instances_for_outliers = 4;

namespace {

// One region's sums over its instances in every execution, turned into its RecordedRegion
// once every execution is added.
struct RegionAcc {
    RecordedRegion region;
    Interned path;  // region.path, compared by address
    std::size_t index = 0;
    std::vector<double> durations;
    // Instances still open when their process ended (killed, or exit inside a range):
    // cut short, so timed only where no instance closed.
    std::vector<double> cut;
    std::set<std::pair<int, int>> threads;
    std::set<int> processes;
    double self_s = 0;
    bool any_push_pop = false;
    double ops = 0, bytes = 0, working_set = 0;
    std::size_t with_work = 0;
    std::optional<Work> first_work;
    std::int64_t first_start = 0;
    std::size_t first_execution = 0;
    double cpu_s = 0, cpu_error_s = 0, cpu_wall_s = 0, descendant_cpu_s = 0,
           descendant_error_s = 0;
    double other_cpu_s = 0, other_wall_s = 0;  // over the instances the sampler covered
    std::size_t with_cpu = 0;
    double peak_busy_s = 0, peak_wall_s = 0, wall_s = 0;  // peak busy cores x time, its time
    double working_s = 0, working_wall_s = 0;             // working threads x time, its time
    double beside_cpu_s = 0, t_beside_cpu_s = 0;          // other threads' ranges beside it
    bool any_beside = false;
    double unranged_cpu_s = 0, t_unranged_cpu_s = 0;  // threads that record no ranges
    bool any_unranged = false;
    // Storage traffic over the instances the sampler covered, and their time.
    double read_bytes = 0, read_wall_s = 0, write_bytes = 0, write_wall_s = 0;
    double system_cpu_s = 0, system_wall_s = 0;  // its process tree's in the kernel
    double storage_wait_s = 0, storage_wait_wall_s = 0;  // its threads blocked on storage
    double queued_s = 0, queued_wall_s = 0;  // its process's threads queued for a CPU
    // The same sums over its typical instances (busy_cores_outliers): those within
    // `outlier_ratio` x the median duration.
    double typical_limit_s = 0;
    std::size_t outliers = 0;
    double t_cpu_s = 0, t_cpu_error_s = 0, t_cpu_wall_s = 0, t_descendant_cpu_s = 0,
           t_descendant_error_s = 0;
    double t_other_cpu_s = 0, t_other_wall_s = 0, t_peak_busy_s = 0, t_peak_wall_s = 0,
           t_wall_s = 0;
    // Each typical instance's with CPU time: its process's, that less what other threads'
    // ranges beside it used, that less what threads recording no ranges used; its time.
    std::vector<double> t_cpu_each, t_unbeside_each, t_ranged_each, t_wall_each;
    CountSum counted_ops, counted_bytes;
    WorkRange declared_range, counted_range;  // per instance (Measurement::work_spread)
    double non_model_s = 0;
    // This execution's instance intervals by process, and over all executions their
    // summed time and the summed length of their union (RecordedRegion::concurrency).
    std::map<int, std::vector<std::pair<std::int64_t, std::int64_t>>> spans;
    double instance_s = 0, union_s = 0;
    bool model = false;                   // the path matches --model-regions (asked once)
    std::pair<int, int> last_thread{-1, -1};  // the set is not searched again for a run of one thread
};

// Every region's accumulator, by path and by index (the order regions were first seen).
struct Accumulators {
    const std::optional<std::regex>& model;
    std::size_t executions = 0;
    std::map<std::string, RegionAcc> by_path{};
    std::vector<RegionAcc*> by_index{};
};

// The accumulator of an instance's path in execution `x`, made on the path's first instance;
// `last` is the one the previous instance went to.
RegionAcc& accumulator_for(Accumulators& accs, RegionAcc*& last, const RegionInstance& r,
                           std::size_t x) {
    bool inserted = false;
    if (!last || last->path != r.path) {
        auto [it, added] = accs.by_path.try_emplace(r.path);
        last = &it->second;
        inserted = added;
    }
    RegionAcc& a = *last;
    if (inserted) {
        a.index = accs.by_index.size();
        accs.by_index.push_back(&a);
        a.region.kind = RegionKind::range;
        a.path = r.path;
        a.region.path = r.path;
        a.region.name = r.name;
        a.region.parent = r.parent;
        a.region.domain = r.domain;
        a.region.total_s_per_execution.assign(accs.executions, 0.0);
        a.first_start = r.start_ns;
        a.first_execution = x;
        a.model = accs.model && is_model_region(*accs.model, r.name, r.path);
    }
    return a;
}

// What the sampler and the CPU-time reads attributed to an instance of duration `d`, each
// summed with the time of the instances it covered.
void add_attributed(RegionAcc& a, const RegionInstance& r, double d) {
    if (r.peak_busy_cores) {
        a.peak_busy_s += *r.peak_busy_cores * d;
        a.peak_wall_s += d;
    }
    if (r.working_threads) {
        a.working_s += *r.working_threads * d;
        a.working_wall_s += d;
    }
    if (r.cpu_s) {
        a.beside_cpu_s += r.beside_cpu_s.value_or(0.0);
        a.any_beside = a.any_beside || r.beside_cpu_s;
        a.unranged_cpu_s += r.unranged_cpu_s.value_or(0.0);
        a.any_unranged = a.any_unranged || r.unranged_cpu_s;
        a.descendant_cpu_s += r.descendant_cpu_s.value_or(0.0);
        a.descendant_error_s += r.descendant_cpu_error_s;
        a.cpu_s += *r.cpu_s;
        a.cpu_error_s += r.cpu_error_s;
        a.cpu_wall_s += d;
        ++a.with_cpu;
    }
    if (r.other_cpu_s) {
        a.other_cpu_s += *r.other_cpu_s;
        a.other_wall_s += d;
    }
    if (r.storage_read_bytes) {
        a.read_bytes += *r.storage_read_bytes;
        a.read_wall_s += d;
    }
    if (r.storage_write_bytes) {
        a.write_bytes += *r.storage_write_bytes;
        a.write_wall_s += d;
    }
    if (r.system_cpu_s) {
        a.system_cpu_s += *r.system_cpu_s;
        a.system_wall_s += d;
    }
    if (r.storage_wait_s) {
        a.storage_wait_s += *r.storage_wait_s;
        a.storage_wait_wall_s += d;
    }
    if (r.queued_s) {
        a.queued_s += *r.queued_s;
        a.queued_wall_s += d;
    }
}

// One instance of execution `x` into its region's sums, with what the PMU counted in it.
void add_instance(RegionAcc& a, const RegionInstance& r, const InstanceCounts& counted,
                  std::size_t x) {
    const double d = static_cast<double>(r.end_ns - r.start_ns) * 1e-9;
    (r.unclosed ? a.cut : a.durations).push_back(d);
    a.spans[r.pid].emplace_back(r.start_ns, r.end_ns);
    a.region.total_s_per_execution[x] += d;
    a.region.instances += 1;
    a.region.unclosed = a.region.unclosed || r.unclosed;
    if (a.last_thread != std::pair{r.pid, r.tid}) {
        a.last_thread = {r.pid, r.tid};
        a.threads.insert(a.last_thread);
        a.processes.insert(r.pid);
    }
    if (r.push_pop) {
        a.any_push_pop = true;
        a.self_s += d - static_cast<double>(r.child_ns) * 1e-9;
    }
    // An instance cut short (its process ended inside it) did not do the work it declares:
    // that work over its time would read as a rate beyond any roof.
    if (r.work && !r.unclosed) {
        a.ops += r.work->ops;
        a.bytes += r.work->compulsory_bytes;
        a.working_set = std::max(a.working_set, r.work->working_set_bytes);
        if (!a.first_work) a.first_work = r.work;
        ++a.with_work;
        a.declared_range.add(r.work->ops, r.work->compulsory_bytes);
    }
    a.counted_range.add(counted.ops ? counted.ops->value : 0.0,
                        counted.bytes ? counted.bytes->value : 0.0);
    a.wall_s += d;
    add_attributed(a, r, d);
    a.counted_ops.add(counted.ops);
    a.counted_bytes.add(counted.bytes);
}

// This execution's instance intervals, per process, into the summed time and the summed
// length of their union; then cleared for the next execution.
void fold_execution_spans(const std::vector<RegionAcc*>& by_index) {
    for (RegionAcc* a : by_index) {
        for (auto& [pid, spans] : a->spans) {
            a->instance_s += span_sum_s(spans);
            a->union_s += union_length_s(spans);
        }
        a->spans.clear();
    }
}

// Execution `x`'s instances into their regions' sums.
void accumulate_execution(Accumulators& accs, const NvtxCapture& c, std::size_t x) {
    std::vector<std::size_t> region_of(c.instances.size());
    std::vector<bool> is_model(c.instances.size(), false);
    // Instances come by thread and start: runs of one path are common (a loop of ranges),
    // so the last path's accumulator is tried before the map.
    RegionAcc* last = nullptr;
    const InstanceCounts uncounted;
    const bool counted = c.counts.size() == c.instances.size();
    for (std::size_t i = 0; i < c.instances.size(); ++i) {
        const auto& r = c.instances[i];
        RegionAcc& a = accumulator_for(accs, last, r, x);
        region_of[i] = a.index;
        is_model[i] = a.model;
        add_instance(a, r, counted ? c.counts[i] : uncounted, x);
    }
    fold_execution_spans(accs.by_index);
    if (accs.model) {
        const auto split = non_model_split(c, region_of, is_model, accs.by_index.size());
        for (std::size_t k = 0; k < split.size(); ++k) accs.by_index[k]->non_model_s += split[k];
    }
}

// The durations a region is judged by, and the longest of them that is typical (0: outliers
// are not set apart).
void set_typical_limits(const std::vector<RegionAcc*>& by_index) {
    for (RegionAcc* a : by_index)
        if (a->durations.empty()) a->durations = std::move(a->cut);
    for (RegionAcc* a : by_index)
        if (a->with_cpu >= min_instances_for_outliers && !a->durations.empty())
            a->typical_limit_s = outlier_ratio * median(a->durations);
}

// The second pass: an instance into its region's typical sums, or counted as an outlier.
void add_typical_instance(RegionAcc& a, const RegionInstance& r) {
    if (!(a.typical_limit_s > 0)) return;
    const double d = static_cast<double>(r.end_ns - r.start_ns) * 1e-9;
    if (d > a.typical_limit_s) {
        a.outliers += r.cpu_s ? 1 : 0;
        return;
    }
    a.t_wall_s += d;
    if (r.peak_busy_cores) {
        a.t_peak_busy_s += *r.peak_busy_cores * d;
        a.t_peak_wall_s += d;
    }
    if (r.cpu_s) {
        a.t_cpu_each.push_back(*r.cpu_s);
        a.t_unbeside_each.push_back(*r.cpu_s - r.beside_cpu_s.value_or(0.0));
        a.t_ranged_each.push_back(*r.cpu_s - r.unranged_cpu_s.value_or(0.0));
        a.t_wall_each.push_back(d);
        a.t_beside_cpu_s += r.beside_cpu_s.value_or(0.0);
        a.t_unranged_cpu_s += r.unranged_cpu_s.value_or(0.0);
        a.t_cpu_s += *r.cpu_s;
        a.t_cpu_error_s += r.cpu_error_s;
        a.t_descendant_cpu_s += r.descendant_cpu_s.value_or(0.0);
        a.t_descendant_error_s += r.descendant_cpu_error_s;
        a.t_cpu_wall_s += d;
    }
    if (r.other_cpu_s) {
        a.t_other_cpu_s += *r.other_cpu_s;
        a.t_other_wall_s += d;
    }
}

// The regions in the order the record lists them.
std::vector<RegionAcc*> depth_first_order(const Accumulators& accs) {
    std::vector<RegionAcc*> order = accs.by_index;
    // Timeline order: the region that started first comes first, an enclosing region before
    // what it encloses.
    std::sort(order.begin(), order.end(), [](const RegionAcc* a, const RegionAcc* b) {
        if (a->first_execution != b->first_execution)
            return a->first_execution < b->first_execution;
        if (a->first_start != b->first_start) return a->first_start < b->first_start;
        return a->region.path.size() < b->region.path.size();
    });
    // Then depth first, so that a table indented by depth shows each region under its own
    // parent: children right after their parent, in timeline order among themselves.
    std::map<std::string, std::vector<RegionAcc*>> children;
    std::vector<RegionAcc*> roots;
    for (RegionAcc* a : order) {
        if (!a->region.parent.empty() && accs.by_path.count(a->region.parent))
            children[a->region.parent].push_back(a);
        else
            roots.push_back(a);
    }
    std::vector<RegionAcc*> tree;
    std::vector<RegionAcc*> pending(roots.rbegin(), roots.rend());
    while (!pending.empty()) {
        RegionAcc* a = pending.back();
        pending.pop_back();
        tree.push_back(a);
        const auto it = children.find(a->region.path);
        if (it != children.end())
            pending.insert(pending.end(), it->second.rbegin(), it->second.rend());
    }
    return tree;
}

// Busy cores, storage rates, threads and concurrency over all its instances, each over the
// time of those it was measured for.
void set_rates(RecordedRegion& r, const RegionAcc& a) {
    if (a.with_cpu > 0 && a.cpu_wall_s > 0) {
        r.busy_cores = a.cpu_s / a.cpu_wall_s;
        r.busy_cores_error = a.cpu_error_s / a.cpu_wall_s;
        if (a.descendant_cpu_s > 0) {
            r.descendant_busy_cores = a.descendant_cpu_s / a.cpu_wall_s;
            r.descendant_busy_cores_error = a.descendant_error_s / a.cpu_wall_s;
        }
        if (a.any_beside) r.beside_busy_cores = a.beside_cpu_s / a.cpu_wall_s;
        if (a.any_unranged) r.unranged_busy_cores = a.unranged_cpu_s / a.cpu_wall_s;
    }
    if (a.other_wall_s > 0) r.other_busy_cores = a.other_cpu_s / a.other_wall_s;
    if (a.read_wall_s > 0) r.storage_read_bytes_per_s = a.read_bytes / a.read_wall_s;
    if (a.write_wall_s > 0) r.storage_write_bytes_per_s = a.write_bytes / a.write_wall_s;
    if (a.system_wall_s > 0) r.system_busy_cores = a.system_cpu_s / a.system_wall_s;
    if (a.storage_wait_wall_s > 0)
        r.storage_wait_threads = a.storage_wait_s / a.storage_wait_wall_s;
    if (a.queued_wall_s > 0) r.queued_threads = a.queued_s / a.queued_wall_s;
    if (a.union_s > 0) r.concurrency = a.instance_s / a.union_s;
    if (a.working_wall_s > 0) r.working_threads = a.working_s / a.working_wall_s;
    // Over the instances the looks covered, weighted by their time, once they cover half
    // of the region's.
    if (a.peak_wall_s > 0 && a.peak_wall_s >= 0.5 * a.wall_s)
        r.peak_busy_cores = a.peak_busy_s / a.peak_wall_s;
}

// The declared work per instance, the counted work, and the spread of the one judged.
void set_work(RecordedRegion& r, const RegionAcc& a) {
    if (a.with_work > 0) {
        // Work per instance: the mean when instances declared different amounts, so
        // that work x instances is the total work.
        Work w = *a.first_work;
        const auto k = static_cast<double>(a.with_work);
        w.ops = a.ops / k;
        w.compulsory_bytes = a.bytes / k;
        w.working_set_bytes = a.working_set;
        r.measurement.work = w;
    }
    add_counted(r.measurement, a.counted_ops, r.instances, "fp_ops", "flop",
                r.measurement.measured_ops, r.measurement.measured_ops_source);
    add_counted(r.measurement, a.counted_bytes, r.instances, "dram_bytes", "bytes",
                r.measurement.measured_bytes, r.measurement.measured_bytes_source);
    // The spread of the work diagnose judges: the declared, else the counted.
    r.measurement.work_spread = r.measurement.work ? a.declared_range.spread()
                                : r.measurement.measured_ops || r.measurement.measured_bytes
                                    ? a.counted_range.spread()
                                    : std::nullopt;
}

// Judged at the median duration: busy cores of the instances it stands for.
void set_typical_busy_cores(RecordedRegion& r, const RegionAcc& a) {
    if (a.outliers > 0 && a.t_cpu_wall_s > 0 && !instances_differ_in_size(r.measurement)) {
        r.busy_cores_outliers = static_cast<int>(a.outliers);
        r.busy_cores = a.t_cpu_s / a.t_cpu_wall_s;
        r.busy_cores_error = a.t_cpu_error_s / a.t_cpu_wall_s;
        r.descendant_busy_cores.reset();
        r.descendant_busy_cores_error.reset();
        if (a.t_descendant_cpu_s > 0) {
            r.descendant_busy_cores = a.t_descendant_cpu_s / a.t_cpu_wall_s;
            r.descendant_busy_cores_error = a.t_descendant_error_s / a.t_cpu_wall_s;
        }
        if (a.any_beside) r.beside_busy_cores = a.t_beside_cpu_s / a.t_cpu_wall_s;
        if (a.any_unranged) r.unranged_busy_cores = a.t_unranged_cpu_s / a.t_cpu_wall_s;
        r.other_busy_cores.reset();
        if (a.t_other_wall_s > 0) r.other_busy_cores = a.t_other_cpu_s / a.t_other_wall_s;
        r.peak_busy_cores.reset();
        if (a.t_peak_wall_s > 0 && a.t_peak_wall_s >= 0.5 * a.t_wall_s)
            r.peak_busy_cores = a.t_peak_busy_s / a.t_peak_wall_s;
    }
}

// Its rate is judged at the median duration, so its busy cores are the median
// instance's: the median CPU time over the median duration. Summed over instances,
// those slowed by a preempted thread (fewer cores, longer) weighed in by their time
// and lowered the roof below the one the median instance ran at: two OpenMP threads
// at the FMA roof in 3 ms steps on a shared 2-CPU VM read 1.72 cores, 111 %, "above
// the roof". (Per core-second of CPU time the fraction no longer depends on which
// durations are typical.)
void set_median_busy_cores(RecordedRegion& r, const RegionAcc& a) {
    if (!instances_differ_in_size(r.measurement) &&
        a.t_cpu_each.size() >= min_instances_for_outliers) {
        // The parts of it likewise (busy cores less the median of what is left without
        // them), so that what is left is the median instance's too: a stage's own thread
        // never more than the core it has.
        const double wall = median(a.t_wall_each);
        if (wall > 0) {
            const double busy = median(a.t_cpu_each) / wall;
            r.busy_cores = busy;
            if (a.any_beside)
                r.beside_busy_cores =
                    std::max(0.0, busy - median(a.t_unbeside_each) / wall);
            if (a.any_unranged)
                r.unranged_busy_cores =
                    std::max(0.0, busy - median(a.t_ranged_each) / wall);
        }
    }
}

// A region's sums into its RecordedRegion (moved out of the accumulator).
RecordedRegion recorded_region(RegionAcc& a, const Accumulators& accs,
                               std::size_t durations_limit) {
    const std::size_t n = accs.executions;
    const auto& model = accs.model;
    RecordedRegion r = std::move(a.region);
    r.threads = static_cast<int>(a.threads.size());
    r.processes = static_cast<int>(a.processes.size());
    r.model = model && is_model_region(*model, r.name, r.path);
    if (a.any_push_pop && n > 0) r.self_s = a.self_s / static_cast<double>(n);
    if (model && n > 0) r.non_model_s = a.non_model_s / static_cast<double>(n);
    set_rates(r, a);
    r.measurement.name = r.path;
    r.measurement.threads = r.threads;
    set_work(r, a);
    set_typical_busy_cores(r, a);
    set_median_busy_cores(r, a);
    if (!a.durations.empty()) r.measurement.duration_s = summarize(a.durations);
    r.durations_subsampled = a.durations.size() > durations_limit;
    r.measurement.durations_s = subsample(a.durations, durations_limit);
    return r;
}

}  // namespace

std::vector<RecordedRegion> aggregate_regions(const std::vector<const NvtxCapture*>& executions,
                                              const std::optional<std::regex>& model,
                                              std::size_t durations_limit) {
    Accumulators accs{.model = model, .executions = executions.size()};
    for (std::size_t x = 0; x < accs.executions; ++x) accumulate_execution(accs, *executions[x], x);
    // Instances of one size are judged at their median duration, which leaves a slow one out
    // (a cold start paging in mmap'ed weights: 1.05 s against 0.23 s); their busy cores then
    // leave it out too, or its idle wait reads as cores the others held and left idle. A
    // second pass sums the instances within `outlier_ratio` x the median.
    set_typical_limits(accs.by_index);
    for (std::size_t x = 0; x < accs.executions; ++x) {
        RegionAcc* last = nullptr;  // runs of one path: the map is not searched again
        for (const auto& r : executions[x]->instances) {
            if (!last || last->path != r.path) last = &accs.by_path.find(r.path)->second;
            add_typical_instance(*last, r);
        }
    }
    std::vector<RecordedRegion> out;
    for (RegionAcc* a : depth_first_order(accs))
        out.push_back(recorded_region(*a, accs, durations_limit));
    return out;
}

}  // namespace ceiling::measure
