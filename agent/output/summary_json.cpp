#include "agent/output/summary_json.hpp"

#include <optional>

#include "diagnosis/format.hpp"
#include "agent/output/run_summary.hpp"
#include "diagnosis/statistics.hpp"

namespace ceiling::output {
namespace {

nlohmann::json optional_json(const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

// A diagnosis without its prose-only parts: what a script branches on, with the system
// evidence that fired by name (kernel time, small calls, page faults, contention, ...).
nlohmann::json compact(const Diagnosis& d) {
    nlohmann::json signals = nlohmann::json::array();
    for (const auto& s : d.system)
        if (s.fired)
            signals.push_back({{"name", s.name},
                               {"value", optional_json(s.value)},
                               {"threshold", s.threshold},
                               {"qualifier", optional_json(s.qualifier)},
                               {"qualifier_value", optional_json(s.qualifier_value)}});
    return {{"bound", optional_json(d.bound)},
            {"diagnosis", d.bound ? nlohmann::json(d.diagnosis) : nlohmann::json(nullptr)},
            {"observation", d.observation},
            {"first_move",
             d.first_move.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.first_move)},
            {"verdict", d.verdict},
            {"level", optional_json(d.level)},
            {"intensity_ops_per_byte", optional_json(d.intensity_ops_per_byte)},
            {"roofs", d.roofs},
            {"signals", signals}};
}

std::optional<double> time_per_execution(const RecordedRegion& reg) {
    const auto& v = reg.total_s_per_execution;
    if (v.empty()) return std::nullopt;
    double s = 0;
    for (double x : v) s += x;
    return s / static_cast<double>(v.size());
}

// The best fraction of a roof of one kind, with that roof's name (level for bandwidth).
struct Best {
    std::optional<double> fraction;
    std::string roof;
};
Best best_fraction(const Diagnosis* d, RoofKind kind) {
    Best b;
    if (!d) return b;
    for (const auto& c : d->roofs)
        if (c.kind == kind && c.fraction && (!b.fraction || *c.fraction > *b.fraction)) {
            b.fraction = c.fraction;
            b.roof = kind == RoofKind::compute ? c.roof : c.level;
        }
    return b;
}

std::string csv_cell(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}
std::string csv_number(std::optional<double> v) {
    if (!v) return "";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", *v);
    return buf;
}

}  // namespace

nlohmann::json summary_json(const RunRecord& r, const std::string& record_path) {
    nlohmann::json j;
    j["schema_version"] = summary_schema_version;
    j["kind"] = r.kind;
    j["record"] = record_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(record_path);
    j["command"] = r.command;
    j["created_at"] = r.created_at;
    j["hostname"] = r.hostname;
    if (r.kind == RecordKind::run) {
        j["end"] = r.end;
        j["exit_status"] = r.end.shell_status();
        j["executions"] = r.timed_executions().size();
        j["wall_s"] = r.whole.duration_s.count ? nlohmann::json(r.whole.duration_s) : nlohmann::json(nullptr);
        j["diagnosis"] = r.diagnosis ? compact(*r.diagnosis) : nlohmann::json(nullptr);
        // ceiling's own time in the program, recording its NVTX ranges (per execution).
        const auto recording = counter_total(r, "nvtx_recording_s");
        const auto timed = r.timed_executions().size();
        j["nvtx_recording_s"] = recording && timed > 0
                                    ? nlohmann::json(*recording / static_cast<double>(timed))
                                    : nlohmann::json(nullptr);
    }
    j["partial"] = r.partial;
    nlohmann::json regions = nlohmann::json::array();
    for (const auto& reg : r.regions) {
        const Diagnosis* d = r.diagnosis_of(reg.path);
        nlohmann::json o = {
            {"path", reg.path},
            {"name", reg.name},
            {"parent", reg.parent.empty() ? nlohmann::json(nullptr) : nlohmann::json(reg.parent)},
            {"kind", reg.kind},
            {"model", reg.model},
            {"instances", reg.instances},
            {"time_s_per_execution", optional_json(time_per_execution(reg))},
            {"duration_s", reg.measurement.duration_s.count
                               ? nlohmann::json(reg.measurement.duration_s)
                               : nlohmann::json(nullptr)},
            {"busy_cores", optional_json(reg.busy_cores)},
            {"descendant_busy_cores", optional_json(reg.descendant_busy_cores)},
            {"other_busy_cores", optional_json(reg.other_busy_cores)},
            {"peak_busy_cores", optional_json(reg.peak_busy_cores)},
            {"working_threads", optional_json(reg.working_threads)},
            {"beside_busy_cores", optional_json(reg.beside_busy_cores)},
            {"unranged_busy_cores", optional_json(reg.unranged_busy_cores)},
            {"storage_read_bytes_per_s", optional_json(reg.storage_read_bytes_per_s)},
            {"storage_write_bytes_per_s", optional_json(reg.storage_write_bytes_per_s)},
            {"storage_wait_threads", optional_json(reg.storage_wait_threads)},
            {"busy_cores_outliers", optional_json(reg.busy_cores_outliers)},
            {"concurrency", optional_json(reg.concurrency)},
            {"diagnosis", d ? compact(*d) : nlohmann::json(nullptr)}};
        if (!reg.labels.empty()) o["labels"] = reg.labels;
        regions.push_back(std::move(o));
    }
    j["regions"] = std::move(regions);
    j["budgets"] = r.budget_checks.empty()
                       ? nlohmann::json(nullptr)
                       : nlohmann::json{{"because", r.budgets && !r.budgets->because.empty()
                                                         ? nlohmann::json(r.budgets->because)
                                                         : nlohmann::json(nullptr)},
                                        {"price_per_hour", r.budgets ? optional_json(r.budgets->price_per_hour)
                                                                     : nlohmann::json(nullptr)},
                                        {"checks", r.budget_checks}};
    j["roof_checks"] = r.roof_checks;
    // A torch run's op types with their verdicts: what the text's op table shows.
    if (!r.op_summary.types.empty() || !r.op_summary.models.empty()) {
        nlohmann::json types = nlohmann::json::array();
        for (const auto& t : r.op_summary.types)
            types.push_back({{"name", t.name},
                             {"calls_per_run", t.calls},
                             {"time_s_per_run", t.time_s},
                             {"ops_per_run", optional_json(t.ops)},
                             {"bytes_per_run", optional_json(t.bytes)},
                             {"busy_cores", optional_json(t.busy_cores)},
                             {"diagnosis", t.judged ? compact(*t.judged) : nlohmann::json(nullptr)}});
        j["op_types"] = std::move(types);
    }
    // What the answer stands on, as the judge decided it (the text's Model / First move).
    if (r.diagnosis) j["answer"] = r.answer;
    j["notes"] = r.notes;
    return j;
}

nlohmann::json diff_json(const RecordDiff& diff, const std::string& before, const std::string& after) {
    static const char* const change_names[] = {"faster", "slower", "within_noise",
                                               "noise_unknown", "only_before", "only_after"};
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : diff.rows)
        rows.push_back({{"name", row.name},
                        {"before_s", optional_json(row.before_s)},
                        {"after_s", optional_json(row.after_s)},
                        {"ratio", optional_json(row.ratio)},
                        {"noise", optional_json(row.noise)},
                        {"before_samples", row.before_count},
                        {"after_samples", row.after_count},
                        {"change", change_names[static_cast<int>(row.change)]},
                        {"rate_ratio", optional_json(row.rate_ratio)},
                        {"bound_before", row.bound_before.empty() ? nlohmann::json(nullptr) : nlohmann::json(row.bound_before)},
                        {"bound_after", row.bound_after.empty() ? nlohmann::json(nullptr) : nlohmann::json(row.bound_after)}});
    return {{"schema_version", summary_schema_version},
            {"before", before},
            {"after", after},
            {"rows", std::move(rows)},
            {"budget_flips", diff.budget_flips},
            {"notes", diff.notes}};
}

