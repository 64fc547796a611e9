#include "agent/output/diff.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "diagnosis/format.hpp"
#include "agent/output/table.hpp"
#include "diagnosis/decision.hpp"

namespace ceiling::output {

namespace {

struct Side {
    std::optional<double> median_s;
    double spread = 0;
    std::size_t count = 0;
    std::optional<double> rate;  // ops (or bytes) per second from declared / analytic work
    std::string bound;
};

// Regions compare on their total time per execution (what a run spends in them); kernels
// on the duration of one execution (what the suite timed).
Side side_of(const RecordedRegion& r) {
    Side s;
    std::vector<double> samples =
        r.kind == RegionKind::kernel ? r.measurement.durations_s : r.total_s_per_execution;
    if (samples.empty() && r.measurement.duration_s.count > 0)
        samples = {r.measurement.duration_s.median};
    if (samples.empty()) return s;
    const Summary sum = summarize(samples);
    s.median_s = sum.median;
    s.spread = sum.rel_spread;
    s.count = sum.count;
    if (r.measurement.work && r.measurement.duration_s.count > 0 &&
        r.measurement.duration_s.median > 0) {
        const Work& w = *r.measurement.work;
        const double amount = w.ops > 0 ? w.ops : w.compulsory_bytes;
        if (amount > 0) s.rate = amount / r.measurement.duration_s.median;
    }
    return s;
}

Side side_of_whole(const RunRecord& r) {
    Side s;
    if (r.whole.duration_s.count == 0) return s;
    s.median_s = r.whole.duration_s.median;
    s.spread = r.whole.duration_s.rel_spread;
    s.count = r.whole.duration_s.count;
    return s;
}

// The bound's name, with the row's own words where it came from another row than the bound's
// first ("not_the_model (I/O bound)" beside the model-share row's plain "not_the_model").
std::string bound_text(const Diagnosis& d) {
    if (!d.bound) return "unknown";
    std::string s(to_string(*d.bound));
    const std::string_view first = decision_row(*d.bound).diagnosis;
    if (d.diagnosis != first) {
        const auto open = d.diagnosis.rfind('('), close = d.diagnosis.rfind(')');
        if (open != std::string::npos && close != std::string::npos && close > open)
            s += " " + d.diagnosis.substr(open, close - open + 1);
    }
    return s;
}

// The engine's verdict for the whole run (empty path) or a region, where the record has one.
std::string bound_of(const RunRecord& r, const std::string& path) {
    if (path.empty()) return r.diagnosis ? bound_text(*r.diagnosis) : std::string();
    for (const auto& v : r.region_diagnoses)
        if (v.path == path) return bound_text(v.diagnosis);
    return {};
}

DiffRow compare(const std::string& name, const Side& a, const Side& b) {
    DiffRow row;
    row.name = name;
    row.before_s = a.median_s;
    row.after_s = b.median_s;
    row.before_count = a.count;
    row.after_count = b.count;
    row.bound_before = a.bound;
    row.bound_after = b.bound;
    if (!a.median_s) {
        row.change = Change::only_after;
        return row;
    }
    if (!b.median_s) {
        row.change = Change::only_before;
        return row;
    }
    if (*a.median_s > 0) row.ratio = *b.median_s / *a.median_s;
    if (a.rate && b.rate) row.rate_ratio = *b.rate / *a.rate;
    if (a.count < 2 || b.count < 2 || !row.ratio) {
        row.change = Change::noise_unknown;  // one sample shows no spread: --repeat to know
        return row;
    }
    row.noise = std::max(a.spread, b.spread);
    const double threshold = std::max(*row.noise, min_significant_change);
    row.change = std::fabs(*row.ratio - 1) <= threshold ? Change::within_noise
                 : *row.ratio < 1                       ? Change::faster
                                                        : Change::slower;
    return row;
}

std::map<std::string, BudgetOutcome> budget_outcomes(const RunRecord& r) {
    std::map<std::string, BudgetOutcome> out;
    for (const auto& c : r.budget_checks) out[c.region.empty() ? c.name : c.region + ": " + c.name] = c.outcome;
    return out;
}

std::string outcome_text(BudgetOutcome o) {
    return o == BudgetOutcome::pass ? "passed" : o == BudgetOutcome::fail ? "MISSED" : "unknown";
}

std::string change_text(const DiffRow& r) {
    switch (r.change) {
        case Change::faster:
            return "faster";
        case Change::slower:
            return "SLOWER";
        case Change::within_noise:
            return "within noise";
        case Change::noise_unknown:
            return "noise unknown (1 run; use --repeat)";
        case Change::only_before:
            return "only before";
        case Change::only_after:
            return "only after";
    }
    return "";
}

}  // namespace

RecordDiff diff_records(const RunRecord& before, const RunRecord& after) {
    RecordDiff d;
    Side wa = side_of_whole(before), wb = side_of_whole(after);
    wa.bound = bound_of(before, "");
    wb.bound = bound_of(after, "");
    // A suite's wall time depends on which cases it ran: suites compare kernel by kernel.
    const bool suites = before.kind == RecordKind::suite && after.kind == RecordKind::suite;
    if ((wa.median_s || wb.median_s) && !suites) d.rows.push_back(compare("whole run", wa, wb));
    std::vector<std::string> paths;
    std::set<std::string> seen;
    for (const auto* r : {&before, &after})
        for (const auto& reg : r->regions)
            if (seen.insert(reg.path).second) paths.push_back(reg.path);
    for (const auto& path : paths) {
        Side a, b;
        if (const auto* r = before.region(path)) a = side_of(*r);
        if (const auto* r = after.region(path)) b = side_of(*r);
        a.bound = bound_of(before, path);
        b.bound = bound_of(after, path);
        d.rows.push_back(compare(path, a, b));
    }
    const auto ba = budget_outcomes(before), bb = budget_outcomes(after);
    for (const auto& [name, outcome] : bb)
        if (const auto it = ba.find(name); it != ba.end() && it->second != outcome)
            d.budget_flips.push_back(name + ": " + outcome_text(it->second) + " -> " +
                                     outcome_text(outcome));
    if (before.command != after.command)
        d.notes.push_back("the two records ran different commands");
    if (before.hostname != after.hostname)
        d.notes.push_back("different hosts: " + before.hostname + " and " + after.hostname);
    if (before.kind != after.kind) d.notes.push_back("comparing a run record with a suite record");
    return d;
}

std::vector<const DiffRow*> regressions(const RecordDiff& diff, double threshold) {
    std::vector<const DiffRow*> out;
    for (const auto& r : diff.rows)
        if (r.change == Change::slower && r.ratio && *r.ratio - 1 > threshold) out.push_back(&r);
    return out;
}

void render_diff(const RecordDiff& d, const std::string& before_name, const std::string& after_name,
                 std::ostream& out) {
    out << "before: " << before_name << "\nafter:  " << after_name << "\n\n";
    TextTable t;
    t.column("region")
        .column("before", TextTable::Align::right)
        .column("after", TextTable::Align::right)
        .column("after/before", TextTable::Align::right)
        .column("noise", TextTable::Align::right)
        .column("change")
        .column("rate", TextTable::Align::right)
        .column("bound");
    for (const auto& r : d.rows) {
        std::string bound;
        if (!r.bound_before.empty() || !r.bound_after.empty())
            bound = r.bound_before == r.bound_after
                        ? r.bound_after
                        : (r.bound_before.empty() ? "-" : r.bound_before) + " -> " +
                              (r.bound_after.empty() ? "-" : r.bound_after);
        t.row({r.name, r.before_s ? duration(*r.before_s) : "-",
               r.after_s ? duration(*r.after_s) : "-", r.ratio ? fixed(*r.ratio, 3) : "-",
               r.noise ? "±" + percent(*r.noise, 1) : "-", change_text(r),
               r.rate_ratio ? "x" + fixed(*r.rate_ratio, 2) : "-", bound.empty() ? "-" : bound});
    }
    t.render(out);
    if (!d.budget_flips.empty()) {
        out << "\nBudgets that flipped\n";
        for (const auto& f : d.budget_flips) out << "  " << f << "\n";
    }
    for (const auto& n : d.notes) out << "note: " << n << "\n";
}

}  // namespace ceiling::output
