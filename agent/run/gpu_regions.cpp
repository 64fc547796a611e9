#include "agent/run/gpu_regions.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace ceiling::measure {
namespace {

constexpr std::string_view operation_names[] = {"kernel", "copy", "memset"};

struct Acc {
    RecordedRegion region;
    std::uint32_t device = 0;
    std::vector<double> durations;
    std::set<std::pair<int, int>> threads;
    std::set<int> processes;
    double bytes = 0;
    double ops = 0, work_bytes = 0, working_set = 0;
    std::size_t with_work = 0;
    std::optional<Work> first_work;
    WorkRange declared_range;  // per kernel (Measurement::work_spread)
    std::size_t first_execution = 0;
    std::int64_t first_start = 0;
};

// Counted work of one region's kernels in the counting execution.
struct Counted {
    double ops = 0, bytes = 0;
    std::size_t with_ops = 0, with_bytes = 0, kernels = 0;
    std::optional<KernelCount> first;
    bool mixed = false;  // kernels of one region counted as different kinds
    WorkRange range;     // per kernel
};

using Key = std::tuple<std::string, GpuOpKind, std::string, std::uint32_t>;

// Launching range, operation, name, device.
Key key_of(const GpuOperation& op, const NvtxCapture& capture) {
    return {op.range ? capture.instances[*op.range].path.str() : std::string(), op.kind, op.name,
            op.device};
}

class Notes {
  public:
    void add(std::string note) {
        if (std::find(list.begin(), list.end(), note) == list.end())
            list.push_back(std::move(note));
    }
    std::vector<std::string> list;
};

// Counted work per region key, from the execution the GPU counters counted.
std::map<Key, Counted> count_by_key(const GpuExecution& counting) {
    std::map<Key, Counted> counted;
    for (const auto& op : *counting.ops) {
        if (!op.counted) continue;
        Counted& c = counted[key_of(op, *counting.capture)];
        ++c.kernels;
        if (op.counted->ops) {
            c.ops += *op.counted->ops;
            ++c.with_ops;
        }
        if (op.counted->dram_bytes) {
            c.bytes += *op.counted->dram_bytes;
            ++c.with_bytes;
        }
        c.range.add(op.counted->ops.value_or(0.0), op.counted->dram_bytes.value_or(0.0));
        if (!c.first) c.first = op.counted;
        c.mixed = c.mixed || op.counted->precision != c.first->precision ||
                  op.counted->engine != c.first->engine;
    }
    return counted;
}

// The timed executions' operations gathered per key, and the notes gathering them raised.
struct Accumulation {
    std::map<Key, Acc> by_key;
    Notes notes;
    std::size_t executions = 0;
};

// A region's name, place, labels and first sighting, from its first operation.
void start_region(Acc& a, const GpuOperation& op, const std::string& parent, std::size_t x,
                  std::size_t n) {
    a.region.kind = RegionKind::kernel;
    a.region.name = op.name;
    a.region.parent = parent;
    a.region.path = parent.empty() ? op.name : parent + "/" + op.name;
    a.region.total_s_per_execution.assign(n, 0.0);
    a.region.labels = {{"device", "gpu" + std::to_string(op.device)},
                       {"operation", std::string(operation_names[static_cast<int>(op.kind)])}};
    a.device = op.device;
    a.first_execution = x;
    a.first_start = op.start_ns;
}

// The launching range's declared work given to the one kernel it launched, or a note why not.
void add_declared_work(Acc& a, const RegionInstance& range, int launched, Notes& notes) {
    if (range.work->device != Device::gpu) {
        notes.add("range '" + range.path.str() +
                  "' declares CPU work but launched GPU kernels: add device=gpu to its "
                  "declaration to judge them against the GPU roofs");
    } else if (launched != 1) {
        notes.add("range '" + range.path.str() + "' declares GPU work but an instance launched " +
                  std::to_string(launched) +
                  " kernels: the work cannot be split between them, so they are not "
                  "judged (declare it on a range around each kernel)");
    } else {
        a.ops += range.work->ops;
        a.work_bytes += range.work->compulsory_bytes;
        a.working_set = std::max(a.working_set, range.work->working_set_bytes);
        if (!a.first_work) a.first_work = range.work;
        ++a.with_work;
        a.declared_range.add(range.work->ops, range.work->compulsory_bytes);
    }
}

// Execution x's operations added to their regions.
void accumulate_execution(Accumulation& acc, const GpuExecution& execution, std::size_t x) {
    const auto& ops = *execution.ops;
    const auto& capture = *execution.capture;
    // Kernels each range instance launched: its declared work belongs to a kernel only
    // when it launched exactly one.
    std::map<std::size_t, int> kernels_in;
    for (const auto& op : ops)
        if (op.kind == GpuOpKind::kernel && op.range) ++kernels_in[*op.range];
    for (const auto& op : ops) {
        const RegionInstance* range = op.range ? &capture.instances[*op.range] : nullptr;
        const std::string parent = range ? range->path.str() : std::string();
        auto [it, inserted] = acc.by_key.try_emplace(key_of(op, capture));
        Acc& a = it->second;
        if (inserted) start_region(a, op, parent, x, acc.executions);
        const double d = static_cast<double>(op.end_ns - op.start_ns) * 1e-9;
        a.durations.push_back(d);
        a.region.total_s_per_execution[x] += d;
        a.region.instances += 1;
        a.processes.insert(op.pid);
        if (op.launched_by) a.threads.insert(*op.launched_by);
        a.bytes += static_cast<double>(op.bytes);
        if (op.kind != GpuOpKind::kernel || !range || !range->work) continue;
        add_declared_work(a, *range, kernels_in[*op.range], acc.notes);
    }
}

// The regions in the order their first operation ran (execution, then start time).
std::vector<std::pair<const Key*, Acc*>> in_order_seen(std::map<Key, Acc>& by_key) {
    std::vector<std::pair<const Key*, Acc*>> order;
    for (auto& [key, a] : by_key) order.emplace_back(&key, &a);
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
        return std::tie(a.second->first_execution, a.second->first_start) <
               std::tie(b.second->first_execution, b.second->first_start);
    });
    return order;
}

