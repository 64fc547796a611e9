#pragma once
// What a suite run leaves behind for later review, rendered from what the measuring side
// handed over (measure/suite_record.*): the roofline as SVG, from the record, and a Chrome
// trace with one complete event per timed repetition, from the timeline.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "diagnosis/run_record.hpp"

namespace ceiling::output {

// One measured case with known work and the start and end of each timed repetition on the
// monotonic clock.
struct TimedCase {
    std::string name;
    Work work;
    int threads = 1;
    std::vector<std::pair<std::int64_t, std::int64_t>> spans_ns;
};
struct SuiteTimeline {
    std::int64_t start_ns = 0;  // the trace's origin: when the suite began
    std::vector<TimedCase> cases;
};

// Roofline SVG of the record's machine profile with one labelled point per CPU kernel
// region with known work (GPU ones have other roofs), roofs at `threads`. Empty profile
// when the record has none.
std::string suite_roofline_svg(const RunRecord& record, int threads);

// Chrome trace: the suite as one process, each case's repetitions as complete events on
// one track, the achieved rate of each repetition as a counter track.
std::string suite_trace(const SuiteTimeline& timeline);

}  // namespace ceiling::output
