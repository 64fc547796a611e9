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
    constexpr int pid = 1;
    ChromeTrace trace(timeline.start_ns);
    trace.process(pid, "ceiling suite");
    for (const auto& c : timeline.cases) {
        const Work& w = c.work;
        // One track per team size: a 2-thread kernel is not drawn as one thread's work.
        const int tid = std::max(1, c.threads);
        trace.thread(pid, tid, "kernels, " + std::to_string(tid) + (tid == 1 ? " thread" : " threads"));
        for (const auto& [begin, end] : c.spans_ns) {
            const double s = static_cast<double>(end - begin) * 1e-9;
            trace.complete(
                pid, tid, c.name, "kernel", begin, end,
                {{"ops", w.ops}, {"compulsory_bytes", w.compulsory_bytes}, {"threads", c.threads}});
            // One unit per counter track: viewers stack the series of one track.
            trace.counter(pid, "achieved (Gop/s)", begin, {{"value", w.ops / s * 1e-9}});
            trace.counter(pid, "achieved (GB/s)", begin, {{"value", w.compulsory_bytes / s * 1e-9}});
        }
    }
    return trace.dump();
}

}  // namespace ceiling::output
