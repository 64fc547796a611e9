#include "agent/output/suite_table.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <tuple>
#include <utility>

#include "diagnosis/format.hpp"
#include "agent/output/roofline_svg.hpp"
#include "agent/output/table.hpp"

namespace ceiling::output {
namespace {

using A = TextTable::Align;

// Everything the comparisons need about one measured case.
struct Case {
    const RecordedRegion* region = nullptr;
    const Diagnosis* diagnosis = nullptr;  // null when not judged
    std::string kernel, problem, variant, shape, series;
    double median_s() const { return region->measurement.duration_s.median; }
    const Work& work() const { return *region->measurement.work; }
};

std::vector<Case> cases_of(const RunRecord& record) {
    std::map<std::string, const Diagnosis*> verdicts;
    for (const auto& v : record.region_diagnoses) verdicts[v.path] = &v.diagnosis;
    std::vector<Case> cases;
    for (const auto& r : record.regions) {
        if (r.kind != RegionKind::kernel || !r.measurement.work ||
            r.measurement.durations_s.empty())
            continue;
        const auto it = verdicts.find(r.path);
        cases.push_back({&r, it == verdicts.end() ? nullptr : it->second, r.label("kernel"),
                         r.label("problem"), r.label("variant"), r.label("shape"),
                         r.label("series")});
    }
    return cases;
}

const Case* find(const std::vector<Case>& cs, const std::string& kernel, const std::string& problem,
                 const std::string& variant, const std::string& shape) {
    for (const auto& c : cs)
        if (c.kernel == kernel && c.problem == problem && c.variant == variant && c.shape == shape)
            return &c;
    return nullptr;
}

// The first comparison of this kind with a fraction; null when there is none.
const RoofComparison* judged_against(const Diagnosis* d, RoofKind kind) {
    if (d)
        for (const auto& c : d->roofs)
            if (c.kind == kind && c.fraction) return &c;
    return nullptr;
}

std::optional<double> fraction_of(const Diagnosis* d, RoofKind kind) {
    const auto* c = judged_against(d, kind);
    return c ? c->fraction : std::nullopt;
}

// Problem P + this suffix is P's inner loop alone (gemm/bf16-tiles).
constexpr std::string_view loop_suffix = "-tiles";

std::string pct(std::optional<double> f) { return f ? percent(*f) : "-"; }

std::string rate_unit(const Work& w) { return w.precision == Precision::int8 ? "op/s" : "FLOP/s"; }

void comparisons(const std::vector<Case>& cs, std::ostream& out) {
    std::vector<std::string> lines;
    for (const auto& c : cs) {
        // The same comparisons for the CPU family and its GPU twin ("gpu-gemv").
        const std::string family = c.kernel.starts_with("gpu-") ? c.kernel.substr(4) : c.kernel;
        const std::string at = " " + c.shape + " " + c.variant + ": ";
        // FLOPs are not time: dense and separable convolutions against the depthwise one.
        if (family == "conv" && c.problem == "depthwise")
            for (const char* other : {"dense", "separable"})
                if (const auto* o = find(cs, c.kernel, other, c.variant, c.shape))
                    lines.push_back(c.kernel + at + other + "/depthwise FLOPs x" +
                                    fixed(o->work().ops / c.work().ops, 1) + ", time x" +
                                    fixed(o->median_s() / c.median_s(), 1));
        // The quantisation lever on a bandwidth-bound kernel.
        if (family == "gemv" && c.problem == "fp32")
            for (const char* q : {"bf16", "int8"})
                if (const auto* o = find(cs, c.kernel, q, c.variant, c.shape))
                    lines.push_back(
                        c.kernel + at + q + " weights " + fixed(c.median_s() / o->median_s(), 2) +
                        "x faster than fp32 (" +
                        fixed(c.work().compulsory_bytes / o->work().compulsory_bytes, 2) +
                        "x fewer bytes)");
        // The "change the problem" lever: NMS with a score pre-filter.
        if (family == "nms" && c.problem != "prefilter")
            if (const auto* o = find(cs, c.kernel, "prefilter", c.variant, c.shape))
                lines.push_back(c.kernel + at + "score pre-filter " +
                                fixed(c.median_s() / o->median_s(), 1) +
                                "x faster (change the problem, not the code)");
    }
    // Why a kernel stops below its compute roof: problem P + "-tiles" is P's inner loop
    // alone on resident panels (its ceiling with the operands in L1, in L2), set beside
    // P's own cases. Each figure is a measured fraction of the same compute roof.
    std::map<std::pair<std::string, std::string>, std::vector<const Case*>> loops;  // (kernel, P)
    for (const auto& c : cs)
        if (c.problem.ends_with(loop_suffix) && judged_against(c.diagnosis, RoofKind::compute))
            loops[{c.kernel, c.problem.substr(0, c.problem.size() - loop_suffix.size())}].push_back(
                &c);
    for (const auto& [key, ls] : loops) {
        const auto& [kernel, problem] = key;
        std::string l =
            kernel + " " + problem + ": its loop alone (" + ls.front()->problem + ") reaches";
        for (std::size_t i = 0; i < ls.size(); ++i) {
            const auto* r = judged_against(ls[i]->diagnosis, RoofKind::compute);
            l += std::string(i ? "," : "") + " " + percent(*r->fraction) +
                 (i ? "" : " of the " + r->roof + " roof") + " with its operands in " +
                 ls[i]->diagnosis->level.value_or("?") + " (" + ls[i]->shape + ")";
        }
        // Only the cases the compute roof bounds (at or right of the ridge: left of it the
        // loop's ceiling is not what holds them), and not a sweep's points (the sweep has
        // its own line, where its bound changes).
        std::string whole;
        for (const auto& c : cs)
            if (c.kernel == kernel && c.problem == problem && c.variant != "naive" &&
                c.series.empty())
                if (const auto* r = judged_against(c.diagnosis, RoofKind::compute);
                    r && r->roof_per_s && c.diagnosis->attainable_ops_per_s &&
                    *c.diagnosis->attainable_ops_per_s >= *r->roof_per_s * (1 - 1e-9))
                    whole += std::string(whole.empty() ? "" : ", ") + c.variant + " " + c.shape +
                             " " + percent(*r->fraction);
        if (!whole.empty()) l += "; the whole kernel: " + whole;
        lines.push_back(l);
    }
    // Where a sweep changes bound (GEMM batch: decode-like bandwidth bound to compute bound).
    std::map<std::string, std::vector<const Case*>> series;
    for (const auto& c : cs)
        if (!c.series.empty() && c.diagnosis && c.diagnosis->bound)
            series[c.kernel + "/" + c.problem + "/" + c.variant + " " + c.series].push_back(&c);
    for (const auto& [name, s] : series)
        for (std::size_t i = 1; i < s.size(); ++i) {
            const Diagnosis& a = *s[i - 1]->diagnosis;
            const Diagnosis& b = *s[i]->diagnosis;
            if (*a.bound == *b.bound) continue;
            lines.push_back(name + ": " + std::string(to_string(*a.bound)) + " bound at " +
                            s[i - 1]->shape + " -> " + std::string(to_string(*b.bound)) +
                            " bound at " + s[i]->shape + " (intensity " +
                            fixed(a.intensity_ops_per_byte.value_or(NAN), 1) + " -> " +
                            fixed(b.intensity_ops_per_byte.value_or(NAN), 1) + " op/B)");
        }
    if (lines.empty()) return;
    out << "\nWhat the suite shows\n";
    for (const auto& l : lines) out << "  " << l << "\n";
}

// The likwid-style accuracy check: what the CPU PMU counted against the analytic work.
// DRAM bytes below the compulsory ones mean the working set was served by a cache.
void counted_vs_analytic(const std::vector<Case>& cs, std::ostream& out) {
    std::vector<std::string> lines;
    for (const auto& c : cs) {
        const auto& m = c.region->measurement;
        if (!m.measured_ops && !m.measured_bytes) continue;
        std::string l = "  " + c.region->name + ":";
        if (m.measured_ops)
            l += " FLOPs counted/analytic x" + fixed(*m.measured_ops / c.work().ops, 2);
        if (m.measured_bytes)
            l += ", DRAM bytes counted/compulsory x" +
                 fixed(*m.measured_bytes / c.work().compulsory_bytes, 2);
        lines.push_back(l);
    }
    out << "\nCounted vs analytic work\n";
    if (lines.empty())
        out << "  no hardware counts (no usable CPU PMU here; `ceiling doctor` says why): work is "
               "analytic\n";
    for (const auto& l : lines) out << l << "\n";
}

// One line per bound with its first move, the cases under it by verdict; then the known
// handicaps of implementations here and every number that could not be trusted.
void first_moves(const std::vector<Case>& cs, std::ostream& out) {
    struct Group {
        std::string first_move;
        std::map<std::string, std::vector<std::string>> by_verdict;
    };
    std::map<std::string, Group> groups;
    std::map<std::string, std::vector<std::string>> advice;  // one note per handicap, its cases
    std::vector<std::string> notes;
    for (const auto& c : cs) {
        if (!c.diagnosis) continue;
        auto& g = groups[c.diagnosis->diagnosis];
        g.first_move = c.diagnosis->first_move;
        g.by_verdict[std::string(band_name(c.diagnosis->verdict))].push_back(c.region->name);
        if (const auto a = c.region->label("advice"); !a.empty())
            advice[a].push_back(c.region->name);
        for (const auto& f : c.diagnosis->findings)
            if (f.kind == FindingKind::above_roof || f.kind == FindingKind::no_roof)
                notes.push_back(c.region->name + ": " + f.detail);
    }
    if (groups.empty()) return;
    out << "\nFirst moves\n";
    for (const auto& [diagnosis, g] : groups) {
        out << "  " << diagnosis << ": " << g.first_move << "\n";
        for (const auto& [verdict, names] : g.by_verdict) {
            out << "    " << verdict << ":";
            for (std::size_t i = 0; i < names.size(); ++i) out << (i ? ", " : " ") << names[i];
            out << "\n";
        }
    }
    for (const auto& [a, names] : advice) {
        out << "  note: " << a << " (";
        for (std::size_t i = 0; i < names.size(); ++i) out << (i ? ", " : "") << names[i];
        out << ")\n";
    }
    for (const auto& n : notes) out << "  note: " << n << "\n";
}

// The roofs measured in turns with each shape's cases (RoofCheck::beside), one line per
// roof: how far from the profile's figure the host's share went, and where the looks of one
// shape disagreed (those cases were judged against the best look all the same, with a
// finding that says their fractions may be higher than shown).
void roofs_beside(const RunRecord& record, std::ostream& out) {
    struct Seen {
        const RoofCheck* first = nullptr;
        double low = INFINITY, high = 0;
        std::string lowest_beside;
        int shapes = 0;
        std::vector<std::string> moved;
    };
    std::map<std::tuple<RoofKind, std::string, int>, Seen> roofs;
    for (const auto& c : record.roof_checks) {
        if (c.beside.empty() || c.profile_per_s <= 0) continue;
        auto& s = roofs[{c.kind, c.kernel, c.threads}];
        if (!s.first) s.first = &c;
        const std::string names =
            c.beside.front() +
            (c.beside.size() > 1 ? " and " + std::to_string(c.beside.size() - 1) + " more" : "");
        if (moved_within(c))
            s.moved.push_back(names + " " + fixed(*c.slowest_ratio(), 2) + "-" +
                              fixed(c.ratio(), 2));
        ++s.shapes;
        if (c.ratio() < s.low) s.lowest_beside = names;
        s.low = std::min(s.low, c.ratio());
        s.high = std::max(s.high, c.ratio());
    }
    if (roofs.empty()) return;
    out << "\nRoofs measured in turns with the cases (a look before and after each round; a "
           "shape's cases are\njudged against the best look; where its looks moved by more than "
        << percent(roof_check_tolerance) << ", their fractions may be higher than shown)\n";
    for (const auto& [key, s] : roofs) {
        const RoofCheck& c = *s.first;
        const bool compute = c.kind == RoofKind::compute;
        out << "  " << (compute ? c.kernel : "DRAM " + c.kernel) << ", " << c.threads
            << (c.threads == 1 ? " thread" : " threads") << ": ";
        out << fixed(s.low, 2);
        if (s.high > s.low + 0.005) out << "-" << fixed(s.high, 2);
        out << " x the profile's " << si(c.profile_per_s, compute ? "op/s" : "B/s") << " beside "
            << s.shapes << (s.shapes == 1 ? " shape" : " shapes");
        if (s.high - s.low > roof_check_tolerance && s.low < 1 - roof_check_tolerance)
            out << " (lowest beside " << s.lowest_beside << ")";
        if (!s.moved.empty()) {
            out << "; moved during the looks beside ";
            for (std::size_t i = 0; i < s.moved.size(); ++i) out << (i ? ", " : "") << s.moved[i];
        }
        out << "\n";
    }
}

}  // namespace

std::string suite_machine_line(const RunRecord& record) {
    const auto& p = record.machine_profile;
    if (!p) return "";
    return "Machine   " + p->host.cpu_model + " (" + p->host.hostname + "), profile of " + p->created_at +
           (p->quick ? " (quick)" : "");
}

void render_suite(const RunRecord& record, std::ostream& out) {
    if (const auto m = suite_machine_line(record); !m.empty()) out << m << "\n";
    render_suite_table(record, out, false);
    render_suite_findings(record, out);
}

void render_suite_table(const RunRecord& record, std::ostream& out, bool html) {
    const auto cs = cases_of(record);
    TextTable t;
    t.column("case")
        .column("thr", A::right)
        .column("median", A::right)
        .column("p99", A::right)
        .column("spread", A::right)
        .column("achieved", A::right)
        .column("bytes/s", A::right)
        .column("op/B", A::right)
        .column("%compute", A::right)
        .column("%memory", A::right)
        .column("level")
        .column("bound")
        .column("verdict");
    std::string kernel;
    for (const auto& c : cs) {
        if (c.kernel != kernel) {
            kernel = c.kernel;
            t.heading(kernel);
        }
        const auto& m = c.region->measurement;
        const Work& w = c.work();
        const double s = m.duration_s.median;
        const Diagnosis* d = c.diagnosis;
        // Under its kernel's heading a case is problem/variant/shape; a record without
        // those labels (written by hand or by another tool) shows its full name.
        const std::string name =
            c.kernel.empty() ? c.region->name : c.problem + "/" + c.variant + "/" + c.shape;
        t.row({"  " + name, w.device == Device::gpu ? "GPU" : std::to_string(m.threads),
               duration(s), duration(m.duration_s.p99),
               percent(m.duration_s.rel_spread) +
                   (m.duration_s.rel_spread > record.thresholds.unstable_spread ? "!" : ""),
               si(w.ops / s, rate_unit(w)), si(w.compulsory_bytes / s, "B/s"),
               fixed(w.intensity(), w.intensity() < 10 ? 2 : 0),
               pct(fraction_of(d, RoofKind::compute)), pct(fraction_of(d, RoofKind::bandwidth)),
               d ? d->level.value_or("-") : "-",
               d && d->bound ? std::string(to_string(*d->bound)) : (d ? "unknown" : "-"),
               d ? std::string(band_name(d->verdict)) : "-"});
    }
    std::ostringstream note;
    note << "(median/p99 over repeats, spread = (p90-p10)/median, ! = unstable; %compute and "
            "%memory are the\n"
            " achieved rate over the roof of the case's precision and engine, and over the "
            "bandwidth of the\n"
            " level its working set lives in"
         << (std::any_of(record.roof_checks.begin(), record.roof_checks.end(),
                         [](const RoofCheck& c) { return !c.beside.empty(); })
                 ? " (those roofs as measured in turns with the case where listed\n"
                   " under \"Roofs measured in turns\", else the profile's);\n"
                 : ";")
         << " analytic work: compulsory bytes, each input read once;\n"
         << " verdict: near at " << percent(record.thresholds.done)
         << " of a roof or more, mid from " << percent(record.thresholds.far)
         << " up to near, far below " << percent(record.thresholds.far) << ")\n";
    if (html) {
        t.render_html(out, "suite");
        out << "<p class=\"muted\">" << xml_escape(note.str()) << "</p>\n";
    } else {
        t.render(out);
        out << note.str();
    }
}

void render_suite_findings(const RunRecord& record, std::ostream& out) {
    const auto cs = cases_of(record);
    comparisons(cs, out);
    roofs_beside(record, out);
    if (!cs.empty()) counted_vs_analytic(cs, out);
    first_moves(cs, out);
    for (const auto& n : record.notes) out << "note: " << n << "\n";
    if (!record.whole.durations_s.empty())
        out << "Suite took " << fixed(record.whole.durations_s.front(), 1) << " s\n";
}

}  // namespace ceiling::output
