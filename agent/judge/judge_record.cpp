#include "agent/judge/judge_record.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <thread>

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

}  // namespace

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
            // What the moves below assume, as measured (diagnosis/premises.hpp).
            const Evidence e = evidence_of(p, reg);
            weigh_vector_width(p, *d, t, record.environment, e);
            if (auto f = recording_inside(record, reg)) d->findings.push_back(std::move(*f));
            if (on_host(reg)) weigh_memory_parallelism(p, *d, e);
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
    // The program's own code (a library's ops are its regions'), its threads and cores as
    // the OS counted them, an interpreter by its command's name.
    if (in.process.user_s && in.process.system_s && in.process.wall_s > 0)
        in.evidence.busy_cores = (*in.process.user_s + *in.process.system_s) / in.process.wall_s;
    in.evidence.threads = in.process.working_threads;
    in.evidence.interpreted = runs_interpreter(record.command);
    if (!record.op_summary.types.empty()) in.evidence.interpreted = true;
    if (record.machine_profile) in.evidence.accelerator = !record.machine_profile->gpus.empty();
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
    if (heaviest) {
        in.model = heaviest->diagnosis;
        in.model->subject = heaviest->path;
    }
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
    record.model_region = in.model ? in.model->subject : std::string();
    if (record.kind == RecordKind::run) judge_run(record, in);
    record.budget_checks.clear();
    if (record.budgets && !record.budgets->empty()) check_budgets(record, in);
    // Last: a model's row carries its region's diagnosis with every finding.
    record.op_summary = summarise_ops(record);
    record.answer = decide_answer(record);
}

}  // namespace ceiling::judge
