#pragma once
// A collector's output: named values with units and where they came from. Collectors do
// not know diagnosis' CounterValue (collectors never include diagnosis/); the agent's
// measuring loop converts (agent/machine/pmu_readings.hpp).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ceiling::collectors {

// timing: a clock; software: OS accounting (perf_event software events, rusage, procfs);
// pmu: hardware counters (core PMU, uncore, RAPL energy).
enum class ReadingSource { timing, software, pmu };
std::string_view to_string(ReadingSource s);

struct Reading {
    std::string name;  // snake_case, unit-suffixed when not a count: "task_clock_s", "fp_ops"
    double value = 0;
    std::string unit;  // "s", "count", "bytes", "flop", "J"
    ReadingSource source = ReadingSource::software;
    // Fraction of the interval the counter was counting; the value is already scaled up.
    // Absent when the counter was never multiplexed.
    std::optional<double> running_fraction;
    bool low_confidence = false;  // ran too little of the interval, or failed validation
    bool estimate = false;        // a proxy (e.g. LLC misses x line size), not the quantity itself
    std::string note;             // why it is low-confidence or an estimate; empty otherwise
};

// What stop() returns: the values that could be measured (an unmeasurable one is absent,
// never 0) and warnings the user should see (multiplexing, events that failed to open).
struct Readings {
    std::vector<Reading> values;
    std::vector<std::string> warnings;

    const Reading* find(std::string_view name) const;
    std::optional<double> value(std::string_view name) const;
    void append(Readings other);
};

// The readings of two intervals of the same collectors as one interval (a suite case timed
// in rounds between other cases): counts, seconds, bytes and joules add; a peak
// (max_rss_bytes) takes the larger; a ratio cannot be added, so instructions_per_cycle is
// recomputed from the summed counts and any other ratio dropped. A value only one side
// has is dropped too (it was not counted over the whole). The merged value is as
// confident as the weaker side (the smaller running fraction, either's flags and note).
Readings combine_readings(const Readings& a, const Readings& b);

}  // namespace ceiling::collectors
