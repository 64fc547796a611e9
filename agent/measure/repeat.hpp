#pragma once
// The timing loop shared by every micro-benchmark: size the work so one run takes a
// target time, warm up, then time repeats in blocks and keep the best block (a roof is
// a ceiling: a block disturbed by a noisy neighbour is not the machine's limit).

#include <cstdint>
#include <functional>
#include <vector>

#include "diagnosis/statistics.hpp"

namespace ceiling::measure {

struct RepeatPlan {
    double target_s = 0.02;  // duration of one timed run
    int warmup = 1;          // untimed runs first (caches, page faults, clock ramp)
    int repeats = 5;         // timed runs per block
    int blocks = 3;          // the best block's median is the roof
};

// Smallest n (doubling from 1) with run(n) >= target_s / 8, scaled to target_s.
std::int64_t calibrate(const std::function<void(std::int64_t)>& run, double target_s);

// Durations of plan.repeats timed runs after plan.warmup untimed ones.
std::vector<double> time_runs(const std::function<void()>& run, int warmup, int repeats);

// Rates (work / duration) of each block; returns the summary of the block with the best
// median rate.
Summary best_block_rate(const std::function<void()>& run, double work, const RepeatPlan& plan);

}  // namespace ceiling::measure
