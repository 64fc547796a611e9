#pragma once
// Distributions, never single runs: every duration and rate ceiling reports is a Summary.

#include <cstddef>
#include <span>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ceiling {

struct Summary {
    std::size_t count = 0;
    double median = 0;
    double p90 = 0;
    double p99 = 0;
    double min = 0;
    double max = 0;
    double mean = 0;
    // (p90 - p10) / median: robust to one outlier, comparable across units. 0 for count < 2.
    double rel_spread = 0;
};

// Percentile q in [0, 1] with linear interpolation between closest ranks (Hyndman & Fan
// type 7, numpy's default): rank h = (n - 1) q, value = x[floor h] + (h - floor h)(x[ceil h]
// - x[floor h]). Throws std::invalid_argument on an empty sample.
double percentile(std::span<const double> sorted, double q);

// Arithmetic mean; NaN for an empty sample (an unknown, never a 0 that reads as measured).
double mean(std::span<const double> samples);

// Throws std::invalid_argument on an empty sample or a non-finite value.
Summary summarize(std::vector<double> samples);

// The median alone, as summarize gives it, with one selection instead of ten (a run's
// 200 000 region instances ask for several medians). Same errors as summarize.
double median(std::vector<double> samples);

// A distribution too spread out to judge on its median: relative spread above the given
// limit. One sample cannot show spread, so it is never called unstable (its count says why).
inline bool unstable(const Summary& s, double max_rel_spread) {
    return s.count > 1 && s.rel_spread > max_rel_spread;
}

// Summary of 1/x for each sample (durations -> rates); order statistics flip accordingly.
Summary summarize_reciprocal(std::span<const double> samples, double numerator);

void to_json(nlohmann::json& j, const Summary& s);
void from_json(const nlohmann::json& j, Summary& s);

}  // namespace ceiling
