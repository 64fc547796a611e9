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

// Durations of `repeats` runs after `warmup` untimed ones; `run` returns its own duration.
std::vector<double> time_runs(const std::function<double()>& run, int warmup, int repeats);

// Runs fn(thread) on `threads` pinned threads, each given the same work, and returns the
// harmonic mean of their CPU times in seconds: the team's work over it is the sum of the
// threads' own rates. CPU time, not wall time: on a shared machine the OS may run others'
// work on our CPUs, and a roof is what the hardware does while our code runs (the method
// string in the profile says so). The sum, not the slowest thread's rate times the
// threads: the cores of a shared host are not equally fast at every moment (seen on a
// 2-vCPU guest: one core 10-20 % behind the other in half the looks), and a program whose
// threads take work as they free up, or whose faster thread finishes first and leaves its
// core idle, gets more than the slowest core's rate on each of them; against a roof of the
// slowest core, FMA programs read 1.1-1.3 x "above the roof" of their busy cores.
double team_cpu_seconds(int threads, const std::function<void(int)>& fn);

// Runs fn(thread) on `threads` pinned threads and returns the wall time from the first
// thread's start to the last thread's end. For work on a resource the threads share (DRAM,
// a shared cache): its rate is only what they reach together, and per-thread CPU time would
// count threads that ran one after another (a preempted vCPU) as if they had run at once.
double team_wall_seconds(int threads, const std::function<void(int)>& fn);

// Rates (work / duration) of each block; returns the summary of the block with the best
// median rate.
Summary best_block_rate(const std::function<double()>& run, double work, const RepeatPlan& plan);

// One block of timed runs, each preceded by a timed run of a companion (e.g. the clock
// kernel of the same width), so the companion describes the conditions the main run was
// measured under (clock frequency moves on a shared host): `warmup` untimed runs of both,
// then `repeats` timed pairs. An empty companion is skipped (its summary is empty). Callers
// keep the block with the best main median, as best_block_rate does.
struct PairedRates {
    Summary main;
    Summary companion;
};
PairedRates timed_block(const std::function<double()>& run, double work,
                        const std::function<double()>& companion, double companion_work, int warmup,
                        int repeats);

}  // namespace ceiling::measure
