#include "agent/store/chrome_trace.hpp"

#include <algorithm>
#include <cmath>

namespace ceiling::store {

double ChromeTrace::micros(std::int64_t t_ns) const {
    // Rounded to whole nanoseconds: relative values stay exact in a double for ~100 days.
    return static_cast<double>(t_ns - origin_ns_) / 1000.0;
}

void ChromeTrace::process(int pid, const std::string& name, int sort_index) {
    processes_[pid] = {name, sort_index};
}

void ChromeTrace::thread(int pid, int tid, const std::string& name) { threads_[{pid, tid}] = name; }

void ChromeTrace::complete(int pid, int tid, const std::string& name, const std::string& category,
                           std::int64_t start_ns, std::int64_t end_ns, nlohmann::json args) {
    events_.push_back({pid, tid, 'X', name, category, start_ns, std::max<std::int64_t>(0, end_ns - start_ns),
                       std::move(args)});
}

void ChromeTrace::instant(int pid, int tid, const std::string& name, std::int64_t t_ns) {
    events_.push_back({pid, tid, 'i', name, "mark", t_ns, 0, nullptr});
}

void ChromeTrace::counter(int pid, const std::string& name, std::int64_t t_ns,
                          const std::map<std::string, double>& values) {
    nlohmann::json args = nlohmann::json::object();
    for (const auto& [k, v] : values)
        if (std::isfinite(v)) args[k] = v;
    events_.push_back({pid, 0, 'C', name, "counter", t_ns, 0, std::move(args)});
}

nlohmann::json ChromeTrace::to_json() const {
    nlohmann::json events = nlohmann::json::array();
    for (const auto& [pid, p] : processes_) {
        events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0},
                          {"ts", 0}, {"args", {{"name", p.first}}}});
        events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"tid", 0},
                          {"ts", 0}, {"args", {{"sort_index", p.second}}}});
    }
    for (const auto& [key, name] : threads_)
        events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", key.first},
                          {"tid", key.second}, {"ts", 0}, {"args", {{"name", name}}}});
    std::vector<const Event*> sorted;
    sorted.reserve(events_.size());
    for (const auto& e : events_) sorted.push_back(&e);
    // Per track by start; at equal starts the longer (enclosing) event first.
    std::stable_sort(sorted.begin(), sorted.end(), [](const Event* a, const Event* b) {
        if (a->pid != b->pid) return a->pid < b->pid;
        if (a->tid != b->tid) return a->tid < b->tid;
        if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns;
        return a->dur_ns > b->dur_ns;
    });
    for (const Event* e : sorted) {
        nlohmann::json j = {{"ph", std::string(1, e->phase)},
                            {"name", e->name},
                            {"cat", e->category},
                            {"pid", e->pid},
                            {"tid", e->tid},
                            {"ts", micros(e->start_ns)}};
        if (e->phase == 'X') j["dur"] = static_cast<double>(e->dur_ns) / 1000.0;
        if (e->phase == 'i') j["s"] = "t";  // thread-scoped instant
        if (!e->args.is_null()) j["args"] = e->args;
        events.push_back(std::move(j));
    }
    return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
}

void add_time_series(ChromeTrace& trace, int pid, std::int64_t start_ns,
                     const std::vector<Series>& series) {
    for (const auto& s : series) {
        // "rss_bytes" in bytes is the track "rss (bytes)"; its one series is the value.
        std::string name = s.name;
        const std::string suffix = "_" + s.unit;
        if (name.size() > suffix.size() && name.ends_with(suffix)) name.resize(name.size() - suffix.size());
        const std::string track = name + " (" + s.unit + ")";
        for (std::size_t i = 0; i < s.values.size(); ++i)
            trace.counter(pid, track, start_ns + static_cast<std::int64_t>(std::llround(s.t_s[i] * 1e9)),
                          {{"value", s.values[i]}});
    }
}

}  // namespace ceiling::store
