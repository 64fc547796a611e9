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

}  // namespace ceiling::output
