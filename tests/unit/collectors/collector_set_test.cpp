// The default collectors around a region of this process: what this machine can measure
// is measured, what it cannot is left out with its reason, and sampling reads mid-way.

#include <chrono>

#include <gtest/gtest.h>

#include "collectors/default_collectors.hpp"
#include "collectors/software_events.hpp"

namespace ceiling::collectors {
namespace {

void spin(double seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    volatile double x = 1;
    while (std::chrono::steady_clock::now() < end) x = x * 1.0000001 + 1e-9;
}

TEST(RegionCollectors, MeasureWhatTheyCanAndSayWhyNotForTheRest) {
    CollectorSet set = make_region_collectors(CountTarget::this_process());
    const auto caps = set.probe();
    ASSERT_GE(caps.size(), 2u);
    for (const auto& [name, cap] : caps)
        if (!cap.available) {
            EXPECT_FALSE(cap.reason.empty()) << name;
        }
    set.start();
    spin(0.05);
    const Readings r = set.stop();
    ASSERT_TRUE(r.value("wall_s"));
    EXPECT_GE(*r.value("wall_s"), 0.05);
    EXPECT_TRUE(r.value("user_s"));
    if (probe_software_events().available) {
        // Some CPU time, and no more than the wall time allows (a busy machine gives less).
        ASSERT_TRUE(r.value("task_clock_s"));
        EXPECT_GT(*r.value("task_clock_s"), 0);
        EXPECT_LT(*r.value("task_clock_s"), *r.value("wall_s") * 1.1 + 0.01);
    }
    // Whatever the PMU could not measure is absent, never a zero.
    for (const char* name : {"fp_ops", "dram_bytes", "cycles"})
        if (const Reading* v = r.find(name)) {
            EXPECT_EQ(v->source, ReadingSource::pmu);
        }
}

Reading reading(std::string name, double value, std::string unit) {
    Reading r;
    r.name = std::move(name);
    r.value = value;
    r.unit = std::move(unit);
    return r;
}

// Two rounds of one suite case as one interval: counts and seconds add, a peak takes the
// larger, IPC comes from the summed counts (not the mean of the rounds' IPCs), a value one
// round lacks is not passed off as the whole, and the weaker round's confidence wins.
TEST(CombineReadings, AddsCountsKeepsPeaksAndRecomputesRatios) {
    Readings a, b;
    a.values = {reading("task_clock_s", 0.5, "s"),
                reading("max_rss_bytes", 100, "bytes"),
                reading("instructions", 300, "count"),
                reading("cycles", 100, "count"),
                reading("instructions_per_cycle", 3.0, "ratio"),
                reading("fp_ops", 10, "flop"),
                reading("only_in_a", 1, "count")};
    b.values = {reading("task_clock_s", 0.25, "s"),
                reading("max_rss_bytes", 80, "bytes"),
                reading("instructions", 100, "count"),
                reading("cycles", 100, "count"),
                reading("instructions_per_cycle", 1.0, "ratio"),
                reading("fp_ops", 30, "flop")};
    a.values[5].running_fraction = 0.9;
    b.values[5].running_fraction = 0.6;
    b.values[5].low_confidence = true;
    b.values[5].note = "multiplexed";
    a.warnings = {"w1"};
    b.warnings = {"w1", "w2"};
    const Readings m = combine_readings(a, b);
    EXPECT_DOUBLE_EQ(*m.value("task_clock_s"), 0.75);
    EXPECT_DOUBLE_EQ(*m.value("max_rss_bytes"), 100);
    EXPECT_DOUBLE_EQ(*m.value("instructions"), 400);
    EXPECT_DOUBLE_EQ(*m.value("instructions_per_cycle"), 2.0);
    ASSERT_TRUE(m.find("fp_ops"));
    EXPECT_DOUBLE_EQ(m.find("fp_ops")->value, 40);
    EXPECT_DOUBLE_EQ(*m.find("fp_ops")->running_fraction, 0.6);
    EXPECT_TRUE(m.find("fp_ops")->low_confidence);
    EXPECT_EQ(m.find("fp_ops")->note, "multiplexed");
    EXPECT_FALSE(m.value("only_in_a"));
    EXPECT_EQ(m.warnings, (std::vector<std::string>{"w1", "w2"}));
}

// The suite starts and stops a case's collectors once per round: the same set measures
// again after a stop, and the rounds add up to at least the time they spanned.
TEST(CombineReadings, ASetStartedAgainMeasuresEachRound) {
    CollectorSet set = make_region_collectors(CountTarget::this_process());
    set.start();
    spin(0.02);
    const Readings first = set.stop();
    set.start();
    spin(0.03);
    const Readings m = combine_readings(first, set.stop());
    ASSERT_TRUE(m.value("wall_s"));
    EXPECT_GE(*m.value("wall_s"), 0.05);
    if (probe_software_events().available) {
        ASSERT_TRUE(m.value("task_clock_s"));
        EXPECT_GT(*m.value("task_clock_s"), *first.value("task_clock_s"));
    }
}

}  // namespace
}  // namespace ceiling::collectors
