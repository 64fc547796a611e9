#pragma once
// A run seen as a whole: the regions it was broken into (NVTX ranges, declared regions),
// some of them the model, and the process's own accounting. From these: the share of wall
// time in the model ("not the model" when it is small), the top non-model regions, and
// system-bound evidence. `ceiling run` fills RunInputs; nothing here measures anything.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "diagnosis/diagnosis.hpp"
#include "diagnosis/thresholds.hpp"

namespace ceiling {

// Time in one region, summed over its occurrences (inclusive of nested regions).
struct RegionTiming {
    std::string name;
    // Index of the enclosing region in the same list; absent for a top-level region. A model
    // region inside another model region is not counted twice.
    std::optional<std::size_t> parent;
    bool model = false;  // the model's own work (inference, training step), not around it
    double total_s = 0;
    std::uint64_t count = 0;
};

// What the OS says about the process (rusage, procfs, perf software events) and what the
// device side reports. Every field is absent when not measured.
struct ProcessAccounting {
    double wall_s = 0;
    std::optional<double> cores_used;  // threads/cores the process was given or used at most
    std::optional<double> user_s;
    std::optional<double> system_s;
    std::optional<double> voluntary_context_switches;
    std::optional<double> involuntary_context_switches;
    std::optional<double> minor_page_faults;
    std::optional<double> major_page_faults;
    std::optional<double> device_wait_s;  // blocked on an accelerator (synchronise, event wait)
    std::optional<double> device_copy_s;  // host<->device copies
    std::optional<double> peak_rss_bytes;
};

// Model share of wall time. nullopt when no region is marked as model (then the share is
// unknown, not zero) or wall time is not positive. Throws std::invalid_argument for a
// parent index out of range or a cycle.
std::optional<ModelShare> model_share(std::span<const RegionTiming> regions, double wall_s,
                                      std::size_t top_n = 3);

// One rule of system-bound evidence: a metric of the accounting against a threshold.
struct SystemRule {
    std::string_view name;  // the metric, with its unit
    std::optional<double> (*metric)(const ProcessAccounting&);
    Comparison comparison;
    double Thresholds::*threshold;
    std::string_view meaning;
};
std::span<const SystemRule> system_rules();

// Every rule evaluated (value absent when its inputs were not measured; absent never fires).
std::vector<SystemSignal> system_evidence(const ProcessAccounting& p, const Thresholds& t);

struct RunInputs {
    ProcessAccounting process;
    std::vector<RegionTiming> regions;
    std::optional<double>
        footprint_bytes;  // peak memory (RSS, device memory); default: peak_rss_bytes
    std::optional<double> memory_capacity_bytes;  // the machine's (or device's) memory
    std::optional<double> memory_budget_bytes;    // the user's budget, if any
    // The diagnosis of the model's own work (e.g. its heaviest region against the roofline),
    // whose roof comparisons the run's decision may use.
    std::optional<Diagnosis> model;
    std::size_t top_regions = 3;
};

// The run's diagnosis: capacity, "not the model", or else what the model's work is bound
// by; always with the model share, capacity and system evidence that were measurable.
Diagnosis diagnose_run(const RunInputs& in, const Thresholds& t);

void to_json(nlohmann::json& j, const RegionTiming& r);
void from_json(const nlohmann::json& j, RegionTiming& r);
void to_json(nlohmann::json& j, const ProcessAccounting& p);
void from_json(const nlohmann::json& j, ProcessAccounting& p);

}  // namespace ceiling
