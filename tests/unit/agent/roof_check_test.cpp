// The DRAM roof measured again after a run: only where the profile has that roof, a real
// measurement (never 0), and a note that says how far it is from the profile.
#include "agent/measure/roof_check.hpp"

#include <gtest/gtest.h>

#include "agent/store/profile_store.hpp"
#include "kernels/parallel.hpp"

namespace ceiling::measure {
namespace {

// Synthetic profile: a DRAM triad roof at 1 thread (30 GB/s), none at 2 or 3 threads.
MachineProfile synthetic() {
    return store::load_profile(std::string(CEILING_TEST_DATA) + "/profile_synthetic.json");
}

TEST(DramCheck, MeasuresOnlyTheThreadCountsTheProfileHasARoofFor) {
    const MachineProfile p = synthetic();
    const auto checks = measure_dram_now(p, {1, 3});
    ASSERT_EQ(checks.size(), 1u);
    EXPECT_EQ(checks[0].threads, 1);
    EXPECT_EQ(checks[0].kernel, "triad");
    EXPECT_DOUBLE_EQ(checks[0].profile_bytes_per_s, 30e9);
    // Measured, so positive and finite; no assertion on the speed itself.
    EXPECT_GT(checks[0].now_bytes_per_s, 1e8);
    EXPECT_LT(checks[0].now_bytes_per_s, 1e13);
}

TEST(DramCheck, TheNoteSaysWhetherTheHostMovedBeyondTheTolerance) {
    const RoofCheck same{"DRAM", "triad", 2, 60e9, 57e9}, moved{"DRAM", "triad", 2, 60e9, 35e9};
    EXPECT_FALSE(outside_tolerance(same));
    EXPECT_TRUE(outside_tolerance(moved));
    EXPECT_TRUE(outside_tolerance(RoofCheck{"DRAM", "read", 1, 30e9, 34e9})) << "above counts too";
    EXPECT_EQ(describe_dram_checks({same}),
              "DRAM bandwidth measured again after the run: 2 threads triad 57.0 GB/s, 0.95 x "
              "the profile's 60.0 GB/s: within 10 % of the profile");
    const std::string m = describe_dram_checks({RoofCheck{"DRAM", "triad", 1, 30e9, 29e9}, moved});
    EXPECT_NE(m.find("1 thread triad 29.0 GB/s, 0.97 x the profile's 30.0 GB/s; 2 threads triad "
                     "35.0 GB/s, 0.58 x"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find(": more than 10 % off"), std::string::npos) << m;
}

}  // namespace
}  // namespace ceiling::measure
