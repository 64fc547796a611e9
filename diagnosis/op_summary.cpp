#include "diagnosis/op_summary.hpp"

#include <nlohmann/json.hpp>

#include "diagnosis/json_support.hpp"
#include "diagnosis/run_record.hpp"

namespace ceiling {

namespace {
}  // namespace

bool summarised_by_ops(const RecordedRegion& region) {
    const std::string role = region.label(torch_role_label);
    return region.model && (role == "op" || role == "module");
}

bool diagnosis_summarised_by_ops(const RecordedRegion& region) {
    if (summarised_by_ops(region)) return true;
    const auto& w = region.measurement.work;
    return region.label(torch_role_label) == "op" && (!w || (w->ops == 0 && w->compulsory_bytes == 0));
}

void to_json(nlohmann::json& j, const OpTypeRow& r) {
    j = {{"name", r.name},         {"calls_per_run", r.calls}, {"time_s_per_run", r.time_s},
         {"ops_per_run", r.ops},   {"bytes_per_run", r.bytes}, {"busy_cores", r.busy_cores},
         {"diagnosis", r.judged}};
}
void from_json(const nlohmann::json& j, OpTypeRow& r) {
    get_field(j, "name", r.name);
    get_field(j, "calls_per_run", r.calls);
    get_field(j, "time_s_per_run", r.time_s);
    get_optional(j, "ops_per_run", r.ops);
    get_optional(j, "bytes_per_run", r.bytes);
    get_optional(j, "busy_cores", r.busy_cores);
    get_optional(j, "diagnosis", r.judged);
}

void to_json(nlohmann::json& j, const InstrumentationCost& c) {
    j = {{"model", c.model},
         {"calls_instrumented", c.calls_instrumented},
         {"calls_uninstrumented", c.calls_uninstrumented},
         {"instrumented_call_s", c.instrumented_s},
         {"uninstrumented_call_s", c.uninstrumented_s},
         {"op_time_per_call_s", c.op_time_s},
         {"op_ranges_per_call", c.op_ranges},
         {"first_call_s", c.first_call_s},
         {"first_call_op_time_s", c.first_call_op_time_s}};
}
void from_json(const nlohmann::json& j, InstrumentationCost& c) {
    get_field(j, "model", c.model);
    get_field(j, "calls_instrumented", c.calls_instrumented);
    get_field(j, "calls_uninstrumented", c.calls_uninstrumented);
    get_optional(j, "instrumented_call_s", c.instrumented_s);
    get_optional(j, "uninstrumented_call_s", c.uninstrumented_s);
    get_optional(j, "op_time_per_call_s", c.op_time_s);
    get_optional(j, "op_ranges_per_call", c.op_ranges);
    get_optional(j, "first_call_s", c.first_call_s);
    get_optional(j, "first_call_op_time_s", c.first_call_op_time_s);
}

void to_json(nlohmann::json& j, const OpSummary& s) {
    j = {{"types", s.types},
         {"models", s.models},
         {"unformulated", s.unformulated},
         {"instrumentation", s.costs}};
}
void from_json(const nlohmann::json& j, OpSummary& s) {
    get_field(j, "types", s.types);
    get_field(j, "models", s.models);
    get_field(j, "unformulated", s.unformulated);
    get_field(j, "instrumentation", s.costs);
}

}  // namespace ceiling
