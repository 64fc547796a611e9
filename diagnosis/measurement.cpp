#include "diagnosis/measurement.hpp"

#include "diagnosis/json_support.hpp"

namespace ceiling {

void to_json(nlohmann::json& j, Source s) { j = std::string(to_string(s)); }
void from_json(const nlohmann::json& j, Source& s) {
    s = enum_from_json<Source>(j, source_names, "source");
}

void to_json(nlohmann::json& j, const Work& w) {
    j = {{"precision", w.precision},
         {"engine", w.engine},
         {"device", w.device},
         {"ops", w.ops},
         {"compulsory_bytes", w.compulsory_bytes},
         {"working_set_bytes", w.working_set_bytes},
         {"written_bytes", w.written_bytes ? nlohmann::json(*w.written_bytes) : nlohmann::json()}};
}
void from_json(const nlohmann::json& j, Work& w) {
    get_field(j, "precision", w.precision);
    get_field(j, "engine", w.engine);
    get_field(j, "device", w.device);
    get_field(j, "ops", w.ops);
    get_field(j, "compulsory_bytes", w.compulsory_bytes);
    get_field(j, "working_set_bytes", w.working_set_bytes);
    // Absent in records written before it existed; null when unknown.
    if (const auto it = j.find("written_bytes"); it != j.end() && !it->is_null())
        w.written_bytes = it->get<double>();
}

// Written out (not NLOHMANN_DEFINE_TYPE_*): those define inline functions, which other
// translation units could not link against.
void to_json(nlohmann::json& j, const CounterValue& c) {
    j = {{"name", c.name},     {"value", c.value},
         {"unit", c.unit},     {"source", c.source},
         {"running_fraction", c.running_fraction}, {"low_confidence", c.low_confidence}};
}
void from_json(const nlohmann::json& j, CounterValue& c) {
    get_field(j, "name", c.name);
    get_field(j, "value", c.value);
    get_field(j, "unit", c.unit);
    get_field(j, "source", c.source);
    get_optional(j, "running_fraction", c.running_fraction);
    get_field(j, "low_confidence", c.low_confidence);
}

void to_json(nlohmann::json& j, const CountedKind& k) {
    j = {{"device", k.device}, {"precision", k.precision}, {"engine", k.engine}};
}
void from_json(const nlohmann::json& j, CountedKind& k) {
    get_field(j, "device", k.device);
    get_field(j, "precision", k.precision);
    get_field(j, "engine", k.engine);
}

void to_json(nlohmann::json& j, const Measurement& m) {
    j = {{"name", m.name},
         {"threads", m.threads},
         {"work", m.work},
         {"durations_s", m.durations_s},
         {"duration_s", m.duration_s},
         {"measured_ops", m.measured_ops},
         {"measured_bytes", m.measured_bytes},
         {"measured_ops_source", m.measured_ops_source},
         {"measured_bytes_source", m.measured_bytes_source},
         {"measured_kind", m.measured_kind},
         {"work_spread", m.work_spread},
         {"counters", m.counters}};
}
void from_json(const nlohmann::json& j, Measurement& m) {
    get_field(j, "name", m.name);
    get_field(j, "threads", m.threads);
    get_optional(j, "work", m.work);
    get_field(j, "durations_s", m.durations_s);
    get_field(j, "duration_s", m.duration_s);
    get_optional(j, "measured_ops", m.measured_ops);
    get_optional(j, "measured_bytes", m.measured_bytes);
    get_optional(j, "measured_ops_source", m.measured_ops_source);
    get_optional(j, "measured_bytes_source", m.measured_bytes_source);
    get_optional(j, "measured_kind", m.measured_kind);  // absent in older records
    get_optional(j, "work_spread", m.work_spread);      // likewise
    get_field(j, "counters", m.counters);
}

}  // namespace ceiling
