// Percentiles on known samples (type-7 interpolation, written out) and the unstable rule.
#include "diagnosis/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace ceiling {
namespace {

TEST(Statistics, MedianAndP99OfOneToHundred) {
    std::vector<double> x(100);
    std::iota(x.begin(), x.end(), 1.0);  // 1..100
    const Summary s = summarize(x);
    // p50: h = 99 x 0.5 = 49.5 -> x[49] + 0.5 (x[50] - x[49]) = 50 + 0.5 = 50.5
    EXPECT_DOUBLE_EQ(s.median, 50.5);
    // p99: h = 99 x 0.99 = 98.01 -> x[98] + 0.01 (x[99] - x[98]) = 99 + 0.01 = 99.01
    EXPECT_NEAR(s.p99, 99.01, 1e-9);
    // p90: h = 89.1 -> 90 + 0.1 = 90.1
    EXPECT_NEAR(s.p90, 90.1, 1e-9);
    EXPECT_EQ(s.count, 100u);
    EXPECT_EQ(s.min, 1);
    EXPECT_EQ(s.max, 100);
}

// The summary selects only the order statistics it reads: every field equals what a full
// sort gives, for sizes 1 to a few thousand, with ties and in any input order.
TEST(Statistics, MeanOfASampleAndNanOfNone) {
    const std::vector<double> v = {1.5, 2.5, 8.0};
    EXPECT_DOUBLE_EQ(mean(v), 4.0);
    EXPECT_TRUE(std::isnan(mean(std::vector<double>{}))) << "no sample is unknown, not 0";
}

TEST(Statistics, SelectionGivesTheSortedValues) {
    std::mt19937 rng(7);
    for (std::size_t n : {1u, 2u, 3u, 10u, 11u, 100u, 101u, 4099u}) {
        std::vector<double> x(n);
        std::uniform_int_distribution<int> d(0, static_cast<int>(n / 3) + 1);  // ties
        for (auto& v : x) v = d(rng) * 0.5;
        auto sorted = x;
        std::sort(sorted.begin(), sorted.end());
        const Summary s = summarize(x);
        SCOPED_TRACE(n);
        EXPECT_EQ(s.min, sorted.front());
        EXPECT_EQ(s.max, sorted.back());
        EXPECT_EQ(s.median, percentile(sorted, 0.5));
        EXPECT_EQ(median(x), s.median);
        EXPECT_EQ(s.p90, percentile(sorted, 0.9));
        EXPECT_EQ(s.p99, percentile(sorted, 0.99));
        const double p10 = percentile(sorted, 0.1);
        EXPECT_EQ(s.rel_spread, n > 1 && s.median != 0 ? (s.p90 - p10) / std::fabs(s.median) : 0.0);
    }
}

TEST(Statistics, MedianRefusesWhatSummarizeRefuses) {
    EXPECT_THROW(median({}), std::invalid_argument);
    EXPECT_THROW(median({1.0, std::nan("")}), std::invalid_argument);
    EXPECT_EQ(median({3.0, 1.0, 2.0, 10.0}), 2.5);
}

TEST(Statistics, FiveSamplesUnsortedInput) {
    const Summary s = summarize({5, 1, 4, 2, 3});
    EXPECT_DOUBLE_EQ(s.median, 3);
    // p99: h = 4 x 0.99 = 3.96 -> 4 + 0.96 x (5 - 4) = 4.96
    EXPECT_NEAR(s.p99, 4.96, 1e-12);
    // spread: (p90 - p10) / median = (4.6 - 1.4) / 3
    EXPECT_NEAR(s.rel_spread, 3.2 / 3, 1e-12);
}

TEST(Statistics, LatencyDistributionWithOneSlowRun) {
    // Nine 10 ms runs and one 50 ms run: the median ignores it, p99 does not.
    std::vector<double> x(9, 0.010);
    x.push_back(0.050);
    const Summary s = summarize(x);
    EXPECT_DOUBLE_EQ(s.median, 0.010);
    // p99: h = 9 x 0.99 = 8.91 -> 0.010 + 0.91 x 0.040 = 0.0464
    EXPECT_NEAR(s.p99, 0.0464, 1e-12);
}

TEST(Statistics, UnstableAboveTheSpreadThreshold) {
    Summary s;
    s.count = 10;
    s.rel_spread = 0.10;
    EXPECT_FALSE(unstable(s, 0.10));  // at the threshold: not above it
    s.rel_spread = 0.1000001;
    EXPECT_TRUE(unstable(s, 0.10));
    s.rel_spread = 0.0999999;
    EXPECT_FALSE(unstable(s, 0.10));
}

TEST(Statistics, OneSampleIsNeverUnstable) {
    const Summary s = summarize({1.0});
    EXPECT_EQ(s.rel_spread, 0);
    EXPECT_FALSE(unstable(s, 0.0001));
}

TEST(Statistics, SpreadOfARealisticNoisySample) {
    const Summary s = summarize({10, 10, 10, 10, 10, 10, 10, 10, 14, 20});
    EXPECT_TRUE(unstable(s, 0.10));
    const Summary calm = summarize({10, 10.1, 9.9, 10, 10.05, 9.95, 10, 10, 10.02, 9.98});
    EXPECT_FALSE(unstable(calm, 0.10));
}

}  // namespace
}  // namespace ceiling
