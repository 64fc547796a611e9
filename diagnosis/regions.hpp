#pragma once
// A run seen as a whole: the regions it was broken into (NVTX ranges, declared regions),
// some of them the model, and the process's own accounting. From these: the share of wall
// time in the model ("not the model" when it is small), the top non-model regions, and
// system-bound evidence (diagnosis/process_evidence.hpp). `ceiling run` fills RunInputs;
// nothing here measures anything.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "diagnosis/diagnosis.hpp"
#include "diagnosis/process_evidence.hpp"
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
    // Wall time in no model region that this region held (its share of instants when it was
    // the innermost open region and no model region was open anywhere); absent when not
    // measured, then its self time (total - enclosed regions) stands in.
    std::optional<double> non_model_s;
};

// Wall time covered by at least one model region, and by at least one region of any kind
// (unions over threads and nesting), when measured; and of the wall time in no region, the
// part before the first region opened (start-up: loading, imports, building the model) and
// after the last one closed (saving, freeing, exit).
struct Coverage {
    std::optional<double> model_s;
    std::optional<double> regions_s;
    std::optional<double> before_regions_s;
    std::optional<double> after_regions_s;
};

// The name of the wall time in no region among the non-model shares.
inline constexpr std::string_view outside_regions_name = "(outside any region)";

// Model share of wall time. nullopt when no region is marked as model (then the share is
// unknown, not zero) or wall time is not positive. Throws std::invalid_argument for a
// parent index out of range or a cycle.
//
// Nothing is counted twice: the model's time is the union of its regions (`coverage`), else
// the sum of the outermost model regions; a non-model region is listed with the wall time in
// no model region it held (non_model_s), else its self time (total - regions it encloses,
// model ones included), and nothing inside a model region is listed. With non_model_s and
// coverage known the model, the listed regions and the time outside every region add up to
// the wall time; without, regions on several threads can overlap (`overlapping`).
std::optional<ModelShare> model_share(std::span<const RegionTiming> regions, double wall_s,
                                      std::size_t top_n = 3, const Coverage& coverage = {});

struct RunInputs {
    ProcessAccounting process;
    Evidence evidence;  // what the run's moves may assume (premises.hpp)
    std::vector<RegionTiming> regions;
    std::optional<double>
        footprint_bytes;  // peak memory (RSS, device memory); default: peak_rss_bytes
    std::optional<double> memory_capacity_bytes;  // the machine's (or device's) memory
    // Its control group's memory limit (a container's): the wall where it is lower.
    std::optional<double> memory_limit_bytes;
    std::optional<double> memory_budget_bytes;    // the user's budget, if any
    Coverage coverage;                            // union of model / all regions, per run
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

}  // namespace ceiling
