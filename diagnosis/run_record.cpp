#include "diagnosis/run_record.hpp"

#include <algorithm>
#include <stdexcept>

#include "diagnosis/json_support.hpp"
#include "diagnosis/quantity_domains.hpp"
#include "diagnosis/statistics.hpp"

namespace ceiling {

int ProcessEnd::shell_status() const {
    switch (kind) {
        case EndKind::exited:
            return exit_code.value_or(0);
        case EndKind::signaled:
            return 128 + signal.value_or(0);
        case EndKind::not_started:
            return exit_code.value_or(127);  // 127 not found, 126 found but not executable
    }
    return 127;
}

std::vector<const Execution*> RunRecord::timed_executions() const {
    std::vector<const Execution*> out;
    for (const auto& e : executions)
        if (!e.warmup && !e.counting) out.push_back(&e);
    return out;
}

double RecordedRegion::open_s_per_execution() const {
    return mean(total_s_per_execution) / std::max(1.0, concurrency.value_or(1.0));
}

std::optional<double> RecordedRegion::with_descendants_cores() const {
    // Workers beside an op that computes itself (a core or more: an op on the main thread of
    // a training loop), a data loader's eight on a large machine, must not make it a
    // pool-wide piece of work judged at nine cores. Nor where its process wanted a CPU and
    // queued for one: two loader workers on two CPUs left a forward pass 0.12 cores, and it
    // read as their work at 1.83.
    const double own = busy_cores.value_or(0.0);
    if (!descendant_busy_cores || !(own + queued_threads.value_or(0.0) < waited_below_cores) ||
        !(*descendant_busy_cores > own))
        return std::nullopt;
    return own + *descendant_busy_cores;
}

std::optional<double> RecordedRegion::held_cores(const Thresholds& t,
                                                 std::optional<double> usable) const {
    if (!busy_cores || !peak_busy_cores) return std::nullopt;
    const double held = usable ? std::min(*peak_busy_cores, *usable) : *peak_busy_cores;
    if (held < t.held_cores_ratio * std::max(1.0, *busy_cores)) return std::nullopt;
    return held;
}

namespace {
// The first element of `items` whose path is `path`, through `index` (RunRecord::PathIndex).
// A hit whose element no longer has that path (a path changed in place) rebuilds the index.
template <typename Index, typename T>
const T* by_path(const std::vector<T>& items, Index& index, const std::string& path) {
    const auto build = [&] {
        index.at.clear();
        for (std::size_t i = 0; i < items.size(); ++i) index.at.try_emplace(items[i].path, i);
        index.data = items.data();
        index.size = items.size();
    };
    if (index.data != items.data() || index.size != items.size()) build();
    auto it = index.at.find(path);
    if (it != index.at.end() && items[it->second].path != path) {
        build();
        it = index.at.find(path);
    }
    return it == index.at.end() ? nullptr : &items[it->second];
}
}  // namespace

const RecordedRegion* RunRecord::region(const std::string& path) const {
    return by_path(regions, region_index_, path);
}

const Diagnosis* RunRecord::diagnosis_of(const std::string& path) const {
    const RegionVerdict* v = by_path(region_diagnoses, diagnosis_index_, path);
    return v ? &v->diagnosis : nullptr;
}

std::string_view to_string(RecordKind k) { return enum_name(k, record_kind_names); }
std::string_view to_string(EndKind k) { return enum_name(k, end_kind_names); }
std::string_view to_string(RegionKind k) { return enum_name(k, region_kind_names); }

void to_json(nlohmann::json& j, RecordKind k) { j = std::string(to_string(k)); }
void from_json(const nlohmann::json& j, RecordKind& k) {
    k = enum_from_json<RecordKind>(j, record_kind_names, "record kind");
}
void to_json(nlohmann::json& j, EndKind k) { j = std::string(to_string(k)); }
void from_json(const nlohmann::json& j, EndKind& k) {
    k = enum_from_json<EndKind>(j, end_kind_names, "end kind");
}
void to_json(nlohmann::json& j, RegionKind k) { j = std::string(to_string(k)); }
void from_json(const nlohmann::json& j, RegionKind& k) {
    k = enum_from_json<RegionKind>(j, region_kind_names, "region kind");
}

void to_json(nlohmann::json& j, const ProcessEnd& e) {
    j = {{"kind", e.kind},
         {"exit_code", e.exit_code},
         {"signal", e.signal},
         {"signal_name", e.signal_name},
         {"core_dumped", e.core_dumped},
         {"message", e.message},
         {"shell_status", e.shell_status()}};
}
void from_json(const nlohmann::json& j, ProcessEnd& e) {
    get_field(j, "kind", e.kind);
    get_optional(j, "exit_code", e.exit_code);
    get_optional(j, "signal", e.signal);
    get_field(j, "signal_name", e.signal_name);
    get_field(j, "core_dumped", e.core_dumped);
    get_field(j, "message", e.message);
}

void to_json(nlohmann::json& j, const Series& s) {
    j = {{"name", s.name}, {"unit", s.unit}, {"source", s.source}, {"t_s", s.t_s}, {"values", s.values}};
}
void from_json(const nlohmann::json& j, Series& s) {
    get_field(j, "name", s.name);
    get_field(j, "unit", s.unit);
    get_field(j, "source", s.source);
    get_field(j, "t_s", s.t_s);
    get_field(j, "values", s.values);
    if (s.t_s.size() != s.values.size())
        throw std::invalid_argument("series '" + s.name + "': t_s and values differ in length");
}

void to_json(nlohmann::json& j, const ProcessUse& p) {
    j = {{"pid", p.pid}, {"name", p.name}, {"cpu_s", p.cpu_s}, {"seen_s", p.seen_s}};
}
void from_json(const nlohmann::json& j, ProcessUse& p) {
    get_field(j, "pid", p.pid);
    get_field(j, "name", p.name);
    get_field(j, "cpu_s", p.cpu_s);
    get_field(j, "seen_s", p.seen_s);
}

void to_json(nlohmann::json& j, const Execution& e) {
    j = {{"index", e.index},      {"warmup", e.warmup},     {"pid", e.pid},
         {"wall_s", e.wall_s},    {"end", e.end},           {"counters", e.counters},
         {"time_series", e.time_series}};
    if (e.counting) j["counting"] = true;  // absent otherwise, as in older records
    if (!e.processes.empty()) j["processes"] = e.processes;
}
void from_json(const nlohmann::json& j, Execution& e) {
    get_field(j, "index", e.index);
    get_field(j, "warmup", e.warmup);
    get_optional(j, "pid", e.pid);
    get_field(j, "wall_s", e.wall_s);
    get_field(j, "end", e.end);
    get_field(j, "counters", e.counters);
    get_field(j, "time_series", e.time_series);
    e.counting = j.value("counting", false);
    if (j.contains("processes")) get_field(j, "processes", e.processes);
}

void to_json(nlohmann::json& j, const RecordedRegion& r) {
    j = {{"kind", r.kind},
         {"path", r.path},
         {"name", r.name},
         {"parent", r.parent},
         {"domain", r.domain},
         {"model", r.model},
         {"instances", r.instances},
         {"threads", r.threads},
         {"processes", r.processes},
         {"unclosed", r.unclosed},
         {"total_s_per_execution", r.total_s_per_execution},
         {"self_s", r.self_s},
         {"busy_cores", r.busy_cores},
         {"busy_cores_error", r.busy_cores_error},
         {"busy_cores_outliers", r.busy_cores_outliers},
         {"descendant_busy_cores", r.descendant_busy_cores},
         {"descendant_busy_cores_error", r.descendant_busy_cores_error},
         {"queued_threads", r.queued_threads},
         {"other_busy_cores", r.other_busy_cores},
         {"peak_busy_cores", r.peak_busy_cores},
         {"working_threads", r.working_threads},
         {"beside_busy_cores", r.beside_busy_cores},
         {"unranged_busy_cores", r.unranged_busy_cores},
         {"storage_read_bytes_per_s", r.storage_read_bytes_per_s},
         {"storage_write_bytes_per_s", r.storage_write_bytes_per_s},
         {"system_busy_cores", r.system_busy_cores},
         {"storage_wait_threads", r.storage_wait_threads},
         {"concurrency", r.concurrency},
         {"non_model_s", r.non_model_s},
         {"measurement", r.measurement},
         {"durations_subsampled", r.durations_subsampled},
         {"labels", r.labels}};
}
void from_json(const nlohmann::json& j, RecordedRegion& r) {
    get_field(j, "kind", r.kind);
    get_field(j, "path", r.path);
    get_field(j, "name", r.name);
    get_field(j, "parent", r.parent);
    get_field(j, "domain", r.domain);
    get_field(j, "model", r.model);
    get_field(j, "instances", r.instances);
    get_field(j, "threads", r.threads);
    get_field(j, "processes", r.processes);
    get_field(j, "unclosed", r.unclosed);
    get_field(j, "total_s_per_execution", r.total_s_per_execution);
    get_optional(j, "self_s", r.self_s);
    get_optional(j, "busy_cores", r.busy_cores);
    get_optional(j, "busy_cores_error", r.busy_cores_error);
    get_optional(j, "busy_cores_outliers", r.busy_cores_outliers);
    get_optional(j, "descendant_busy_cores", r.descendant_busy_cores);
    get_optional(j, "descendant_busy_cores_error", r.descendant_busy_cores_error);
    get_optional(j, "queued_threads", r.queued_threads);
    get_optional(j, "other_busy_cores", r.other_busy_cores);
    get_optional(j, "peak_busy_cores", r.peak_busy_cores);
    get_optional(j, "working_threads", r.working_threads);
    get_optional(j, "beside_busy_cores", r.beside_busy_cores);
    get_optional(j, "unranged_busy_cores", r.unranged_busy_cores);
    get_optional(j, "storage_read_bytes_per_s", r.storage_read_bytes_per_s);
    get_optional(j, "storage_write_bytes_per_s", r.storage_write_bytes_per_s);
    get_optional(j, "system_busy_cores", r.system_busy_cores);
    get_optional(j, "storage_wait_threads", r.storage_wait_threads);
    get_optional(j, "concurrency", r.concurrency);
    get_optional(j, "non_model_s", r.non_model_s);
    get_field(j, "measurement", r.measurement);
    get_field(j, "durations_subsampled", r.durations_subsampled);
    if (j.contains("labels")) get_field(j, "labels", r.labels);
}

void to_json(nlohmann::json& j, const RegionVerdict& v) {
    j = {{"path", v.path}, {"diagnosis", v.diagnosis}};
}
void from_json(const nlohmann::json& j, RegionVerdict& v) {
    get_field(j, "path", v.path);
    get_field(j, "diagnosis", v.diagnosis);
}

void to_json(nlohmann::json& j, const RunOptions& o) {
    j = {{"repeat", o.repeat},
         {"warmup", o.warmup},
         {"interval_s", o.interval_s},
         {"model_regions", o.model_regions}};
}
void from_json(const nlohmann::json& j, RunOptions& o) {
    get_field(j, "repeat", o.repeat);
    get_field(j, "warmup", o.warmup);
    get_optional(j, "interval_s", o.interval_s);
    get_optional(j, "model_regions", o.model_regions);
}

void to_json(nlohmann::json& j, const RunRecord& r) {
    j = {{"schema_version", r.schema_version},
         {"kind", r.kind},
         {"created_at", r.created_at},
         {"command", r.command},
         {"executable", r.executable},
         {"working_directory", r.working_directory},
         {"hostname", r.hostname},
         {"rank", r.rank},
         {"world_size", r.world_size},
         {"rank_source", r.rank_source},
         {"versions", r.versions},
         {"environment", r.environment},
         {"options", r.options},
         {"partial", r.partial},
         {"partial_reason", r.partial_reason},
         {"end", r.end},
         {"executions", r.executions},
         {"whole", r.whole},
         {"regions", r.regions},
         {"model_time_s_per_execution", r.model_time_s_per_execution},
         {"region_time_s_per_execution", r.region_time_s_per_execution},
         {"before_regions_s_per_execution", r.before_regions_s_per_execution},
         {"after_regions_s_per_execution", r.after_regions_s_per_execution},
         {"machine_profile", r.machine_profile},
         {"machine_profile_path", r.machine_profile_path},
         {"thresholds", r.thresholds},
         {"budgets", r.budgets},
         {"budget_checks", r.budget_checks},
         {"diagnosis", r.diagnosis},
         {"region_diagnoses", r.region_diagnoses},
         {"notes", r.notes},
         {"roof_checks", r.roof_checks}};
    if (!r.op_summary.empty()) j["op_summary"] = r.op_summary;
    if (!r.model_region.empty()) j["model_region"] = r.model_region;
    if (r.diagnosis) j["answer"] = r.answer;
}

// The unit is in the field names: bytes/s for a bandwidth roof, ops/s for a compute roof.
void to_json(nlohmann::json& j, const RoofCheck& c) {
    const std::string unit = c.kind == RoofKind::compute ? "ops" : "bytes";
    j = {{"kind", c.kind},
         {"level", c.level},
         {"kernel", c.kernel},
         {"threads", c.threads},
         {"profile_" + unit + "_per_s", c.profile_per_s},
         {"now_" + unit + "_per_s", c.now_per_s}};
    if (c.slowest_per_s) j["now_slowest_" + unit + "_per_s"] = *c.slowest_per_s;
    if (c.profile_threads) j["profile_threads"] = *c.profile_threads;
    if (!c.beside.empty()) j["beside"] = c.beside;
}
void from_json(const nlohmann::json& j, RoofCheck& c) {
    c.kind = j.contains("kind") ? j.at("kind").get<RoofKind>() : RoofKind::bandwidth;
    const std::string unit = c.kind == RoofKind::compute ? "ops" : "bytes";
    get_field(j, "level", c.level);
    get_field(j, "kernel", c.kernel);
    get_field(j, "threads", c.threads);
    get_field(j, "profile_" + unit + "_per_s", c.profile_per_s);
    get_field(j, "now_" + unit + "_per_s", c.now_per_s);
    if (const auto s = j.find("now_slowest_" + unit + "_per_s"); s != j.end() && !s->is_null())
        c.slowest_per_s = s->get<double>();
    if (const auto t = j.find("profile_threads"); t != j.end() && !t->is_null())
        c.profile_threads = t->get<int>();
    if (const auto b = j.find("beside"); b != j.end() && !b->is_null()) get_field(j, "beside", c.beside);
}

void from_json(const nlohmann::json& j, RunRecord& r) {
    if (!j.is_object()) throw std::invalid_argument("a run record must be a JSON object");
    const auto version = j.find("schema_version");
    if (version == j.end() || !version->is_number_integer())
        throw std::invalid_argument("not a run record: no integer schema_version");
    if (version->get<int>() != run_record_schema_version)
        throw std::invalid_argument("run record schema_version " + std::to_string(version->get<int>()) +
                                    ", this ceiling reads " +
                                    std::to_string(run_record_schema_version));
    try {
        r.schema_version = version->get<int>();
        get_field(j, "kind", r.kind);
        get_field(j, "created_at", r.created_at);
        get_field(j, "command", r.command);
        get_field(j, "executable", r.executable);
        get_field(j, "working_directory", r.working_directory);
        get_field(j, "hostname", r.hostname);
        get_optional(j, "rank", r.rank);
        get_optional(j, "world_size", r.world_size);
        get_field(j, "rank_source", r.rank_source);
        get_field(j, "versions", r.versions);
        get_field(j, "environment", r.environment);
        get_field(j, "options", r.options);
        get_field(j, "partial", r.partial);
        get_field(j, "partial_reason", r.partial_reason);
        get_field(j, "end", r.end);
        get_field(j, "executions", r.executions);
        get_field(j, "whole", r.whole);
        get_field(j, "regions", r.regions);
        get_field(j, "model_time_s_per_execution", r.model_time_s_per_execution);
        get_field(j, "region_time_s_per_execution", r.region_time_s_per_execution);
        if (j.contains("before_regions_s_per_execution"))
            get_field(j, "before_regions_s_per_execution", r.before_regions_s_per_execution);
        if (j.contains("after_regions_s_per_execution"))
            get_field(j, "after_regions_s_per_execution", r.after_regions_s_per_execution);
        get_optional(j, "machine_profile", r.machine_profile);
        get_field(j, "machine_profile_path", r.machine_profile_path);
        get_field(j, "thresholds", r.thresholds);
        get_optional(j, "budgets", r.budgets);
        get_field(j, "budget_checks", r.budget_checks);
        get_optional(j, "diagnosis", r.diagnosis);
        get_field(j, "region_diagnoses", r.region_diagnoses);
        get_field(j, "notes", r.notes);
        // Records written before roof checks existed have none.
        if (j.contains("roof_checks")) get_field(j, "roof_checks", r.roof_checks);
        // Only torch runs have an op summary.
        if (j.contains("op_summary")) get_field(j, "op_summary", r.op_summary);
        if (j.contains("model_region")) get_field(j, "model_region", r.model_region);
        // Records written before the answer was kept are judged again when read (report).
        if (j.contains("answer")) get_field(j, "answer", r.answer);
    } catch (const std::invalid_argument& e) {
        // FieldError names the member by its path ("regions[3].unclosed: type must be ...").
        throw std::invalid_argument(std::string("malformed run record: ") + e.what());
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(std::string("malformed run record: ") + json_detail::library_words(e));
    }
}

RunRecord parse_run_record(const std::string& text) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {  // also out_of_range: a number beyond double
        throw std::invalid_argument(std::string("not valid JSON: ") + e.what());
    }
    if (j.is_object() && !j.contains("kind") && j.contains("compute_roofs"))
        throw std::invalid_argument(
            "this is a machine profile, not a run record (`ceiling machine --show --output FILE` "
            "shows it; `run`, `suite` and `bound` take it with --profile)");
    if (const auto bad = find_out_of_domain(j)) throw std::invalid_argument(*bad);
    return j.get<RunRecord>();
}

