#pragma once
// The default summary of a run record: the answer first, read in half a minute. What ran
// (status, wall time, cores busy, peak memory), where the time went (at most ten rows: a
// torch run's op types, else its regions, with work, rate, fraction of a roof and bound),
// the verdict for the run and for the model, and last the first move. At most
// answer_max_lines lines; everything else (every finding, note and region) stays in the
// record and in the detailed summary (`--detail`, run_summary.hpp) and the HTML.

#include <cstddef>
#include <ostream>

#include "diagnosis/run_record.hpp"

namespace ceiling::output {

inline constexpr std::size_t answer_max_lines = 30;
inline constexpr std::size_t answer_max_rows = 10;

void render_run_answer(const RunRecord& record, std::ostream& out);

}  // namespace ceiling::output
