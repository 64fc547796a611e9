#include "agent/output/run_answer.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "agent/output/run_summary.hpp"
#include "agent/output/table.hpp"
#include "diagnosis/format.hpp"
#include "diagnosis/process_evidence.hpp"
#include "diagnosis/statistics.hpp"

namespace ceiling::output {
namespace {

using A = TextTable::Align;

// A line a person reads without scrolling sideways; longer text is wrapped onto lines that
// start with `indent`.
constexpr std::size_t line_width = 100;

std::vector<std::string> wrapped(const std::string& text, const std::string& first,
                                 const std::string& indent) {
    std::vector<std::string> lines;
    std::string line = first;
    std::istringstream words(text);
    std::string word;
    bool fresh = true;  // nothing but the prefix on this line yet
    while (words >> word) {
        if (!fresh && line.size() + 1 + word.size() > line_width) {
            lines.push_back(line);
            line = indent;
            fresh = true;
        }
        line += (fresh ? "" : " ") + word;
        fresh = false;
    }
    lines.push_back(line);
    return lines;
}

// A fraction of a roof in its band (band_name); above the roof says what that means.
std::string band(Verdict v) {
    if (v == Verdict::above_roof) return "above the roof: a count or the roof is wrong";
    return v == Verdict::unknown ? "" : std::string(band_name(v));
}

// The bound in words; "latency bound" is what the table calls work below both roofs.
std::string bound_words(const Diagnosis& d) {
    if (!d.bound) return "bound unknown";
    if (*d.bound == Bound::latency) return "below both roofs (" + d.diagnosis + ")";
    return d.diagnosis;
}

std::string bound_cell(const Diagnosis* d) {
    if (!d || !d->bound) return "-";
    if (*d->bound == Bound::latency) return "below both";
    return std::string(to_string(*d->bound));
}

// The comparison with the larger fraction: the roof the work is closest to.
const RoofComparison* closest_roof(const Diagnosis* d) {
    const RoofComparison* best = nullptr;
    if (!d) return best;
    for (const auto& c : d->roofs)
        if (c.fraction && (!best || *c.fraction > *best->fraction)) best = &c;
    return best;
}

std::string roof_name(const RoofComparison& c) {
    return c.kind == RoofKind::compute ? c.roof : c.level;
}

std::string roof_cell(const Diagnosis* d) {
    const RoofComparison* c = closest_roof(d);
    if (!c) return "-";
    return percent(*c->fraction) + " " + roof_name(*c) + " (" + band(c->verdict) + ")";
}

std::string rate_cell(const Diagnosis* d) {
    if (!d) return "-";
    for (const auto kind : {RoofKind::compute, RoofKind::bandwidth})
        for (const auto& c : d->roofs)
            if (c.kind == kind && c.achieved_per_s && *c.achieved_per_s > 0)
                return si(*c.achieved_per_s, kind == RoofKind::compute ? "op/s" : "B/s");
    return "-";
}

// Every roof the verdict compared with: "20% of fp32_fma512 (539 Gop/s, mid)".
std::string roofs_text(const Diagnosis& d) {
    std::string text;
    for (const auto& c : d.roofs) {
        if (!c.fraction) continue;
        text += (text.empty() ? "" : ", ") + percent(*c.fraction) + " of " + roof_name(c);
        if (c.roof_per_s)
            text += " (" + si(*c.roof_per_s, c.kind == RoofKind::compute ? "op/s" : "B/s") + ", " +
                    band(c.verdict) + ")";
    }
    return text;
}

std::string shortened(const std::string& name, std::size_t width = 44) {
    if (name.size() <= width) return name;
    return name.substr(0, width - 3) + "...";
}

// A region's path in `width` characters: its leaf and as many enclosing names as fit after
// ".../" (nested regions cut from the right all read as their common outermost names).
std::string shortened_path(const std::string& path, std::size_t width = 44) {
    if (path.size() <= width) return path;
    const std::size_t leaf = path.rfind('/');
    if (leaf == std::string::npos || path.size() - leaf - 1 + 4 > width) {
        return shortened(leaf == std::string::npos ? path : path.substr(leaf + 1), width);
    }
    std::size_t from = leaf;  // the '/' before the kept tail
    for (std::size_t at = leaf; at > 0 && (at = path.rfind('/', at - 1)) != std::string::npos;) {
        if (path.size() - at - 1 + 4 > width) break;
        from = at;
    }
    return ".../" + path.substr(from + 1);
}

double runs_of(const RunRecord& r) {
    return static_cast<double>(std::max<std::size_t>(1, r.timed_executions().size()));
}

// What ran: how it ended, its wall time, the cores it kept busy, its peak memory.
void what_ran(const RunRecord& r, std::vector<std::string>& lines) {
    lines.push_back("ceiling run: " + command_line(r.command));
    if (r.partial) lines.push_back("  PARTIAL: " + r.partial_reason);
    std::string facts = "  " + r.end.message;
    const auto& wall = r.whole.duration_s;
    if (wall.count > 0) {
        facts += wall.count == 1 ? "; wall " + duration(wall.median) + " (1 run)"
                                 : "; wall p50 " + duration(wall.median) + ", p99 " +
                                       duration(wall.p99) + " (" + std::to_string(wall.count) + " runs)";
        const auto user = counter_total(r, "user_s"), sys = counter_total(r, "system_s");
        if (user && sys && wall.mean > 0) {
            facts += "; " + fixed((*user + *sys) / runs_of(r) / wall.mean, 2) + " cores busy";
            if (const int cpus = r.machine_profile ? r.machine_profile->host.logical_cpus : 0; cpus > 0)
                facts += " of " + std::to_string(cpus);
        }
    }
    if (const auto peak = peak_memory_bytes(r)) facts += "; peak memory " + bytes(*peak);
    lines.push_back(facts);
}

// A torch run: its op types inside models, longest first, as the op summary judged them.
std::vector<std::vector<std::string>> op_type_rows(const RunRecord& r) {
    std::vector<std::vector<std::string>> rows;
    double op_time = 0;
    for (const auto& t : r.op_summary.types) op_time += t.time_s;
    for (const auto& t : r.op_summary.types) {
        const Diagnosis* d = t.judged ? &*t.judged : nullptr;
        rows.push_back({shortened(t.name), count_text(t.calls), duration(t.time_s),
                        op_time > 0 ? percent(t.time_s / op_time) : "-",
                        t.ops ? si(*t.ops, "") : "no formula", t.bytes ? bytes(*t.bytes) : "-",
                        rate_cell(d), roof_cell(d), bound_cell(d)});
    }
    return rows;
}

// Torch ops outside any model (initialisation, random fills, allocation, views, scalar
// reads): one line with their time, not a verdict each.
std::string outside_model_line(const RunRecord& r) {
    double time_s = 0, calls = 0;
    std::set<std::string> classes;
    for (const auto& reg : r.regions) {
        if (reg.model || reg.label(torch_role_label) != "op") continue;
        time_s += reg.total_s_per_execution.empty() ? 0.0 : mean(reg.total_s_per_execution);
        calls += static_cast<double>(reg.instances) / runs_of(r);
        if (const auto c = reg.label(torch_op_class_label); !c.empty()) classes.insert(c);
    }
    if (calls == 0) return "";
    std::string kinds;
    for (const auto& c : classes) kinds += (kinds.empty() ? "" : ", ") + c;
    return "ops outside the model: " + count_text(calls) + " calls, " + duration(time_s) +
           " per run (" + kinds + ")";
}

// Any other run: its regions by time, torch ops and modules inside models left to the op
// summary and torch ops outside models to their one line.
std::vector<std::vector<std::string>> region_rows(const RunRecord& r) {
    std::vector<const RecordedRegion*> shown;
    for (const auto& reg : r.regions) {
        if (summarised_by_ops(reg) || reg.label(torch_role_label) == "op") continue;
        shown.push_back(&reg);
    }
    auto time_of = [](const RecordedRegion* g) {
        return g->total_s_per_execution.empty() ? 0.0 : mean(g->total_s_per_execution);
    };
    std::stable_sort(shown.begin(), shown.end(),
                     [&](const auto* a, const auto* b) { return time_of(a) > time_of(b); });
    const double wall = r.whole.duration_s.count ? r.whole.duration_s.mean : 0.0;
    std::vector<std::vector<std::string>> rows;
    for (const auto* g : shown) {
        const Diagnosis* d = r.diagnosis_of(g->path);
        const double n = static_cast<double>(g->instances) / runs_of(r);
        const auto& w = g->measurement.work;
        rows.push_back({shortened_path(g->path), count_text(n), duration(time_of(g)),
                        wall > 0 ? percent(time_of(g) / wall) : "-",
                        w ? si(w->ops * n, "") : "-", w ? bytes(w->compulsory_bytes * n) : "-",
                        rate_cell(d), roof_cell(d), bound_cell(d)});
    }
    return rows;
}

// Where the time went: at most `room` rows, the rest counted in one line.
void time_table(const RunRecord& r, std::size_t room, std::vector<std::string>& lines) {
    const bool torch = !r.op_summary.types.empty();
    auto rows = torch ? op_type_rows(r) : region_rows(r);
    if (rows.empty()) {
        const bool torch_ops = std::any_of(r.regions.begin(), r.regions.end(), [](const RecordedRegion& g) {
            return g.label(torch_role_label) == "op";
        });
        if (torch_ops)
            for (const auto& l : wrapped("No model: its PyTorch ops ran outside any nn.Module call (a "
                                         "module call's ops are tabled by type; these are summed below).",
                                         "", "  "))
                lines.push_back(l);
        else if (r.kind == RecordKind::run)
            lines.push_back("No NVTX regions recorded (annotate with NVTX ranges to see where the "
                            "time goes; `--torch` for a PyTorch script).");
        return;
    }
    lines.push_back(torch ? "PyTorch ops by type (model ops, per run)"
                          : "Where the time went (regions by time, per run)");
    TextTable t;
    t.column(torch ? "type" : "region").column(torch ? "calls" : "count", A::right)
        .column("time", A::right).column(torch ? "share" : "of wall", A::right)
        .column("FLOPs", A::right).column("bytes", A::right).column("rate", A::right)
        .column("closest roof").column("bound");
    const std::size_t kept = std::min(rows.size(), room);
    for (std::size_t i = 0; i < kept; ++i) t.row(rows[i]);
    std::ostringstream text;
    t.render(text);
    std::string line;
    std::istringstream in(text.str());
    while (std::getline(in, line)) lines.push_back(line);
    if (rows.size() > kept)
        lines.push_back("  ... " + std::to_string(rows.size() - kept) + " more " +
                        (torch ? "op types" : "regions") + " (--detail)");
}

struct Verdicts {
    std::vector<std::string> lines;       // the run's and the model's
    std::vector<std::string> first_move;  // the answer, printed last
};

// The verdicts: the run's, the model's (where a region stood for it), and the first move.
Verdicts verdicts(const RunRecord& r) {
    Verdicts v;
    if (!r.machine_profile)
        v.lines.push_back("No machine profile: nothing placed on the roofline (run `ceiling machine`).");
    if (!r.diagnosis) return v;
    const Diagnosis& run = *r.diagnosis;
    const bool contended = contention_of(run) != nullptr;
    auto add = [](std::vector<std::string>& to, const std::vector<std::string>& more) {
        to.insert(to.end(), more.begin(), more.end());
    };
    add(v.lines, wrapped(bound_words(run) + (run.observation.empty() ? "" : ": " + run.observation) +
                             (contended ? " (taken under contention: other work held CPUs)" : ""),
                         "Run:   ", "       "));
    // The region whose verdict stands beside the run's, as the judge chose it (answer.hpp).
    const RunAnswer& a = r.answer;
    if (const Diagnosis* stand_in = a.stand_in ? r.diagnosis_of(a.stand_in->path) : nullptr)
        add(v.lines, wrapped(shortened_path(a.stand_in->path, 60) + ": " + bound_words(*stand_in) +
                                 (stand_in->roofs.empty() ? "" : ": " + roofs_text(*stand_in)),
                             a.stand_in_kind == StandIn::model ? "Model: " : "Longest judged region: ",
                             "       "));
    if (a.first_move.empty()) return v;
    add(v.first_move, wrapped(a.first_move + (a.expected_gain.empty() ? "" : " (" + a.expected_gain + ")"),
                              "First move: ", "            "));
    return v;
}

std::size_t findings_count(const RunRecord& r) {
    std::size_t n = r.notes.size();
    if (r.diagnosis) n += r.diagnosis->findings.size();
    for (const auto& v : r.region_diagnoses) n += v.diagnosis.findings.size();
    return n;
}

void budgets_line(const RunRecord& r, std::vector<std::string>& lines) {
    if (r.budget_checks.empty()) return;
    std::size_t pass = 0;
    std::string failed;
    for (const auto& c : r.budget_checks) {
        if (c.outcome == BudgetOutcome::pass) ++pass;
        if (c.outcome == BudgetOutcome::fail)
            failed += (failed.empty() ? "" : ", ") + (c.region.empty() ? "" : c.region + ": ") + c.name;
    }
    lines.push_back("Budgets: " + std::to_string(pass) + " of " + std::to_string(r.budget_checks.size()) +
                    " pass" + (failed.empty() ? "" : "; missed: " + failed));
}

}  // namespace

void render_run_answer(const RunRecord& r, std::ostream& out) {
    std::vector<std::string> head, after_table;
    what_ran(r, head);
    if (const std::string outside = outside_model_line(r); !outside.empty())
        for (const auto& l : wrapped(outside, "  ", "    ")) after_table.push_back(l);
    after_table.push_back("  (" + std::to_string(findings_count(r)) +
                          " findings and notes, every region, the system's evidence: --detail, "
                          "or `ceiling report --detail RECORD`)");
    after_table.push_back("");
    const Verdicts v = verdicts(r);
    after_table.insert(after_table.end(), v.lines.begin(), v.lines.end());
    budgets_line(r, after_table);
    // The table gets what room is left: the blank line after what ran, its title, header and
    // "more" line take four.
    const std::size_t fixed_lines = head.size() + after_table.size() + v.first_move.size() + 4;
    const std::size_t room =
        answer_max_lines > fixed_lines ? std::min(answer_max_rows, answer_max_lines - fixed_lines) : 1;
    std::vector<std::string> table;
    time_table(r, std::max<std::size_t>(1, room), table);
    for (const auto& l : head) out << l << "\n";
    out << "\n";
    for (const auto& l : table) out << l << "\n";
    for (const auto& l : after_table) out << l << "\n";
    for (const auto& l : v.first_move) out << l << "\n";
}

}  // namespace ceiling::output