std::vector<double> subsample(const std::vector<double>& values, std::size_t limit) {
    if (values.size() <= limit) return values;
    std::vector<double> out;
    if (limit == 0) return out;
    out.reserve(limit);
    // Evenly spaced ranks keep the shape of the sequence (warm-up drift, phases), which a
    // random sample would blur.
    const double step = static_cast<double>(values.size()) / static_cast<double>(limit);
    for (std::size_t i = 0; i < limit; ++i)
        out.push_back(values[static_cast<std::size_t>(static_cast<double>(i) * step)]);
    return out;
}

std::optional<double> per_run(const RunRecord& r, const std::string& name) {
    std::optional<double> sum;
    const auto timed = r.timed_executions();
    for (const Execution* e : timed)
        for (const auto& c : e->counters)
            if (c.name == name) sum = sum.value_or(0.0) + c.value;
    if (!sum || timed.empty()) return std::nullopt;
    return *sum / static_cast<double>(timed.size());
}

std::optional<double> counter_peak(const RunRecord& r, const std::string& name) {
    std::optional<double> m;
    for (const Execution* e : r.timed_executions())
        for (const auto& c : e->counters)
            if (c.name == name) m = std::max(m.value_or(0.0), c.value);
    return m;
}

std::optional<double> peak_memory_bytes(const RunRecord& r) {
    if (auto tree = counter_peak(r, "peak_tree_rss_bytes")) return tree;
    // Never max_rss_bytes (older records): wait4's peak includes ceiling's own memory.
    return counter_peak(r, "peak_rss_bytes");
}

CpuLimits cpu_limits(const RunRecord& r) {
    return {counter_peak(r, "affinity_cpus"), per_run(r, "cpu_quota_cpus")};
}

std::optional<double> within(const CpuLimits& l, std::optional<double> cpus) {
    for (const auto& limit : {l.affinity, l.quota})
        if (limit) cpus = std::min(cpus.value_or(*limit), *limit);
    return cpus;
}

std::optional<double> usable_cpus(const RunRecord& r) {
    std::optional<double> cpus;
    if (r.machine_profile && r.machine_profile->host.logical_cpus > 0)
        cpus = r.machine_profile->host.logical_cpus;
    return within(cpu_limits(r), cpus);
}

}  // namespace ceiling
