// Lines in flight by Little's law for a latency-bound region left of the ridge: about one per
// busy core (a chain of dependent loads) gets the chain as its first move; under half of one
// a finding only (its time is not its loads'); more, or a level a loop reads as fast as a
// chase (L2), or a region that mostly waited, nothing.
#include "diagnosis/memory_parallelism.hpp"

#include <gtest/gtest.h>

#include "tests/unit/diagnosis/diagnosis_fixtures.hpp"

namespace ceiling {
namespace {

LatencyMeasurement latency(const std::string& level, double seconds) {
    LatencyMeasurement l;
    l.level = level;
    l.seconds = testing::steady(seconds);
    return l;
}

// The synthetic profile (DRAM 90 ns, 64-byte lines) with an L1 of 1 ns and an L2 of 3 ns.
MachineProfile with_latencies() {
    MachineProfile p = testing::synthetic_profile();
    p.latencies.push_back(latency("L1", 1e-9));
    p.latencies.push_back(latency("L2", 3e-9));
    return p;
}

// Latency bound, no operations declared, `bytes_per_s` against a 20 GB/s roof of `level`.
Diagnosis walked(double bytes_per_s, const std::string& level = "DRAM") {
    Diagnosis d;
    d.bound = Bound::latency;
    RoofComparison compute;
    compute.kind = RoofKind::compute;
    compute.roof_per_s = 35.9e9;
    compute.achieved_per_s = 0;
    d.roofs.push_back(compute);
    RoofComparison memory;
    memory.kind = RoofKind::bandwidth;
    memory.level = level;
    memory.achieved_per_s = bytes_per_s;
    memory.roof_per_s = 20e9;
    memory.fraction = bytes_per_s / 20e9;
    memory.verdict = Verdict::far;
    d.roofs.push_back(memory);
    d.intensity_ops_per_byte = 0;
    d.first_move =
        std::string(left_of_ridge_move) + std::string(first_move_for(decision_row(Bound::latency), Evidence{}));
    return d;
}

// 64 B every 90 ns: one line in flight.
constexpr double one_line = 64 / 90e-9;

TEST(MemoryParallelism, OneLineInFlightPerCoreNamesTheChainFirst) {
    Diagnosis d = walked(one_line);
    weigh_memory_parallelism(with_latencies(), d, Evidence{false, 1.0, std::nullopt});
    EXPECT_EQ(d.first_move.rfind("a miss or two at a time (1 lines in flight per busy core, 28.1 "
                                 "needed at the roof): where each load's address comes from the "
                                 "one before",
                                 0),
              0u)
        << d.first_move;
    EXPECT_NE(d.first_move.find("break the chain"), std::string::npos);
    EXPECT_TRUE(d.first_move.ends_with(std::string(left_of_ridge_move) +
                                       std::string(first_move_for(decision_row(Bound::latency), Evidence{}))));
    ASSERT_FALSE(d.findings.empty());
    EXPECT_NE(d.findings.back().detail.find("about 1 cache lines in flight"), std::string::npos)
        << d.findings.back().detail;
    // Per busy core: two cores at twice the rate keep one each.
    EXPECT_TRUE(dependent_loads(with_latencies(), walked(2 * one_line), 2.0));
}

TEST(MemoryParallelism, UnderHalfALineIsAFindingWithoutAMove) {
    Diagnosis d = walked(0.3 * one_line);
    const std::string before = d.first_move;
    weigh_memory_parallelism(with_latencies(), d, Evidence{false, 1.0, std::nullopt});
    EXPECT_EQ(d.first_move, before);
    ASSERT_FALSE(d.findings.empty());
    EXPECT_NE(d.findings.back().detail.find("slower than one miss at a time"), std::string::npos);
}

TEST(MemoryParallelism, NothingWhereTheCountSaysNothingOfDependence) {
    const MachineProfile p = with_latencies();
    // Three lines per core: more than a chain keeps.
    EXPECT_FALSE(dependent_loads(p, walked(3 * one_line), 1.0));
    // L2: 3 ns, three L1 hits: a scalar loop reads it as slowly as a chase.
    EXPECT_FALSE(dependent_loads(p, walked(64 / 3e-9, "L2"), 1.0));
    // It mostly waited (a quarter core busy), or its busy cores are unknown.
    EXPECT_FALSE(dependent_loads(p, walked(one_line), 0.25));
    EXPECT_FALSE(dependent_loads(p, walked(one_line), std::nullopt));
    // Another bound, or right of the ridge (35.9e9 / 20e9 = 1.8 op/B).
    Diagnosis bound = walked(one_line);
    bound.bound = Bound::bandwidth;
    EXPECT_FALSE(dependent_loads(p, bound, 1.0));
    Diagnosis right = walked(one_line);
    right.intensity_ops_per_byte = 2.0;
    EXPECT_FALSE(dependent_loads(p, right, 1.0));
    // A profile without L1's latency cannot say what a miss costs.
    EXPECT_FALSE(dependent_loads(testing::synthetic_profile(), walked(one_line), 1.0));
}

// A strided read declaring only the bytes it used: 20 % of the roof is 12.8 B of each 64 B line.
TEST(MemoryParallelism, AQuarterOfTheRoofOrLessSaysTheBytesOfEachLine) {
    const MachineProfile p = with_latencies();
    Diagnosis d = walked(0.2 * 20e9);
    const std::string before = d.first_move;
    weigh_memory_parallelism(p, d, Evidence{false, 1.0, std::nullopt});
    EXPECT_EQ(d.first_move, before);  // 5.6 lines in flight: no chain either
    ASSERT_EQ(d.findings.size(), 1u);
    EXPECT_NE(d.findings[0].detail.find("at 20% of the DRAM roof its declared bytes are 12.8 B of "
                                        "each 64 B line the roof streams"),
              std::string::npos)
        << d.findings[0].detail;
    // Beside a chain's finding where both hold (2.3 B a line, one line in flight).
    Diagnosis chain = walked(one_line);
    weigh_memory_parallelism(p, chain, Evidence{false, 1.0, std::nullopt});
    EXPECT_EQ(chain.findings.size(), 2u);
    // Above a quarter of the roof, under a byte a line, in L1 (no line comes from elsewhere),
    // mostly waiting, or another bound: nothing.
    EXPECT_FALSE(partial_lines(p, walked(0.3 * 20e9), 1.0));
    EXPECT_FALSE(partial_lines(p, walked(0.01 * 20e9), 1.0));
    EXPECT_FALSE(partial_lines(p, walked(0.06 * 20e9, "L1"), 1.0));
    EXPECT_FALSE(partial_lines(p, walked(0.06 * 20e9), 0.25));
    Diagnosis bound = walked(0.06 * 20e9);
    bound.bound = Bound::bandwidth;
    EXPECT_FALSE(partial_lines(p, bound, 1.0));
}

// "Break the chain" needs loads that may depend (diagnosis/premises.hpp): the program's own
// code, never a library's dense-tensor op (aten.uniform_ and Adam's aten.sqrt were told to
// interleave independent walks). The same figures as the program's own code are told.
TEST(MemoryParallelism, TheChainMoveNeedsLoadsThatMayDepend) {
    Diagnosis own = walked(one_line), library = walked(one_line);
    weigh_memory_parallelism(with_latencies(), own, Evidence{false, 1.0, std::nullopt});
    weigh_memory_parallelism(with_latencies(), library, Evidence{true, 1.0, std::nullopt});
    EXPECT_NE(own.first_move.find("break the chain"), std::string::npos) << own.first_move;
    EXPECT_EQ(library.first_move.find("break the chain"), std::string::npos) << library.first_move;
    for (const auto& f : library.findings)
        EXPECT_EQ(f.detail.find("depend on each other"), std::string::npos) << f.detail;
}

}  // namespace
}  // namespace ceiling
