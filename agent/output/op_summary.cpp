#include "agent/output/op_summary.hpp"

#include <algorithm>
#include <cmath>

#include "diagnosis/format.hpp"
#include "agent/output/table.hpp"

namespace ceiling::output {

namespace {

std::optional<double> roof_fraction(const OpTypeRow& row, RoofKind kind) {
    if (!row.judged) return std::nullopt;
    for (const auto& c : row.judged->roofs)
        if (c.kind == kind && c.fraction) return c.fraction;
    return std::nullopt;
}

void render_cost(const InstrumentationCost& c, std::ostream& out) {
    out << "  instrumentation (" << c.model << "): ";
    if (c.instrumented_s && c.uninstrumented_s) {
        const double extra = *c.instrumented_s - *c.uninstrumented_s;
        out << "call " << duration(*c.instrumented_s) << " instrumented vs " << duration(*c.uninstrumented_s)
            << " uninstrumented (medians of " << fixed(c.calls_instrumented, 0) << " and "
            << fixed(c.calls_uninstrumented, 0) << "): ";
        if (extra >= 0) {
            out << "+" << percent(extra / *c.uninstrumented_s);
            if (c.op_ranges && *c.op_ranges > 0)
                out << ", " << duration(extra / *c.op_ranges) << " per op range (" << fixed(*c.op_ranges, 0) << ")";
        } else {
            out << "no slower: the calls vary more than the instrumentation costs (repeat them for a "
                   "sharper figure)";
        }
        out << "\n";
        if (c.op_time_s) {
            const double ratio = *c.op_time_s / *c.uninstrumented_s;
            out << "    op times add up to " << duration(*c.op_time_s) << " per instrumented call = "
                << percent(ratio) << " of the uninstrumented call";
            if (std::abs(ratio - 1) <= op_sum_tolerance)
                out << " (each op's time includes its share of the instrumentation)\n";
            else if (ratio > 1)
                out << ", not within " << percent(op_sum_tolerance)
                    << ": more, because each op's range also holds part of the instrumentation (the "
                       "dispatch mode's Python and NVTX calls, at least "
                    << duration((*c.op_time_s - *c.uninstrumented_s) / std::max(1.0, c.op_ranges.value_or(1)))
                    << " per op) that the bare call does not pay; short ops are inflated most\n";
            else
                out << ", not within " << percent(op_sum_tolerance) << ": less, because the call spends "
                    << duration(*c.uninstrumented_s - *c.op_time_s)
                    << " outside its ops (the model's Python code and the interpreter between ops, "
                       "no ATen operator)\n";
        }
        return;
    }
    out << "not measured: " << fixed(c.calls_instrumented + c.calls_uninstrumented + (c.first_call_s ? 1 : 0), 0)
        << " call(s); from the third call on every second one runs without per-op ranges to measure it";
    if (c.first_call_s && c.first_call_op_time_s)
        out << "; first call " << duration(*c.first_call_s) << ", its op times add up to "
            << duration(*c.first_call_op_time_s) << " (first-call costs included, instrumentation included)";
    out << "\n";
}

}  // namespace

void render_op_summary(const RunRecord& record, std::ostream& out) {
    const OpSummary& s = record.op_summary;
    if (s.empty()) return;
    double op_time = 0;
    for (const auto& t : s.types) op_time += t.time_s;
    out << "\nPyTorch ops by type (model ops, per run; declared work; op times include the "
           "instrumentation, its cost below)\n";
    TextTable t;
    t.column("type")
        .column("calls", TextTable::Align::right)
        .column("time", TextTable::Align::right)
        .column("share", TextTable::Align::right)
        .column("FLOPs", TextTable::Align::right)
        .column("bytes", TextTable::Align::right)
        .column("op/B", TextTable::Align::right)
        .column("busy cores", TextTable::Align::right)
        .column("%compute", TextTable::Align::right)
        .column("%memory", TextTable::Align::right)
        .column("bound");
    auto row = [&](const OpTypeRow& r, const std::string& share) {
        const auto c = roof_fraction(r, RoofKind::compute), m = roof_fraction(r, RoofKind::bandwidth);
        const bool work = r.ops && (*r.ops > 0 || *r.bytes > 0);
        t.row({r.name, fixed(r.calls, r.calls == std::floor(r.calls) ? 0 : 1), duration(r.time_s), share,
               r.ops ? si(*r.ops, "") : "no formula", r.bytes ? bytes(*r.bytes) : "-",
               work && *r.bytes > 0 ? fixed(*r.ops / *r.bytes, 2) : "-",
               r.busy_cores ? fixed(*r.busy_cores, 2) : "-", c ? percent(*c) : "-", m ? percent(*m) : "-",
               r.judged && r.judged->bound ? r.judged->diagnosis : "-"});
    };
    for (const auto& r : s.types) row(r, op_time > 0 ? percent(r.time_s / op_time) : "-");
    for (const auto& r : s.models) row(r, "whole");
    t.render(out);
    if (!s.unformulated.empty()) {
        out << "  ops without a formula (work unknown, not in any FLOP total):";
        for (const auto& u : s.unformulated)
            out << " " << u.name << " (" << fixed(u.calls, u.calls == std::floor(u.calls) ? 0 : 1)
                << " calls, " << duration(u.time_s) << ")";
        out << "\n";
    }
    for (const auto& c : s.costs) render_cost(c, out);
}

}  // namespace ceiling::output
