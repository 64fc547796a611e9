#include "agent/output/suite_files.hpp"

#include <numeric>

#include "agent/measure/launch_context.hpp"
#include "agent/output/chrome_trace.hpp"
#include "agent/output/roofline_svg.hpp"

namespace ceiling::output {

RunRecord suite_record(const measure::SuiteResult& r, const MachineProfile& profile,
                       const std::string& profile_path, const Thresholds& thresholds) {
    RunRecord rec;
    rec.kind = RecordKind::suite;
    measure::fill_record_context(rec);
    rec.command = {"ceiling", "suite"};
    rec.machine_profile = profile;
    rec.machine_profile_path = profile_path;
    rec.thresholds = thresholds;
    rec.whole.name = "suite";
    rec.whole.durations_s = {r.wall_s};
    rec.whole.duration_s = summarize(rec.whole.durations_s);
    for (const auto& c : r.cases) {
        if (c.status != measure::CaseStatus::measured) {
            rec.notes.push_back(c.kernel_case.name() + ": " +
                                std::string(measure::to_string(c.status)) + ": " + c.message);
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
    return rec;
}

std::string suite_roofline_svg(const measure::SuiteResult& r, const MachineProfile& profile,
                               int threads) {
    std::vector<RooflinePoint> points;
    for (const auto& c : r.cases) {
        if (c.status != measure::CaseStatus::measured || !c.measurement.work) continue;
        const Work& w = *c.measurement.work;
        if (w.device == Device::gpu) continue;  // judged against the GPU's roofs, not these
        points.push_back(
            {c.kernel_case.name(), w.intensity(), w.ops / c.measurement.duration_s.median});
    }
    RooflineSvgOptions o;
    o.threads = threads;
    o.title =
        "ceiling suite on " + profile.host.hostname + " (" + std::to_string(threads) + " threads)";
    return render_roofline_svg(profile, points, o);
}

std::string suite_trace(const measure::SuiteResult& r) {
    constexpr int pid = 1, tid = 1;
    ChromeTrace trace(r.start_ns);
    trace.process(pid, "ceiling suite");
    trace.thread(pid, tid, "kernels");
    for (const auto& c : r.cases) {
        if (c.status != measure::CaseStatus::measured || !c.measurement.work) continue;
        const Work& w = *c.measurement.work;
        for (const auto& [begin, end] : c.spans_ns) {
            const double s = static_cast<double>(end - begin) * 1e-9;
            trace.complete(pid, tid, c.kernel_case.name(), "kernel", begin, end,
                           {{"ops", w.ops},
                            {"compulsory_bytes", w.compulsory_bytes},
                            {"threads", c.measurement.threads}});
            trace.counter(
                pid, "achieved", begin,
                {{"Gop_per_s", w.ops / s * 1e-9}, {"GB_per_s", w.compulsory_bytes / s * 1e-9}});
        }
    }
    return trace.dump();
}

}  // namespace ceiling::output
