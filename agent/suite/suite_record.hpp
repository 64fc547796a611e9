#pragma once
// What a suite run leaves behind: the run record (`ceiling report` and `ceiling diff` read
// it) and a Chrome trace of its timed repetitions. The renderers draw from the record; they
// never reach back into the measuring code.

#include <string>

#include "agent/suite/suite.hpp"
#include "diagnosis/run_record.hpp"

namespace ceiling::measure {

// A suite record: one kernel region per measured case (work, durations, counters), the
// profile and thresholds it was judged with, a note per case that was not measured. Not
// yet judged: call judge_record.
RunRecord suite_record(const SuiteResult& r, const MachineProfile& profile,
                       const std::string& profile_path, const Thresholds& thresholds);

// Chrome trace: the suite as one process, each measured case's repetitions as complete events
// on one track per team size, the achieved rate of each repetition as a counter track.
std::string suite_trace(const SuiteResult& r);

}  // namespace ceiling::measure
