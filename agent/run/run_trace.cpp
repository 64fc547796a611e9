#include "agent/run/run_trace.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

namespace ceiling::measure {

store::ChromeTrace run_trace(const ProgramRun& run, const std::string& program) {
    const auto& runs = run.executions;
    store::ChromeTrace trace(runs.empty() ? 0 : runs.front().start_ns);
    constexpr int lane_base = 1'000'000'000;    // synthetic tids for start/end range lanes
    constexpr int domain_base = 1'100'000'000;  // and for (thread, domain) tracks
    int sort = 0;
    for (const auto& x : runs) {
        const int pid = x.execution.pid.value_or(0);
        const std::string label = (x.execution.warmup     ? "warm-up "
                                   : x.execution.counting ? "GPU counting "
                                                          : "run ") +
                                  std::to_string(x.execution.index + 1);
        trace.process(pid, program + " (" + label + ")", sort++);
        trace.thread(pid, pid, "main");
        trace.complete(pid, pid, label, "execution", x.start_ns, x.end_ns,
                       {{"end", x.execution.end.message}});
        std::map<int, std::vector<std::int64_t>> lanes;  // pid -> last end of each lane
        // Push/pop ranges of a non-default domain nest per thread and domain, not with the
        // thread's other ranges: each (thread, domain) gets its own track, named after the
        // thread that pushed them.
        std::map<std::tuple<int, int, std::string>, int> domain_tracks;
        auto thread_label = [&](int p, int t) {
            const auto it = x.capture.thread_names.find({p, t});
            return it != x.capture.thread_names.end() ? it->second : "thread " + std::to_string(t);
        };
        for (const auto& r : x.capture.instances) {
            nlohmann::json args = {{"path", r.path}};
            if (r.work)
                args["declared_ops"] = r.work->ops,
                args["declared_bytes"] = r.work->compulsory_bytes;
            if (r.unclosed) args["unclosed"] = true;
            int tid = r.tid;
            if (r.push_pop && !r.domain.empty()) {
                const auto key = std::make_tuple(r.pid, r.tid, r.domain);
                auto [it, added] = domain_tracks.try_emplace(key, domain_base + static_cast<int>(domain_tracks.size()));
                tid = it->second;
                if (added)
                    trace.thread(r.pid, tid, thread_label(r.pid, r.tid) + ": domain " + r.domain.str());
            } else if (!r.push_pop) {
                // Start/end ranges may end on another thread and need not nest: each gets the
                // first lane of its process where it overlaps nothing.
                auto& l = lanes[r.pid];
                std::size_t k = 0;
                while (k < l.size() && l[k] > r.start_ns) ++k;
                if (k == l.size()) l.push_back(0);
                l[k] = r.end_ns;
                tid = lane_base + static_cast<int>(k);
                trace.thread(r.pid, tid, "NVTX start/end ranges " + std::to_string(k + 1));
            } else if (r.pid != pid) {
                trace.process(r.pid, program + " child " + std::to_string(r.pid), sort++);
            }
            trace.complete(r.pid, tid, r.name, "nvtx", r.start_ns, r.end_ns, std::move(args));
        }
        for (const auto& m : x.capture.marks) trace.instant(m.pid, m.tid, m.name, m.t_ns);
        for (const auto& [key, name] : x.capture.thread_names)
            trace.thread(key.first, key.second, name);
        // Processes the program started that recorded no ranges of their own still get a
        // track: their span as the sampler saw them (within one interval of the truth).
        std::set<int> with_ranges;
        for (const auto& r : x.capture.instances) with_ranges.insert(r.pid);
        for (const auto& p : x.processes) {
            if (p.pid == pid || with_ranges.count(p.pid)) continue;
            trace.process(p.pid, program + " child " + p.name + " " + std::to_string(p.pid), sort++);
            trace.thread(p.pid, p.pid, p.name);
            trace.complete(p.pid, p.pid, p.name, "process", p.first_ns, std::max(p.last_ns, p.first_ns + 1),
                           {{"span", "first to last sample that saw it"}});
        }
        store::add_time_series(trace, pid, x.start_ns, x.execution.time_series);
        // GPU processes take pids no real process has (Linux pids stay below 2^22).
        constexpr int gpu_pid_base = 1'500'000'000, devices_per_execution = 64;
        add_gpu_tracks(trace, x.gpu, x.gpu_ops, x.capture,
                       gpu_pid_base + x.execution.index * devices_per_execution, label, pid, sort);
    }
    return trace;
}

}  // namespace ceiling::measure
