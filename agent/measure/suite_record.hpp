#pragma once
// What a suite run hands to the renderers: the run record (`ceiling report` and `ceiling
// diff` read it) and the timeline of its timed repetitions (for the trace). Output renders
// these; it never reaches back into the measuring code.

#include <string>

#include "agent/measure/suite.hpp"
#include "agent/output/suite_files.hpp"
#include "diagnosis/run_record.hpp"

namespace ceiling::measure {

// A suite record: one kernel region per measured case (work, durations, counters), the
// profile and thresholds it was judged with, a note per case that was not measured. Not
// yet judged: call judge_record.
RunRecord suite_record(const SuiteResult& r, const MachineProfile& profile,
                       const std::string& profile_path, const Thresholds& thresholds);

// Each measured case with known work and its timed repetitions, for output::suite_trace.
output::SuiteTimeline suite_timeline(const SuiteResult& r);

}  // namespace ceiling::measure
