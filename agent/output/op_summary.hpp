#pragma once
// The PyTorch part of a run summary (`ceiling run --torch`): the record's op summary
// (diagnosis/op_summary.hpp, judged in agent/judge/op_types.cpp) as a table of op types with
// count, time, declared FLOPs and bytes, intensity, busy cores, fractions of the roofs and
// bound; each whole model as one roofline point beside them; the ops without a formula; and
// what the instrumentation cost.

#include <ostream>

#include "diagnosis/run_record.hpp"

namespace ceiling::output {

// Nothing when the record has no op summary.
void render_op_summary(const RunRecord& record, std::ostream& out);

}  // namespace ceiling::output
