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
    j.at("precision").get_to(w.precision);
    j.at("engine").get_to(w.engine);
    j.at("device").get_to(w.device);
    j.at("ops").get_to(w.ops);
    j.at("compulsory_bytes").get_to(w.compulsory_bytes);
    j.at("working_set_bytes").get_to(w.working_set_bytes);
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
    j.at("name").get_to(c.name);
    j.at("value").get_to(c.value);
    j.at("unit").get_to(c.unit);
    j.at("source").get_to(c.source);
    get_optional(j, "running_fraction", c.running_fraction);
    j.at("low_confidence").get_to(c.low_confidence);
}

void to_json(nlohmann::json& j, const CountedKind& k) {
    j = {{"device", k.device}, {"precision", k.precision}, {"engine", k.engine}};
}
void from_json(const nlohmann::json& j, CountedKind& k) {
    j.at("device").get_to(k.device);
    j.at("precision").get_to(k.precision);
    j.at("engine").get_to(k.engine);
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
    j.at("name").get_to(m.name);
    j.at("threads").get_to(m.threads);
    get_optional(j, "work", m.work);
    j.at("durations_s").get_to(m.durations_s);
    j.at("duration_s").get_to(m.duration_s);
    get_optional(j, "measured_ops", m.measured_ops);
    get_optional(j, "measured_bytes", m.measured_bytes);
    get_optional(j, "measured_ops_source", m.measured_ops_source);
    get_optional(j, "measured_bytes_source", m.measured_bytes_source);
    get_optional(j, "measured_kind", m.measured_kind);  // absent in older records
    get_optional(j, "work_spread", m.work_spread);      // likewise
    j.at("counters").get_to(m.counters);
}

}  // namespace ceiling
