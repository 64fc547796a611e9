#pragma once
// The PyTorch part of a run summary (`ceiling run --torch`, agent/measure/torch_run.hpp):
// the model's ops grouped by type (dense / depthwise / pointwise convolution, linear, norm,
// activation, pooling, elementwise, ...) with count, time, declared FLOPs and bytes,
// intensity, busy cores, fractions of the roofs and bound; each whole model as one roofline
// point beside them; the ops without a formula; and what the instrumentation cost. Everything
// comes from the record (region labels, work, counters), so `report` prints it again.

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "diagnosis/diagnosis.hpp"
#include "diagnosis/run_record.hpp"

namespace ceiling::output {

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

// The instrumentation's cost for one model (the counters add_torch_to_record left).
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
};

// Empty when the record has no torch regions.
OpSummary summarise_ops(const RunRecord& record);

// The op sum within this fraction of the uninstrumented call counts as adding up.
inline constexpr double op_sum_tolerance = 0.15;

void render_op_summary(const RunRecord& record, std::ostream& out);

// Torch op and module regions inside a model: the op summary stands for them in the region
// table and the diagnosis list (a model has hundreds); the record and trace keep them all.
bool summarised_by_ops(const RecordedRegion& region);
// Their diagnoses, and those of torch ops anywhere whose work is unknown (no formula: listed
// in the op summary) or none (views, allocations): "declare your work" is no advice for them.
bool diagnosis_summarised_by_ops(const RecordedRegion& region);

}  // namespace ceiling::output
