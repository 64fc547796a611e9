#pragma once
// Terminal rendering of a judged suite record: one row per kernel/variant/shape grouped by
// kernel, then the comparisons the suite exists to show (FLOPs ratio vs time ratio,
// quantisation speed-ups, where the batch sweep changes bound, the pre-filter lever) and
// the first moves grouped by bound. `ceiling suite` and `ceiling report` both call it, so a
// saved record reads exactly as it did when measured.

#include <ostream>

#include "diagnosis/run_record.hpp"

namespace ceiling::output {

// `record.kind` must be suite; regions without a verdict show "-".
void render_suite(const RunRecord& record, std::ostream& out);

// The parts, for the HTML page: the machine line, the table of cases with its footnote (as
// text or as HTML), and what follows it (comparisons, counted vs analytic work, first moves,
// notes).
std::string suite_machine_line(const RunRecord& record);
void render_suite_table(const RunRecord& record, std::ostream& out, bool html);
void render_suite_findings(const RunRecord& record, std::ostream& out);

}  // namespace ceiling::output
