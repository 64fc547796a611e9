#include "agent/judge/op_types.hpp"

#include <algorithm>
#include <map>

#include "diagnosis/statistics.hpp"

namespace ceiling::judge {

namespace {

double sum(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s;
}

std::optional<double> counter(const RecordedRegion& r, const std::string& name) {
    for (const auto& c : r.measurement.counters)
        if (c.name == name) return c.value;
    return std::nullopt;
}

// Regions of one op type added up; per-execution totals kept for the time's distribution.
struct Group {
    OpTypeRow row;
    std::vector<double> per_execution;
    double busy_weighted = 0, busy_time = 0;
    double typical_s = 0;  // per run: each region's median instance x its instances
    bool all_known = true;
    std::map<Precision, double> ops_by_precision;
    double longest_s = -1, working_set = 0;
};

void add(Group& g, const RecordedRegion& r, std::size_t runs) {
    const double n = static_cast<double>(std::max<std::size_t>(1, runs));
    const double total = sum(r.total_s_per_execution);
    g.row.calls += static_cast<double>(r.instances) / n;
    g.row.time_s += total / n;
    const auto& d = r.measurement.duration_s;
    // Ops side by side on several threads took that time at once (RecordedRegion::concurrency).
    // An op whose calls differ in size (instances_differ_in_size) counts its total time.
    const bool median = d.count > 0 && !instances_differ_in_size(r.measurement);
    g.typical_s += (median ? d.median * static_cast<double>(r.instances) / n : total / n) /
                   std::max(1.0, r.concurrency.value_or(1.0));
    g.per_execution.resize(std::max(g.per_execution.size(), r.total_s_per_execution.size()), 0.0);
    for (std::size_t i = 0; i < r.total_s_per_execution.size(); ++i)
        g.per_execution[i] += r.total_s_per_execution[i];
    if (r.busy_cores) {
        g.busy_weighted += *r.busy_cores * total;
        g.busy_time += total;
    }
    if (!r.measurement.work) {
        g.all_known = false;
        return;
    }
    const Work& w = *r.measurement.work;
    const double k = static_cast<double>(r.instances) / n;
    g.row.ops = g.row.ops.value_or(0) + w.ops * k;
    g.row.bytes = g.row.bytes.value_or(0) + w.compulsory_bytes * k;
    g.ops_by_precision[w.precision] += w.ops * k;
    // The type's memory level is that of its longest-running op.
    if (total > g.longest_s) {
        g.longest_s = total;
        g.working_set = w.working_set_bytes;
    }
}

// One op type as one piece of work, judged like a region: against the roofs of the cores
// its ops kept busy (roofline.hpp, make_busy_roofline).
void judge_group(Group& g, const RunRecord& record) {
    if (g.busy_time > 0) g.row.busy_cores = g.busy_weighted / g.busy_time;
    if (!g.all_known) g.row.ops = g.row.bytes = std::nullopt;
    if (!record.machine_profile || !g.row.ops || !(*g.row.ops > 0 || *g.row.bytes > 0) ||
        !(g.row.time_s > 0))
        return;
    Measurement m;
    m.name = g.row.name;
    Work w;
    w.ops = *g.row.ops;
    w.compulsory_bytes = *g.row.bytes;
    w.working_set_bytes = g.working_set;
    const auto top = std::max_element(g.ops_by_precision.begin(), g.ops_by_precision.end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
    if (top != g.ops_by_precision.end()) w.precision = top->first;
    m.work = w;
    // Rates from each op's median instance, as diagnose_kernel takes medians: one preempted
    // instance on a shared machine does not make its whole type slow (its mean where its
    // calls differ in size, as there).
    m.durations_s = {g.typical_s};
    m.duration_s = summarize(m.durations_s);
    // A library's ops, run from Python, on the cores they kept busy.
    Evidence e;
    e.library_op = true;
    e.interpreted = true;
    e.busy_cores = g.row.busy_cores;
    e.op_s = g.typical_s;
    e.accelerator = !record.machine_profile->gpus.empty();
    g.row.judged = diagnose_kernel(*record.machine_profile, m, record.thresholds,
                                   g.row.busy_cores.value_or(1.0), e);
}

}  // namespace

OpSummary summarise_ops(const RunRecord& record) {
    OpSummary s;
    const std::size_t runs = record.timed_executions().size();
    std::map<std::string, Group> types, unformulated;
    for (const auto& r : record.regions) {
        const std::string role = r.label(torch_role_label);
        if (role == "op") {
            const std::string cls = r.label(torch_op_class_label);
            if (cls == "no formula") {
                Group& g = unformulated[r.label(torch_op_label)];
                g.row.name = r.label(torch_op_label);
                add(g, r, runs);
            }
            if (!r.model) continue;
            Group& g = types[cls];
            g.row.name = cls;
            add(g, r, runs);
        } else if (role == "model" && r.measurement.work) {
            Group g;
            g.row.name = r.name;
            add(g, r, runs);
            if (g.busy_time > 0) g.row.busy_cores = g.busy_weighted / g.busy_time;
            for (const auto& v : record.region_diagnoses)
                if (v.path == r.path) g.row.judged = v.diagnosis;
            s.models.push_back(g.row);
            if (counter(r, "calls_instrumented")) {
                InstrumentationCost c;
                c.model = r.name;
                c.calls_instrumented = counter(r, "calls_instrumented").value_or(0);
                c.calls_uninstrumented = counter(r, "calls_uninstrumented").value_or(0);
                c.instrumented_s = counter(r, "instrumented_call_s");
                c.uninstrumented_s = counter(r, "uninstrumented_call_s");
                c.op_time_s = counter(r, "op_time_per_call_s");
                c.op_ranges = counter(r, "op_ranges_per_call");
                c.first_call_s = counter(r, "first_call_s");
                c.first_call_op_time_s = counter(r, "first_call_op_time_s");
                s.costs.push_back(c);
            }
        }
    }
    for (auto& [name, g] : types) {
        judge_group(g, record);
        s.types.push_back(g.row);
    }
    for (auto& [name, g] : unformulated) s.unformulated.push_back(g.row);
    auto longest = [](const OpTypeRow& a, const OpTypeRow& b) { return a.time_s > b.time_s; };
    std::stable_sort(s.types.begin(), s.types.end(), longest);
    std::stable_sort(s.unformulated.begin(), s.unformulated.end(), longest);
    return s;
}

}  // namespace ceiling::judge
