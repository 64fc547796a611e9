#include "agent/suite/suite_record.hpp"

#include <algorithm>
#include <numeric>

#include "agent/machine/launch_context.hpp"
#include "agent/store/chrome_trace.hpp"

namespace ceiling::measure {

RunRecord suite_record(const SuiteResult& r, const MachineProfile& profile,
                       const std::string& profile_path, const Thresholds& thresholds) {
    RunRecord rec;
    rec.kind = RecordKind::suite;
    fill_record_context(rec);
    rec.command = {"ceiling", "suite"};
    rec.machine_profile = profile;
    rec.machine_profile_path = profile_path;
    rec.thresholds = thresholds;
    rec.whole.name = "suite";
    rec.whole.durations_s = {r.wall_s};
    rec.whole.duration_s = summarize(rec.whole.durations_s);
    for (const auto& c : r.cases) {
        if (c.status != CaseStatus::measured) {
            rec.notes.push_back(c.kernel_case.name() + ": " + std::string(to_string(c.status)) +
                                ": " + c.message);
            continue;
        }
        const auto& k = c.kernel_case;
        RecordedRegion reg;
        reg.labels = {{"kernel", k.kernel},
                      {"problem", k.problem},
                      {"variant", std::string(kernels::to_string(k.variant))},
                      {"shape", k.shape},
                      {"implementation", k.implementation}};
        if (k.work.device == kernels::WorkDevice::gpu) reg.labels["device"] = "gpu0";
        for (const auto& [key, value] :
             {std::pair{"series", k.series}, {"advice", k.advice}, {"detail", c.detail}})
            if (!value.empty()) reg.labels[key] = value;
        reg.kind = RegionKind::kernel;
        reg.path = reg.name = c.kernel_case.name();
        reg.model = true;
        reg.instances = c.measurement.durations_s.size();
        reg.threads = c.measurement.threads;
        reg.processes = 1;
        reg.total_s_per_execution = {std::accumulate(c.measurement.durations_s.begin(),
                                                     c.measurement.durations_s.end(), 0.0)};
        reg.measurement = c.measurement;
        rec.regions.push_back(std::move(reg));
    }
    for (const auto& n : r.notes) rec.notes.push_back(n);
    rec.roof_checks = r.roof_checks;
    return rec;
}

std::string suite_trace(const SuiteResult& r) {
    constexpr int pid = 1;
    store::ChromeTrace trace(r.start_ns);
    trace.process(pid, "ceiling suite");
    for (const auto& c : r.cases) {
        if (c.status != CaseStatus::measured || !c.measurement.work) continue;
        const Work& w = *c.measurement.work;
        // One track per team size: a 2-thread kernel is not drawn as one thread's work.
        const int tid = std::max(1, c.measurement.threads);
        trace.thread(pid, tid, "kernels, " + std::to_string(tid) + (tid == 1 ? " thread" : " threads"));
        for (const auto& [begin, end] : c.spans_ns) {
            const double s = static_cast<double>(end - begin) * 1e-9;
            trace.complete(pid, tid, c.kernel_case.name(), "kernel", begin, end,
                           {{"ops", w.ops},
                            {"compulsory_bytes", w.compulsory_bytes},
                            {"threads", c.measurement.threads}});
            // One unit per counter track: viewers stack the series of one track.
            trace.counter(pid, "achieved (Gop/s)", begin, {{"value", w.ops / s * 1e-9}});
            trace.counter(pid, "achieved (GB/s)", begin, {{"value", w.compulsory_bytes / s * 1e-9}});
        }
    }
    return trace.dump();
}

}  // namespace ceiling::measure