// Per instance: the mean of the declared work of every instance.
void give_declared_work(RecordedRegion& r, const Acc& a) {
    Work w = *a.first_work;
    const auto k = static_cast<double>(a.with_work);
    w.ops = a.ops / k;
    w.compulsory_bytes = a.work_bytes / k;
    w.working_set_bytes = a.working_set;
    r.measurement.work = w;
    r.measurement.work_spread = a.declared_range.spread();
}

// Counted in the counting execution: every kernel counted alike, or no verdict.
void give_counted_work(RecordedRegion& r, const Counted& counts, Notes& notes) {
    if (counts.mixed) {
        notes.add("kernels of '" + r.path +
                  "' were counted as different kinds of work (precision or engine): "
                  "not judged from their counts");
        return;
    }
    if (counts.with_ops == counts.kernels)
        r.measurement.measured_ops = counts.ops / static_cast<double>(counts.with_ops);
    if (counts.with_bytes == counts.kernels)
        r.measurement.measured_bytes = counts.bytes / static_cast<double>(counts.with_bytes);
    if (r.measurement.measured_ops) r.measurement.measured_ops_source = Source::cupti;
    if (r.measurement.measured_bytes) r.measurement.measured_bytes_source = Source::cupti;
    r.measurement.measured_kind =
        CountedKind{Device::gpu, counts.first->precision, counts.first->engine};
    if (r.measurement.measured_ops || r.measurement.measured_bytes)
        r.measurement.work_spread = counts.range.spread();
}

// Bytes moved, as a total (not measured_bytes: the profile has no roof for copies,
// and a measured amount would be judged against the host's).
CounterValue moved_bytes(double bytes) {
    CounterValue moved;
    moved.name = "bytes";
    moved.value = bytes;
    moved.unit = "bytes";
    moved.source = Source::cupti;
    return moved;
}

// What turning the gathered operations into regions needs besides each region's own.
struct Finishing {
    const std::optional<std::regex>& model;
    const std::set<std::string>& range_paths;
    std::size_t durations_limit;
    const std::map<Key, Counted>& counted;
    std::map<std::string, std::set<std::uint32_t>> devices_of;  // one region per device
};

// One region of the record: a unique path, host-side threads, work, moved bytes, durations.
RecordedRegion finish_region(const Key& key, Acc& a, Finishing& f, Notes& notes) {
    RecordedRegion r = std::move(a.region);
    if (f.devices_of[r.path].size() > 1) r.path += " [gpu" + std::to_string(a.device) + "]";
    if (f.range_paths.count(r.path)) r.path += " [gpu]";
    // Threads and processes of the host side (GPU roofs take no thread count).
    r.threads = std::max<int>(1, static_cast<int>(a.threads.size()));
    r.processes = static_cast<int>(a.processes.size());
    r.model = f.model && is_model_region(*f.model, r.name, r.path);
    r.measurement.name = r.path;
    r.measurement.threads = r.threads;
    // Only when every instance did the declared work: a mix is no per-instance amount.
    if (a.with_work > 0 && a.with_work == r.instances) {
        give_declared_work(r, a);
    } else if (const auto c = f.counted.find(key); c != f.counted.end()) {
        give_counted_work(r, c->second, notes);
    }
    if (r.labels["operation"] != "kernel") r.measurement.counters.push_back(moved_bytes(a.bytes));
    r.measurement.duration_s = summarize(a.durations);
    r.durations_subsampled = a.durations.size() > f.durations_limit;
    r.measurement.durations_s = subsample(a.durations, f.durations_limit);
    return r;
}

}  // namespace

GpuRegions aggregate_gpu_regions(const std::vector<GpuExecution>& executions,
                                 const std::optional<std::regex>& model,
                                 const std::set<std::string>& range_paths,
                                 std::size_t durations_limit,
                                 std::optional<GpuExecution> counting) {
    std::map<Key, Counted> counted;
    if (counting) counted = count_by_key(*counting);
    Accumulation acc;
    acc.executions = executions.size();
    for (std::size_t x = 0; x < acc.executions; ++x) accumulate_execution(acc, executions[x], x);

    Finishing f{model, range_paths, durations_limit, counted, {}};
    for (const auto& [key, a] : acc.by_key) f.devices_of[a.region.path].insert(a.device);
    GpuRegions out;
    for (auto [key, a] : in_order_seen(acc.by_key))
        out.regions.push_back(finish_region(*key, *a, f, acc.notes));
    out.notes = std::move(acc.notes.list);
    return out;
}

}  // namespace ceiling::measure
