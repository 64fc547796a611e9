#pragma once
// What a suite run leaves behind for later review: the run record (`ceiling report` and
// `ceiling diff` read it), the roofline as SVG, and a Chrome trace with one complete event
// per timed repetition. Renderers only: the measurements come from measure::run_suite.

#include <string>

#include "agent/measure/suite.hpp"
#include "diagnosis/run_record.hpp"

namespace ceiling::output {

// A suite record: one kernel region per measured case (work, durations, counters), the
// profile and thresholds it was judged with. Not yet judged: call measure::judge_record.
RunRecord suite_record(const measure::SuiteResult& r, const MachineProfile& profile,
                       const std::string& profile_path, const Thresholds& thresholds);

// Roofline SVG with one labelled point per measured case, roofs at `threads`.
std::string suite_roofline_svg(const measure::SuiteResult& r, const MachineProfile& profile,
                               int threads);

// Chrome trace: the suite as one process, each case's repetitions as complete events on
// one track, the achieved rate of each repetition as a counter track.
std::string suite_trace(const measure::SuiteResult& r);

}  // namespace ceiling::output
