// Roofline arithmetic on known vectors (the synthetic profile: fp32 FMA roof 143.7 GFLOP/s,
// DRAM triad 125.1 GB/s at 4 threads), engine selection, memory levels and thread counts.
#include "diagnosis/roofline.hpp"

#include <cmath>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "diagnosis/json_support.hpp"
#include "tests/unit/diagnosis/diagnosis_fixtures.hpp"

namespace ceiling {
namespace {

constexpr double KiB = 1024, MiB = KiB * KiB, GiB = MiB * KiB;

Work work(double ops, double bytes, double ws, Precision p = Precision::fp32,
          Engine e = Engine::vector) {
    Work w;
    w.precision = p;
    w.engine = e;
    w.ops = ops;
    w.compulsory_bytes = bytes;
    w.working_set_bytes = ws;
    return w;
}

class RooflineTest : public ::testing::Test {
  protected:
    MachineProfile profile = testing::synthetic_profile();
};

TEST_F(RooflineTest, SaxpyIsBandwidthBoundAt20Point9Gflops) {
    // y = a x + y per element: 2 FLOP; read x and y, write y: 12 bytes; intensity 1/6.
    const Roofline r = make_roofline(profile, Precision::fp32, Engine::vector, 4);
    const auto p = place(r, work(2, 12, 1.2e9));
    ASSERT_TRUE(p);
    EXPECT_NEAR(p->intensity_ops_per_byte, 0.167, 0.0005);
    EXPECT_EQ(p->level, "DRAM");
    EXPECT_DOUBLE_EQ(p->compute_ops_per_s, 143.7e9);
    EXPECT_DOUBLE_EQ(p->bytes_per_s, 125.1e9);
    // min(143.7, 125.1 / 6) = 20.85 GFLOP/s
    EXPECT_NEAR(p->attainable_ops_per_s / 1e9, 20.9, 0.05);
    EXPECT_EQ(p->limited_by, RoofKind::bandwidth);
}

TEST_F(RooflineTest, Degree32PolynomialIsComputeBound) {
    // Horner's rule, 32 FMAs per element: 64 FLOP per 4-byte input; intensity 16.
    const Roofline r = make_roofline(profile, Precision::fp32, Engine::vector, 4);
    const auto p = place(r, work(64, 4, 1.2e9));
    ASSERT_TRUE(p);
    EXPECT_DOUBLE_EQ(p->intensity_ops_per_byte, 16);
    EXPECT_NEAR(p->ridge_ops_per_byte, 1.15, 0.005);  // 143.7 / 125.1
    EXPECT_EQ(p->limited_by, RoofKind::compute);
    EXPECT_DOUBLE_EQ(p->attainable_ops_per_s, 143.7e9);
}

TEST_F(RooflineTest, AtTheRidgeBothRoofsMeet) {
    const Roofline r = make_roofline(profile, Precision::fp32, Engine::vector, 4);
    const double ridge = 143.7e9 / 125.1e9;
    const auto p = place(r, work(ridge * 1000, 1000, 1.2e9));
    ASSERT_TRUE(p);
    EXPECT_NEAR(p->attainable_ops_per_s, 143.7e9, 1);
    EXPECT_DOUBLE_EQ(attainable_ops_per_s(100, 2, 50), 100);
    EXPECT_DOUBLE_EQ(attainable_ops_per_s(100, 1, 50), 50);
    EXPECT_DOUBLE_EQ(ridge_ops_per_byte(100, 50), 2);
}

TEST_F(RooflineTest, MatrixWorkUsesTheMatrixRoofNeverTheFmaRoof) {
    const Roofline matrix = make_roofline(profile, Precision::bf16, Engine::matrix, 4);
    const Roofline vector = make_roofline(profile, Precision::bf16, Engine::vector, 4);
    ASSERT_TRUE(matrix.compute && vector.compute);
    EXPECT_EQ(matrix.compute->name, "bf16_amx");
    EXPECT_DOUBLE_EQ(matrix.compute->ops_per_s, 1.0e12);
    EXPECT_EQ(vector.compute->name, "bf16_dot512");
    EXPECT_DOUBLE_EQ(vector.compute->ops_per_s, 287.4e9);
    // The ridge moves with the roof: a matrix kernel needs far more reuse to be compute bound.
    EXPECT_NEAR(*matrix.level("DRAM")->ridge_ops_per_byte, 1.0e12 / 125.1e9, 1e-9);
    const auto best = best_compute_ceiling(profile, Precision::bf16, 4);
    ASSERT_TRUE(best);
    EXPECT_EQ(best->name, "bf16_amx");
}

TEST_F(RooflineTest, NoRoofForAPrecisionIsAbsentNotZero) {
    const Roofline r = make_roofline(profile, Precision::tf32, Engine::matrix, 4);
    EXPECT_FALSE(r.compute);
    EXPECT_FALSE(place(r, work(64, 4, 1e9, Precision::tf32, Engine::matrix)));
    EXPECT_FALSE(best_compute_ceiling(profile, Precision::fp16, 4));
}

TEST_F(RooflineTest, WorkingSetPicksTheLevelByMeasuredPlateau) {
    const Roofline r = make_roofline(profile, Precision::fp32, Engine::vector, 4);
    struct Case {
        double ws;
        const char* level;
    };
    const Case cases[] = {
        {16 * KiB, "L1"},
        {128 * KiB, "L1"},
        {129 * KiB, "L2"},
        {4 * MiB, "L2"},
        {10 * MiB, "L3"},
        // The L3 cache is 32 MiB but its plateau ended at 16 MiB: the measurement wins.
        {20 * MiB, "DRAM"},
        {8 * GiB, "DRAM"},
        {0, "DRAM"},  // unknown working set: the outermost level
    };
    for (const auto& c : cases) {
        const LevelRoof* l = r.level_for(c.ws);
        ASSERT_NE(l, nullptr);
        EXPECT_EQ(l->bandwidth.level, c.level) << c.ws;
    }
    EXPECT_EQ(r.level("L3")->bandwidth.capacity_from, "plateau");
    EXPECT_FALSE(r.level("DRAM")->bandwidth.capacity_bytes);
}

TEST_F(RooflineTest, WithoutPlateauExtentsCacheCapacitiesDecide) {
    for (auto& b : profile.bandwidth_roofs) b.min_working_set_bytes = b.max_working_set_bytes = 0;
    const Roofline r = make_roofline(profile, Precision::fp32, Engine::vector, 4);
    // L1 48 KiB private x 4 threads; L2 2 MiB x 4; L3 32 MiB shared by all.
    EXPECT_DOUBLE_EQ(*r.level("L1")->bandwidth.capacity_bytes, 4 * 48 * KiB);
    EXPECT_DOUBLE_EQ(*r.level("L2")->bandwidth.capacity_bytes, 4 * 2 * MiB);
    EXPECT_DOUBLE_EQ(*r.level("L3")->bandwidth.capacity_bytes, 32 * MiB);
    EXPECT_EQ(r.level("L3")->bandwidth.capacity_from, "cache");
    EXPECT_EQ(r.level_for(20 * MiB)->bandwidth.level, "L3");
    const Roofline one = make_roofline(profile, Precision::fp32, Engine::vector, 1);
    EXPECT_DOUBLE_EQ(*one.level("L1")->bandwidth.capacity_bytes, 48 * KiB);
}

TEST_F(RooflineTest, AllLevelsListedInnerToOuterWithTheirRidges) {
    const Roofline r = make_roofline(profile, Precision::fp32, Engine::vector, 4);
    ASSERT_EQ(r.levels.size(), 4u);
    const char* names[] = {"L1", "L2", "L3", "DRAM"};
    const double bw[] = {1.2e12, 480e9, 250e9, 125.1e9};  // DRAM: triad beats read
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(r.levels[i].bandwidth.level, names[i]);
        EXPECT_DOUBLE_EQ(r.levels[i].bandwidth.bytes_per_s, bw[i]);
        EXPECT_DOUBLE_EQ(*r.levels[i].ridge_ops_per_byte, 143.7e9 / bw[i]);
    }
    EXPECT_EQ(r.levels[3].bandwidth.kernel, "triad");
}

TEST_F(RooflineTest, OneThreadUsesOneThreadRoofsAndBorrowsWhatIsMissing) {
    const Roofline r = make_roofline(profile, Precision::fp32, Engine::vector, 1);
    ASSERT_TRUE(r.compute);
    EXPECT_DOUBLE_EQ(r.compute->ops_per_s, 35.9e9);
    EXPECT_EQ(r.compute->basis, RoofBasis::measured);
    EXPECT_TRUE(r.compute->theoretical_ops_per_s);
    EXPECT_DOUBLE_EQ(r.level("DRAM")->bandwidth.bytes_per_s, 30e9);
    // No 1-thread L3 plateau was measured: the 4-thread roof is an upper bound for it.
    const auto* l3 = r.level("L3");
    ASSERT_NE(l3, nullptr);
    EXPECT_EQ(l3->bandwidth.basis, RoofBasis::scaled);
    EXPECT_EQ(l3->bandwidth.measured_threads, 4);
    EXPECT_DOUBLE_EQ(l3->bandwidth.bytes_per_s, 250e9);
}

TEST_F(RooflineTest, UnmeasuredThreadCountsScaleAtMostLinearly) {
    const Roofline two = make_roofline(profile, Precision::fp32, Engine::vector, 2);
    ASSERT_TRUE(two.compute);
    // min(2 x 35.9 from 1 thread, 143.7 at 4 threads) = 71.8
    EXPECT_DOUBLE_EQ(two.compute->ops_per_s, 71.8e9);
    EXPECT_EQ(two.compute->basis, RoofBasis::scaled);
    EXPECT_EQ(two.compute->measured_threads, 1);
    EXPECT_FALSE(two.compute->theoretical_ops_per_s);
    // DRAM: min(2 x 30, 125.1) = 60
    EXPECT_DOUBLE_EQ(two.level("DRAM")->bandwidth.bytes_per_s, 60e9);
    const Roofline three = make_roofline(profile, Precision::bf16, Engine::matrix, 3);
    EXPECT_DOUBLE_EQ(three.compute->ops_per_s, 750e9);
}

// Regions are judged at the cores their process really kept busy (issue 11): linear in the
// busy cores above one, at most the roof of the threads that many cores need, and never
// below the 1-thread roof. Synthetic fp32 vector: 35.9 G at 1 thread, 143.7 G at 4; DRAM
// triad 30 GB/s at 1 thread, read 110 / triad 125.1 at 4.
TEST_F(RooflineTest, BusyCoresScaleTheOneThreadRoofWithinTheirThreadsRoof) {
    struct Case {
        double busy;
        double compute;
        double dram;
    };
    for (const Case& c :
         {Case{0.0, 35.9e9, 30e9}, Case{0.3, 35.9e9, 30e9}, Case{1.0, 35.9e9, 30e9},
          Case{1.1, 1.1 * 35.9e9, 1.1 * 30e9}, Case{1.96, 1.96 * 35.9e9, 1.96 * 30e9},
          // From 4 threads up the per-core share of the 4-thread roof,
          // 143.7 / 4 = 35.925, is above the 1-thread 35.9 (compute only).
          Case{3.5, 3.5 * 143.7e9 / 4, 3.5 * 30e9}, Case{4.0, 143.7e9, 120e9},
          Case{5.0, 143.7e9, 125.1e9}, Case{std::nan(""), 35.9e9, 30e9}}) {
        const Roofline r = make_busy_roofline(profile, Precision::fp32, Engine::vector, c.busy);
        ASSERT_TRUE(r.compute) << c.busy;
        EXPECT_NEAR(r.compute->ops_per_s, c.compute, 1e3) << c.busy << " busy cores";
        EXPECT_NEAR(r.level("DRAM")->bandwidth.bytes_per_s, c.dram, 1e3) << c.busy << " busy cores";
        EXPECT_NEAR(*r.level("DRAM")->ridge_ops_per_byte, c.compute / c.dram, 1e-9) << c.busy;
    }
    // Scaled from one thread where that is lower, with the thread count it needs.
    const Roofline two = make_busy_roofline(profile, Precision::fp32, Engine::vector, 1.96);
    EXPECT_EQ(two.compute->threads, 2);
    EXPECT_EQ(two.compute->basis, RoofBasis::scaled);
    EXPECT_EQ(two.compute->measured_threads, 1);
    const Roofline three = make_busy_roofline(profile, Precision::fp32, Engine::vector, 3.5);
    EXPECT_EQ(three.compute->basis, RoofBasis::scaled);
    EXPECT_EQ(three.compute->measured_threads, 4) << "the 4-thread roof's per-core share";
    EXPECT_EQ(three.level("DRAM")->bandwidth.measured_threads, 1);
    // Named after the kernel whose roof it scaled (seen: an L2 roof of one kernel named after
    // the fastest kernel at 2 threads).
    MachineProfile other = profile;
    for (auto& b : other.bandwidth_roofs)
        if (b.level == "DRAM" && b.threads == 1) b.kernel = "copy";
    EXPECT_EQ(make_busy_roofline(other, Precision::fp32, Engine::vector, 3.5)
                  .level("DRAM")
                  ->bandwidth.kernel,
              "copy");
    // An in-place stream's roof (update) is a level's own only where nothing else was
    // measured there: it judges in-place work, by name (diagnosis.cpp).
    other.bandwidth_roofs.push_back(testing::dram_roof("update", 4, 300e9));
    EXPECT_NE(
        make_roofline(other, Precision::fp32, Engine::vector, 4).level("DRAM")->bandwidth.kernel,
        "update");
    EXPECT_EQ(
        make_roofline(with_bandwidth_kernel(other, "update"), Precision::fp32, Engine::vector, 4)
            .level("DRAM")
            ->bandwidth.bytes_per_s,
        300e9);
    // More busy cores than CPUs (4 here): the roof of all of them, as measured.
    const Roofline all = make_busy_roofline(profile, Precision::fp32, Engine::vector, 5.0);
    EXPECT_EQ(all.compute->basis, RoofBasis::measured);
    EXPECT_EQ(all.level("DRAM")->bandwidth.basis, RoofBasis::measured) << "125.1 < 5 x 30";
}

// A 1-thread compute roof measured while the host took the core's time (a Zen 3 guest: 73.6
// Gop/s on one thread, 177 on two) must not make a program on both cores read above the
// roof: per core, the larger of the 1-thread roof and the 2-thread roof's share. Bandwidth
// keeps the 1-thread figure (one core may not draw its share of DRAM's).
TEST_F(RooflineTest, AOneThreadComputeRoofBelowTheSharePerCoreGivesWayToTheShare) {
    MachineProfile p = profile;
    for (auto& r : p.compute_roofs)
        if (r.precision == Precision::fp32 && r.engine == Engine::vector && r.threads == 1)
            r.ops_per_s.median = 20e9;  // contended: below 143.7 / 4
    const Roofline two = make_busy_roofline(p, Precision::fp32, Engine::vector, 2.0);
    ASSERT_TRUE(two.compute);
    // 2 threads: min(2 x 20 from 1 thread, 143.7) = 40, scaled; per core max(20, 40 / 2) = 20.
    EXPECT_NEAR(two.compute->ops_per_s, 40e9, 1e3);
    const Roofline four = make_busy_roofline(p, Precision::fp32, Engine::vector, 3.8);
    ASSERT_TRUE(four.compute);
    EXPECT_NEAR(four.compute->ops_per_s, 3.8 * 143.7e9 / 4, 1e3);
    EXPECT_EQ(four.compute->measured_threads, 4);
    EXPECT_NEAR(four.level("DRAM")->bandwidth.bytes_per_s, 3.8 * 30e9, 1e3);
}

TEST_F(RooflineTest, MoreThreadsThanCpusAddNothing) {
    const Roofline r = make_roofline(profile, Precision::fp32, Engine::vector, 64);
    ASSERT_TRUE(r.compute);
    EXPECT_DOUBLE_EQ(r.compute->ops_per_s, 143.7e9);
    EXPECT_EQ(r.compute->threads, 4);
    EXPECT_EQ(r.threads, 64);
}

TEST_F(RooflineTest, ARoofIsNeverBelowOneMeasuredWithFewerThreads) {
    // A disturbed all-core measurement (another process ran) must not lower the ceiling.
    for (auto& c : profile.compute_roofs)
        if (c.name == "fp32_fma512" && c.threads == 4) c.ops_per_s.median = 10e9;
    const Roofline r = make_roofline(profile, Precision::fp32, Engine::vector, 4);
    ASSERT_TRUE(r.compute);
    EXPECT_DOUBLE_EQ(r.compute->ops_per_s, 35.9e9);
    EXPECT_EQ(r.compute->measured_threads, 1);
}

TEST_F(RooflineTest, ComputeCeilingsListEveryRoofHighestFirst) {
    const auto all = compute_ceilings(profile, 4);
    ASSERT_EQ(all.size(),
              6u);  // fp32_scalar, fp32_fma512, fp64_fma512, bf16_dot512, bf16_amx, int8_amx
    EXPECT_EQ(all.front().name, "int8_amx");
    for (std::size_t i = 1; i < all.size(); ++i) EXPECT_GE(all[i - 1].ops_per_s, all[i].ops_per_s);
}

TEST_F(RooflineTest, RecordedVmProfileGivesAUsableRoofline) {
    // Recorded with `ceiling machine --quick` on a 2-CPU VM while builds ran: noisy roofs,
    // L3 measured only at 2 threads, a 2-thread FMA roof below the 1-thread one.
    const MachineProfile vm =
        parse_machine_profile(testing::read_test_file("profile_vm_quick.json"));
    for (int threads : {1, 2}) {
        const Roofline r = make_roofline(vm, Precision::fp32, Engine::vector, threads);
        ASSERT_TRUE(r.compute) << threads;
        ASSERT_FALSE(r.levels.empty());
        EXPECT_EQ(r.levels.back().bandwidth.level, "DRAM");
        for (std::size_t i = 0; i + 1 < r.levels.size(); ++i)
            EXPECT_TRUE(r.levels[i].bandwidth.capacity_bytes) << r.levels[i].bandwidth.level;
        const Roofline fewer = make_roofline(vm, Precision::fp32, Engine::vector, 1);
        EXPECT_GE(r.compute->ops_per_s, fewer.compute->ops_per_s);
    }
}

TEST_F(RooflineTest, JsonRoundTrip) {
    const Roofline r = make_roofline(profile, Precision::fp32, Engine::vector, 2);
    const nlohmann::json j = r;
    EXPECT_EQ(j.at("compute").at("basis"), "scaled");
    EXPECT_TRUE(j.at("levels").back().at("capacity_bytes").is_null());
    const Roofline back = j.get<Roofline>();
    EXPECT_EQ(nlohmann::json(back), j);
    const auto p = place(r, work(2, 12, 1e9));
    ASSERT_TRUE(p);
    const nlohmann::json pj = *p;
    EXPECT_EQ(pj.at("limited_by"), "bandwidth");
    EXPECT_EQ(nlohmann::json(pj.get<RooflinePoint>()), pj);
}

// A theoretical value the measurement chose travels with the ceiling measured as is, into
// the record's JSON, and goes with the theoretical value where a ceiling is scaled.
TEST_F(RooflineTest, TheoryFromTheMeasurementTravelsWithItsValue) {
    for (auto& roof : profile.compute_roofs) roof.theoretical_from_measurement = true;
    const Roofline one = make_roofline(profile, Precision::fp32, Engine::vector, 1);
    ASSERT_TRUE(one.compute && one.compute->theoretical_ops_per_s);
    EXPECT_TRUE(one.compute->theoretical_from_measurement);
    const nlohmann::json j = one;
    EXPECT_EQ(j.at("compute").at("theoretical_from_measurement"), true);
    EXPECT_TRUE(j.get<Roofline>().compute->theoretical_from_measurement);
    const Roofline two = make_roofline(profile, Precision::fp32, Engine::vector, 2);
    EXPECT_FALSE(two.compute->theoretical_ops_per_s);
    EXPECT_FALSE(two.compute->theoretical_from_measurement);
    // A record written before the flag was kept: the table's.
    nlohmann::json older = j;
    older["compute"].erase("theoretical_from_measurement");
    EXPECT_FALSE(older.get<Roofline>().compute->theoretical_from_measurement);
}

}  // namespace
}  // namespace ceiling
