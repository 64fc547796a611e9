// Resident memory that kept growing through a run: said with its rate and, against the run's
// memory, when it would fill; a start-up allocation, imports that fill the first part of a
// run, or a plateau are not. Synthetic series on the synthetic profile (32 GiB of memory).
#include <algorithm>
#include <cmath>
#include <functional>

#include <gtest/gtest.h>

#include "agent/judge/judge_record.hpp"
#include "tests/unit/agent/judged_records.hpp"

namespace ceiling::judge {
namespace {

using namespace judged;
constexpr double MiB = 1024.0 * 1024.0;

// 40 looks over 2 s of resident memory level(t), then two looks after the exit (0).
RunRecord with_rss(const std::function<double(double)>& level) {
    RunRecord rec = record_of({}, 2.1);
    Series s;
    s.name = "rss_bytes";
    s.unit = "bytes";
    for (int i = 0; i < 40; ++i) {
        const double t = 0.05 * i;
        s.t_s.push_back(t);
        s.values.push_back(level(t));
    }
    for (const double t : {2.05, 2.1}) {
        s.t_s.push_back(t);
        s.values.push_back(0.0);
    }
    double peak = 0;
    for (const double v : s.values) peak = std::max(peak, v);
    rec.executions.front().time_series.push_back(s);
    rec.executions.front().counters.push_back(
        {"peak_rss_bytes", peak, "bytes", Source::software, std::nullopt, false});
    judge_record(rec);
    return rec;
}

bool grew(const RunRecord& rec) {
    return rec.diagnosis && has_finding(*rec.diagnosis, "resident memory grew all through the run");
}

TEST(FootprintGrowth, ASteadyRiseIsSaidWithWhenItWouldFill) {
    // A cache keeping 64 MiB every 50 ms: 2.5 GiB at the end.
    const RunRecord rec = with_rss([](double t) { return (t / 0.05 + 1) * 64 * MiB; });
    ASSERT_TRUE(grew(rec));
    EXPECT_TRUE(has_finding(*rec.diagnosis, "2.50 GiB at its last look (1.24 GiB/s"));
    EXPECT_TRUE(has_finding(*rec.diagnosis, "left of the memory fill in"));
    // Slowing at the end still grows.
    EXPECT_TRUE(grew(with_rss([](double t) { return (200 + 1000 * std::sqrt(t)) * MiB; })));
}

TEST(FootprintGrowth, StartUpAStepOrAPlateauIsNot) {
    // Loaded at start, flat after.
    EXPECT_FALSE(grew(with_rss([](double t) { return (t < 0.2 ? 100 : 900) * MiB; })));
    // A second allocation halfway: one step.
    EXPECT_FALSE(grew(with_rss([](double t) { return (t < 1.0 ? 300 : 900) * MiB; })));
    // Imports filling three quarters of the run, then flat.
    EXPECT_FALSE(grew(with_rss([](double t) { return std::min(t, 1.45) * 400 * MiB + MiB; })));
    // Rising steadily but by little: 20 MiB on 500.
    EXPECT_FALSE(grew(with_rss([](double t) { return (500 + 10 * t) * MiB; })));
}

}  // namespace
}  // namespace ceiling::judge
