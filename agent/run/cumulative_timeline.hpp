#pragma once
// A quantity that only grows (a process's CPU time, a counter's count), known at some
// instants and wanted at others: where a region instance began and ended. Between two known
// points the value is interpolated linearly; the error bound is what monotonicity (and, where
// known, the fastest the quantity can grow) leaves possible: the true value at t lies in
//   [max(v0, v1 - rate x (t1 - t)), min(v1, v0 + rate x (t - t0))]
// so the error is at most the growth across the interval holding t, and at most rate x the
// distance to the nearer known point. Used for CPU time (rate: the CPUs, one CPU-second per
// second each) and PMU counts (no rate bound: only the interval's growth bounds the error).

#include <cstdint>
#include <optional>
#include <vector>

namespace ceiling::measure {

struct TimelinePoint {
    std::int64_t t_ns = 0;  // CLOCK_MONOTONIC
    double value = 0;       // cumulative since some start
};

// One process's cumulative quantity (the sampler's CPU time of the processes below it).
struct ProcessTimeline {
    int pid = 0;
    std::vector<TimelinePoint> points;  // oldest first
};

// The true value lies within value +- error.
struct Estimate {
    double value = 0;
    double error = 0;
};

class CumulativeTimeline {
  public:
    CumulativeTimeline() = default;
    // Points in any order; a value below an earlier one (a torn read) is raised to it.
    // max_rate_per_s: the most the quantity grows per second of wall time; nullopt: unbounded.
    CumulativeTimeline(std::vector<TimelinePoint> points, std::optional<double> max_rate_per_s);

    bool empty() const { return points_.empty(); }
    // The value at t. Outside the known points only with a rate bound (else nullopt), and
    // never below 0.
    std::optional<Estimate> at(std::int64_t t_ns) const;
    // Growth over [begin, end]; the error adds both ends' bounds. `hint` (optional) carries
    // where the last search ended into the next: a capture asks for 400 000 instants, mostly
    // a few microseconds apart, among a few thousand points.
    std::optional<Estimate> between(std::int64_t begin_ns, std::int64_t end_ns,
                                    std::size_t* hint = nullptr) const;

  private:
    // The first point at or after t (std::lower_bound), looked for at `from` and the point
    // after it before searching the whole timeline.
    std::size_t first_not_before(std::int64_t t, std::size_t from) const;
    std::optional<Estimate> at_index(std::int64_t t, std::size_t after) const;

    std::vector<TimelinePoint> points_;
    std::optional<double> max_rate_per_ns_;
};

}  // namespace ceiling::measure
