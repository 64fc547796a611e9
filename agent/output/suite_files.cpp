#include "agent/output/suite_files.hpp"

#include "agent/output/chrome_trace.hpp"
#include "agent/output/roofline_svg.hpp"

namespace ceiling::output {

std::string suite_roofline_svg(const RunRecord& record, int threads) {
    const MachineProfile profile = record.machine_profile.value_or(MachineProfile{});
    RooflineSvgOptions o;
    o.threads = threads;
    o.title = "ceiling suite on " + profile.host.hostname;  // the renderer adds the roofs' threads
    return render_roofline_svg(profile, roofline_points(record), o);
}

std::string suite_trace(const SuiteTimeline& timeline) {
    constexpr int pid = 1, tid = 1;
    ChromeTrace trace(timeline.start_ns);
    trace.process(pid, "ceiling suite");
    trace.thread(pid, tid, "kernels");
    for (const auto& c : timeline.cases) {
        const Work& w = c.work;
        for (const auto& [begin, end] : c.spans_ns) {
            const double s = static_cast<double>(end - begin) * 1e-9;
            trace.complete(
                pid, tid, c.name, "kernel", begin, end,
                {{"ops", w.ops}, {"compulsory_bytes", w.compulsory_bytes}, {"threads", c.threads}});
            trace.counter(
                pid, "achieved", begin,
                {{"Gop_per_s", w.ops / s * 1e-9}, {"GB_per_s", w.compulsory_bytes / s * 1e-9}});
        }
    }
    return trace.dump();
}

}  // namespace ceiling::output
