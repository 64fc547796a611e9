#pragma once
// Measurement: what was observed for one piece of work or one region: a distribution of
// durations plus counter readings, each with where it came from. The diagnosis engine
// judges Measurements against a MachineProfile; run records store them.
//
// Collectors do not include this header (collectors never depend on diagnosis); the
// agent's measuring loop converts collector readings into CounterValues.

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "diagnosis/statistics.hpp"
#include "diagnosis/work.hpp"

namespace ceiling {

// Where a number came from. `analytic` = counted from the algorithm (reference kernels,
// declared regions); `pmu` = CPU hardware counters; `cupti` = GPU counters; `software`
// = OS accounting (perf_event software events, rusage, procfs); `timing` = a clock.
enum class Source { analytic, pmu, cupti, software, timing };
inline constexpr std::array<std::string_view, 5> source_names = {"analytic", "pmu", "cupti",
                                                                 "software", "timing"};
inline std::string_view to_string(Source s) { return enum_name(s, source_names); }
inline std::optional<Source> parse_source(std::string_view s) {
    return enum_parse<Source>(s, source_names);
}

// One counter's value over the measured interval. Absent counters are not listed (an
// unknown is never a zero).
struct CounterValue {
    std::string name;   // e.g. "task_clock_s", "fp_ops", "dram_bytes", "page_faults"
    double value = 0;
    std::string unit;   // "s", "ops", "bytes", "count", "J"
    Source source = Source::software;
    // Fraction of the interval the counter was actually counting (multiplexing); the
    // value is already scaled up. nullopt when not multiplexed / not applicable.
    std::optional<double> running_fraction;
    bool low_confidence = false;  // ran too little of the time, or failed self-validation
};

// What counted operations were, where no analytic work says it: the device that ran them
// and the precision and engine that dominated the count (GPU counters per kernel).
struct CountedKind {
    Device device = Device::cpu;
    Precision precision = Precision::fp32;
    Engine engine = Engine::vector;
};

// The least and most work one instance of a region did (its operations, or its bytes where
// it declared or counted no operation): instances of different sizes under one name (a
// decode step whose context grows, one GEMM region for several shapes) are judged at their
// total work over their total time (diagnose, work_spread).
struct WorkRange {
    double least = 0, most = 0;
    void add(double ops, double bytes) {
        const double v = ops > 0 ? ops : bytes;
        if (!(v > 0)) return;
        least = least > 0 ? std::min(least, v) : v;
        most = std::max(most, v);
    }
    // most / least; absent when no instance did any work.
    std::optional<double> spread() const {
        return least > 0 ? std::optional<double>(most / least) : std::nullopt;
    }
};

struct Measurement {
    std::string name;                // e.g. "gemm/optimized/2048" or an NVTX region path
    int threads = 1;
    std::optional<Work> work;        // analytic work per execution, when known
    std::vector<double> durations_s; // one per timed execution
    Summary duration_s;              // of durations_s
    // Counter-derived work per execution, when a collector measured it.
    std::optional<double> measured_ops;
    std::optional<double> measured_bytes;
    std::optional<Source> measured_ops_source;
    std::optional<Source> measured_bytes_source;
    std::optional<CountedKind> measured_kind;  // with measured_ops when a counter knows it
    // Regions: the largest instance's work over the smallest's (WorkRange), when the work
    // judged (declared, else counted) was known per instance. Absent in older records.
    std::optional<double> work_spread;
    std::vector<CounterValue> counters;  // totals over all executions
    // Set by the judge where other work was measured competing with it while it ran (what, in
    // words); not stored. Instances of the same work whose durations spread are then judged
    // from the unhindered ones (typical_seconds): the slow ones are the host's.
    std::optional<std::string> host_interference;
};

// From this spread of its instances' sizes on, a region is timed by its mean instance (total
// work over total time), below it by its median, which a slow outlier cannot move: within
// 10 % the two agree within the noise.
inline constexpr double work_spread_judged_at_mean = 1.1;
inline bool instances_differ_in_size(const Measurement& m) {
    return m.work_spread && *m.work_spread >= work_spread_judged_at_mean;
}

void to_json(nlohmann::json& j, Source s);
void from_json(const nlohmann::json& j, Source& s);
void to_json(nlohmann::json& j, const Work& w);
void from_json(const nlohmann::json& j, Work& w);
void to_json(nlohmann::json& j, const CounterValue& c);
void from_json(const nlohmann::json& j, CounterValue& c);
void to_json(nlohmann::json& j, const CountedKind& k);
void from_json(const nlohmann::json& j, CountedKind& k);
void to_json(nlohmann::json& j, const Measurement& m);
void from_json(const nlohmann::json& j, Measurement& m);

}  // namespace ceiling
