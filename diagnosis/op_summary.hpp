#pragma once
// A PyTorch run's ops by type (`ceiling run --torch`): the model's ops grouped by class
// (dense / depthwise / pointwise convolution, linear, norm, activation, ...), each class
// judged as one piece of work against the roofs of the cores its ops kept busy; each whole
// model as one row beside them; the ops without a work formula; and what the
// instrumentation cost. The judging room fills it (agent/judge/op_types.cpp) from the
// record's regions; it is kept in the record, so `--json` and the HTML carry the per-type
// verdicts the text table shows.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "diagnosis/diagnosis.hpp"

namespace ceiling {

struct RecordedRegion;

struct OpTypeRow {
    std::string name;           // op class, or the model region's name
    double calls = 0;           // per run
    double time_s = 0;          // per run
    std::optional<double> ops;  // declared, per run; absent: no formula
    std::optional<double> bytes;
    std::optional<double> busy_cores;  // time-weighted over its regions
    // Against the record's profile (absent without one), at the rate of each op's median
    // instance; time_s stays what was spent.
    std::optional<Diagnosis> judged;
};

// The instrumentation's cost for one model (the counters the torch run left on it).
struct InstrumentationCost {
    std::string model;
    double calls_instrumented = 0, calls_uninstrumented = 0;
    std::optional<double> instrumented_s, uninstrumented_s, op_time_s, op_ranges;
    std::optional<double> first_call_s, first_call_op_time_s;
};

struct OpSummary {
    std::vector<OpTypeRow> types;    // ops inside model regions, by class, longest first
    std::vector<OpTypeRow> models;   // whole models (model regions with work)
    std::vector<OpTypeRow> unformulated;  // torch ops without a formula, by op name
    std::vector<InstrumentationCost> costs;
    bool empty() const { return types.empty() && models.empty() && unformulated.empty(); }
};

// The op sum within this fraction of the uninstrumented call counts as adding up.
inline constexpr double op_sum_tolerance = 0.15;

// Torch op and module regions inside a model: the op summary stands for them in the region
// table and the diagnosis list (a model has hundreds); the record and trace keep them all.
bool summarised_by_ops(const RecordedRegion& region);
// Their diagnoses, and those of torch ops anywhere whose work is unknown (no formula: listed
// in the op summary) or none (views, allocations): "declare your work" is no advice for them.
bool diagnosis_summarised_by_ops(const RecordedRegion& region);

void to_json(nlohmann::json& j, const OpTypeRow& r);
void from_json(const nlohmann::json& j, OpTypeRow& r);
void to_json(nlohmann::json& j, const InstrumentationCost& c);
void from_json(const nlohmann::json& j, InstrumentationCost& c);
void to_json(nlohmann::json& j, const OpSummary& s);
void from_json(const nlohmann::json& j, OpSummary& s);

}  // namespace ceiling
