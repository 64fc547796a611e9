#pragma once
// Multiplexing: when more events are open than the PMU has counters, the kernel rotates
// them and each counts only part of the time. The count is extrapolated by
// time_enabled / time_running (what perf stat does); a value extrapolated from too small a
// share of the interval is marked low-confidence, and one that never ran is absent.

#include <optional>
#include <span>
#include <string>

#include "collectors/perf_event_api.hpp"

namespace ceiling::collectors {

// Below this share of the interval a scaled count is low-confidence: it was extrapolated
// by more than 2x, and phases of the workload it missed are guessed, not counted.
inline constexpr double default_min_running_fraction = 0.5;

struct ScaledCount {
    std::optional<double> value;             // absent: never enabled, or never scheduled
    std::optional<double> running_fraction;  // set only when multiplexed (running < enabled)
    bool low_confidence = false;
    std::string note;  // why absent or low-confidence
};

ScaledCount scale_count(const RawCount& raw,
                        double min_running_fraction = default_min_running_fraction);

// One event counted through several file descriptors (one per thread or per CPU): each is
// scaled by its own enabled/running times, then summed. Absent when none counted.
ScaledCount scale_and_sum(std::span<const RawCount> raws,
                          double min_running_fraction = default_min_running_fraction);

}  // namespace ceiling::collectors