namespace {
// The achieved rate a verdict compared with a roof of this kind (its best comparison's).
std::optional<double> achieved(const Diagnosis* d, RoofKind kind) {
    if (!d) return std::nullopt;
    std::optional<double> best;
    for (const auto& c : d->roofs)
        if (c.kind == kind && c.achieved_per_s) best = std::max(best.value_or(0.0), *c.achieved_per_s);
    return best;
}
}  // namespace

std::string regions_csv(const RunRecord& r) {
    std::string out =
        "path,kind,model,instances,time_s_per_execution,p50_s,p99_s,busy_cores,"
        "descendant_busy_cores,other_busy_cores,bound,verdict,compute_roof,compute_fraction,"
        "memory_level,memory_fraction,ops_per_instance,bytes_per_instance,ops_per_s,bytes_per_s,"
        "intensity_ops_per_byte,op_class\n";
    for (const auto& reg : r.regions) {
        const Diagnosis* d = r.diagnosis_of(reg.path);
        const auto& s = reg.measurement.duration_s;
        const Best c = best_fraction(d, RoofKind::compute), m = best_fraction(d, RoofKind::bandwidth);
        const auto& w = reg.measurement.work;  // per instance: declared, analytic or counted
        const auto op_class = reg.labels.find(torch_op_class_label);
        const std::vector<std::string> cells = {
            csv_cell(reg.path),
            std::string(to_string(reg.kind)),
            reg.model ? "true" : "false",
            std::to_string(reg.instances),
            csv_number(time_per_execution(reg)),
            csv_number(s.count ? std::optional(s.median) : std::nullopt),
            csv_number(s.count ? std::optional(s.p99) : std::nullopt),
            csv_number(reg.busy_cores),
            csv_number(reg.descendant_busy_cores),
            csv_number(reg.other_busy_cores),
            d && d->bound ? std::string(to_string(*d->bound)) : "",
            d ? std::string(to_string(d->verdict)) : "",
            csv_cell(c.roof),
            csv_number(c.fraction),
            csv_cell(m.roof),
            csv_number(m.fraction),
            csv_number(w ? std::optional(w->ops) : std::nullopt),
            csv_number(w ? std::optional(w->compulsory_bytes) : std::nullopt),
            csv_number(achieved(d, RoofKind::compute)),
            csv_number(achieved(d, RoofKind::bandwidth)),
            csv_number(d ? d->intensity_ops_per_byte : std::nullopt),
            csv_cell(op_class == reg.labels.end() ? std::string() : op_class->second)};
        for (std::size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cells[i];
        out += "\n";
    }
    return out;
}

}  // namespace ceiling::output
