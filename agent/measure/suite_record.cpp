#include "agent/measure/suite_record.hpp"

#include <numeric>

#include "agent/measure/launch_context.hpp"

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

output::SuiteTimeline suite_timeline(const SuiteResult& r) {
    output::SuiteTimeline t;
    t.start_ns = r.start_ns;
    for (const auto& c : r.cases) {
        if (c.status != CaseStatus::measured || !c.measurement.work) continue;
        t.cases.push_back(
            {c.kernel_case.name(), *c.measurement.work, c.measurement.threads, c.spans_ns});
    }
    return t;
}

}  // namespace ceiling::measure
