#pragma once
// Chrome Trace Event format (the JSON object form, {"traceEvents": [...]}), which Perfetto
// UI and chrome://tracing open. A builder that `run` and `suite` both feed: processes and
// threads get "M" metadata events, regions and kernels "X" complete events, sampled rates
// "C" counter events, marks "i" instant events.
//
// Timestamps are microseconds relative to an origin (the first launch): absolute
// CLOCK_MONOTONIC nanoseconds as doubles would lose their last digits (kineto's lesson).
// Events are written sorted per track by start, enclosing events before enclosed ones, so
// that every viewer nests them the same way.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnosis/run_record.hpp"

namespace ceiling::store {

class ChromeTrace {
public:
    explicit ChromeTrace(std::int64_t origin_ns) : origin_ns_(origin_ns) {}

    void process(int pid, const std::string& name, int sort_index = 0);
    void thread(int pid, int tid, const std::string& name);
    // A complete event; `args` is shown in the viewer's details pane.
    void complete(int pid, int tid, const std::string& name, const std::string& category,
                  std::int64_t start_ns, std::int64_t end_ns, nlohmann::json args = nullptr);
    void instant(int pid, int tid, const std::string& name, std::int64_t t_ns);
    // One counter track per name under process pid; `values` are its series at t_ns.
    void counter(int pid, const std::string& name, std::int64_t t_ns,
                 const std::map<std::string, double>& values);

    nlohmann::json to_json() const;
    std::string dump() const { return to_json().dump() + "\n"; }

private:
    struct Event {
        int pid = 0;
        int tid = 0;
        char phase = 'X';
        std::string name;
        std::string category;
        std::int64_t start_ns = 0;
        std::int64_t dur_ns = 0;
        nlohmann::json args;
    };
    double micros(std::int64_t t_ns) const;
    std::int64_t origin_ns_;
    std::map<int, std::pair<std::string, int>> processes_;
    std::map<std::pair<int, int>, std::string> threads_;
    std::vector<Event> events_;
};

// The counter tracks of one execution's time series, each series its own track under pid;
// t = 0 of the series is `start_ns`.
void add_time_series(ChromeTrace& trace, int pid, std::int64_t start_ns,
                     const std::vector<Series>& series);

}  // namespace ceiling::store
