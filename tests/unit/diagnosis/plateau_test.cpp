// Plateau detection on synthetic working-set sweeps: clean, noisy, none; and naming
// plateaus by memory level.

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "diagnosis/plateau.hpp"

namespace ceiling {
namespace {

constexpr double KiB = 1024, MiB = 1024 * KiB;

// A sweep x sqrt(2) from 4 KiB to 1 GiB over a 4-level machine: 48 KiB L1 at 300 GB/s,
// 2 MiB L2 at 130 GB/s, 32 MiB L3 at 25 GB/s, DRAM at 12 GB/s; values between levels
// fall off smoothly over the transition sizes.
std::vector<SweepSample> four_level_sweep(double noise = 0, unsigned seed = 1) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> jitter(-noise, noise);
    const double caps[] = {48 * KiB, 2 * MiB, 32 * MiB};
    const double bw[] = {300e9, 130e9, 25e9, 12e9};
    std::vector<SweepSample> s;
    for (double ws = 4 * KiB; ws <= 1024 * MiB; ws *= std::sqrt(2.0)) {
        int level = 0;
        while (level < 3 && ws > caps[level]) ++level;
        double v = bw[level];
        // Just past a capacity, part of the set still hits the faster level.
        if (level > 0 && ws < 2 * caps[level - 1]) v = std::sqrt(bw[level] * bw[level - 1]);
        s.push_back({ws, v * (1 + jitter(rng))});
    }
    return s;
}

const std::vector<LevelCapacity> levels = {{"L1", 48 * KiB}, {"L2", 2 * MiB}, {"L3", 32 * MiB}};

TEST(Plateaus, CleanSweepHasFourPlateausNamedByLevel) {
    const auto s = four_level_sweep();
    const auto p = detect_plateaus(s);
    ASSERT_EQ(p.size(), 4u);
    const auto named = label_plateaus(s, p, levels);
    ASSERT_EQ(named.size(), 4u);
    EXPECT_EQ(named[0].level, "L1");
    EXPECT_DOUBLE_EQ(named[0].plateau.median, 300e9);
    EXPECT_EQ(named[1].level, "L2");
    EXPECT_DOUBLE_EQ(named[1].plateau.median, 130e9);
    EXPECT_EQ(named[2].level, "L3");
    EXPECT_DOUBLE_EQ(named[2].plateau.median, 25e9);
    EXPECT_EQ(named[3].level, "DRAM");
    EXPECT_DOUBLE_EQ(named[3].plateau.median, 12e9);
}

TEST(Plateaus, NoisySweepStillFindsTheLevelsWithinNoise) {
    for (unsigned seed = 1; seed <= 20; ++seed) {
        auto s = four_level_sweep(0.05, seed);
        s[3].value *= 0.5;  // one stray point inside L1 (a neighbour's burst)
        const auto named = label_plateaus(s, detect_plateaus(s), levels);
        ASSERT_EQ(named.size(), 4u) << "seed " << seed;
        const double want[] = {300e9, 130e9, 25e9, 12e9};
        for (int i = 0; i < 4; ++i)
            EXPECT_NEAR(named[static_cast<std::size_t>(i)].plateau.median, want[i], 0.05 * want[i])
                << "seed " << seed << " level " << named[static_cast<std::size_t>(i)].level;
    }
}

TEST(Plateaus, SmoothDeclineHasNoPlateau) {
    // Bandwidth falling 20% per step never stays within 15% for three points.
    std::vector<SweepSample> s;
    double v = 300e9;
    for (double ws = 4 * KiB; ws <= 1024 * MiB; ws *= 2, v *= 0.8) s.push_back({ws, v});
    EXPECT_TRUE(detect_plateaus(s).empty());
}

TEST(Plateaus, TooFewPointsAndUnsortedInput) {
    EXPECT_TRUE(detect_plateaus({}).empty());
    const std::vector<SweepSample> two = {{4 * KiB, 1e9}, {8 * KiB, 1e9}};
    EXPECT_TRUE(detect_plateaus(two).empty());
    const std::vector<SweepSample> unsorted = {{8 * KiB, 1e9}, {4 * KiB, 1e9}, {16 * KiB, 1e9}};
    EXPECT_THROW(detect_plateaus(unsorted), std::invalid_argument);
}

TEST(Plateaus, LastPlateauPastTheOutermostCacheIsMemory) {
    // A VM reports the host's 300 MiB L3 while its share ends at ~32 MiB: the plateau from
    // 64 MiB to 1.2 GiB has its middle (~280 MiB) under 300 MiB, but it holds the sweep's
    // last point, beyond every cache, so it is DRAM.
    std::vector<SweepSample> s;
    for (double ws = 4 * MiB; ws <= 32 * MiB; ws *= 2) s.push_back({ws, 25e9});
    for (double ws = 64 * MiB; ws <= 1200 * MiB; ws *= 2) s.push_back({ws, 12e9});
    const std::vector<LevelCapacity> vm = {{"L1", 48 * KiB}, {"L2", 2 * MiB}, {"L3", 300 * MiB}};
    const auto named = label_plateaus(s, detect_plateaus(s), vm);
    ASSERT_EQ(named.size(), 2u);
    EXPECT_EQ(named[0].level, "L3");
    EXPECT_EQ(named[1].level, "DRAM");
}

TEST(Plateaus, MemoryWithoutAPlateauIsTheSweepsTailBeyondTheOutermostCache) {
    // Two vCPUs on two hosts' L3s the VM does not show: past its 32 MiB L3 the bandwidth
    // still falls at 64, 96 and 128 MiB, and the last two points (256 and 512 MiB) agree
    // within the tolerance: they are memory, though no three points make a plateau.
    const std::vector<SweepSample> s = {{4 * MiB, 180e9},  {8 * MiB, 181e9},   {16 * MiB, 179e9},
                                        {64 * MiB, 115e9}, {96 * MiB, 94e9},   {128 * MiB, 80e9},
                                        {256 * MiB, 70e9}, {512 * MiB, 66e9}};
    const auto named = label_plateaus(s, detect_plateaus(s), levels);
    ASSERT_EQ(named.size(), 2u);
    EXPECT_EQ(named[0].level, "L3");
    EXPECT_EQ(named[1].level, "DRAM");
    EXPECT_EQ(named[1].plateau.first, 6u);
    EXPECT_EQ(named[1].plateau.last, 7u);
    EXPECT_DOUBLE_EQ(named[1].plateau.median, 68e9);
    EXPECT_DOUBLE_EQ(named[1].plateau.min, 66e9);

    // A last point far from the one before it is memory alone.
    auto lone = s;
    lone.back().value = 50e9;
    const auto one = label_plateaus(lone, detect_plateaus(lone), levels);
    ASSERT_EQ(one.size(), 2u);
    EXPECT_EQ(one[1].level, "DRAM");
    EXPECT_EQ(one[1].plateau.points(), 1u);
    EXPECT_DOUBLE_EQ(one[1].plateau.median, 50e9);

    // A sweep that ends inside the caches has no memory roof to offer.
    const std::vector<SweepSample> short_sweep(s.begin(), s.begin() + 3);
    const auto cached = label_plateaus(short_sweep, detect_plateaus(short_sweep), levels);
    ASSERT_EQ(cached.size(), 1u);
    EXPECT_EQ(cached[0].level, "L3");
}

// Zen 5 (2-vCPU VM, 2026-12-05): stores that miss its 48 KiB L1 run at L1's rate through
// the 1 MiB L2, one write plateau from 4 KiB to 512 KiB; the sweep had measured L2's points,
// yet L2 read "no plateau (a busy or noisy host?)". Each level takes its own points.
std::vector<SweepSample> flat_through(double from, double to, double caps_l2) {
    std::vector<SweepSample> s;
    for (double ws = from; ws <= to; ws *= std::sqrt(2.0)) s.push_back({ws, 276e9});
    for (double ws = to * 2; ws <= caps_l2 * 8; ws *= std::sqrt(2.0)) s.push_back({ws, 120e9});
    for (double ws = 64 * MiB; ws <= 1024 * MiB; ws *= std::sqrt(2.0)) s.push_back({ws, 38e9});
    return s;
}
const std::vector<LevelCapacity> zen5 = {{"L1", 48 * KiB}, {"L2", 1 * MiB}, {"L3", 32 * MiB}};

TEST(Plateaus, APlateauSpanningTwoCacheLevelsGivesEachItsOwnPoints) {
    // Named L1 by its middle (~45 KiB): L2 takes the points past 48 KiB.
    const auto s = flat_through(4 * KiB, 512 * KiB, 1 * MiB);
    const auto named = label_plateaus(s, detect_plateaus(s), zen5);
    ASSERT_EQ(named.size(), 4u);
    EXPECT_EQ(named[0].level, "L1");
    EXPECT_EQ(named[1].level, "L2");
    EXPECT_EQ(named[2].level, "L3");
    EXPECT_EQ(named[3].level, "DRAM");
    EXPECT_LE(s[named[0].plateau.last].working_set_bytes, 48 * KiB);
    EXPECT_GT(s[named[1].plateau.first].working_set_bytes, 48 * KiB);
    EXPECT_LE(s[named[1].plateau.last].working_set_bytes, 1 * MiB);
    EXPECT_EQ(named[0].plateau.last + 1, named[1].plateau.first);
    EXPECT_DOUBLE_EQ(named[1].plateau.median, 276e9);
    EXPECT_DOUBLE_EQ(named[2].plateau.median, 120e9);

    // Named L2 by its middle (8 KiB to 1 MiB, as the update kernel's): L1 takes its points.
    const auto u = flat_through(8 * KiB, 1 * MiB, 1 * MiB);
    const auto un = label_plateaus(u, detect_plateaus(u), zen5);
    ASSERT_GE(un.size(), 2u);
    EXPECT_EQ(un[0].level, "L1");
    EXPECT_EQ(un[1].level, "L2");
    EXPECT_LE(u[un[0].plateau.last].working_set_bytes, 48 * KiB);
    EXPECT_GT(u[un[1].plateau.first].working_set_bytes, 48 * KiB);
}

TEST(Plateaus, MemoryGivesNoPointsToACacheLevelAndTwoPointsAreNotAPlateau) {
    // L3's own points scattered past the tolerance (no plateau); memory's plateau starts
    // inside the nominal L3: L3 stays without a roof rather than take DRAM's.
    std::vector<SweepSample> s = {{64 * KiB, 130e9},  {128 * KiB, 130e9}, {256 * KiB, 130e9},
                                  {512 * KiB, 130e9}, {2 * MiB, 60e9},    {3 * MiB, 30e9},
                                  {4 * MiB, 50e9},    {6 * MiB, 20e9},    {8 * MiB, 12e9},
                                  {12 * MiB, 12e9},   {16 * MiB, 12e9},   {24 * MiB, 12e9},
                                  {64 * MiB, 12e9},   {128 * MiB, 12e9}};
    const auto named = label_plateaus(s, detect_plateaus(s), zen5);
    for (const auto& n : named) EXPECT_NE(n.level, "L3") << n.plateau.median;
    EXPECT_EQ(named.back().level, "DRAM");

    // Two L1 points past a plateau named L2 are too few to make L1 a roof.
    const std::vector<SweepSample> two = {
        {32 * KiB, 200e9},  {45 * KiB, 200e9},  {64 * KiB, 200e9}, {128 * KiB, 200e9},
        {256 * KiB, 200e9}, {512 * KiB, 200e9}, {1 * MiB, 200e9}};
    const auto tn = label_plateaus(two, detect_plateaus(two), zen5);
    ASSERT_EQ(tn.size(), 1u);
    EXPECT_EQ(tn[0].level, "L2");
    EXPECT_EQ(tn[0].plateau.points(), 7u);
}

TEST(Plateaus, TwoPlateausInOneLevelKeepTheLonger) {
    std::vector<SweepSample> s = {{4 * KiB, 100}, {5 * KiB, 100}, {6 * KiB, 100},
                                  {7 * KiB, 50},  {8 * KiB, 50},  {9 * KiB, 50}, {10 * KiB, 50}};
    const auto named = label_plateaus(s, detect_plateaus(s), levels);
    ASSERT_EQ(named.size(), 1u);
    EXPECT_EQ(named[0].level, "L1");
    EXPECT_EQ(named[0].plateau.points(), 4u);
    EXPECT_DOUBLE_EQ(named[0].plateau.median, 50);
}

}  // namespace
}  // namespace ceiling
