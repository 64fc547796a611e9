// Theoretical peaks: clock x instructions/cycle x ops/instruction x cores, per ISA and
// precision, from the data tables.

#include "diagnosis/peak_table.hpp"

#include <set>

#include <gtest/gtest.h>

namespace ceiling {
namespace {

const Microarchitecture& spr() {
    const auto* u = find_microarchitecture("GenuineIntel", 6, 0xCF);  // Emerald Rapids
    EXPECT_NE(u, nullptr);
    return *u;
}

struct PeakCase {
    const char* roof;
    double per_cycle_per_core;  // ops, written out below
};

// Sapphire/Emerald Rapids, per core per cycle:
//   fp64 scalar FMA: 2 ports x 1 lane x 2      = 4
//   fp32 128-bit:    2 ports x 4 lanes x 2     = 16
//   fp32 256-bit:    2 x 8 x 2                 = 32
//   fp64 512-bit:    2 x 8 x 2                 = 32
//   fp32 512-bit:    2 x 16 x 2                = 64
//   fp16 512-bit:    2 x 32 x 2                = 128
//   bf16 vdpbf16ps:  0.5 x (16 lanes x 2 pairs x 2) = 32
//   int8 vpdpbusd:   2 x (16 x 4 x 2)          = 256
//   AMX bf16:        1/16 x (16 x 16 x 32 x 2) = 1024
//   AMX int8:        1/16 x (16 x 16 x 64 x 2) = 2048
const PeakCase spr_cases[] = {
    {"fp64_scalar", 4},  {"fp32_fma128", 16},  {"fp32_fma256", 32}, {"fp64_fma512", 32},
    {"fp32_fma512", 64}, {"fp16_fma512", 128}, {"bf16_dot512", 32}, {"int8_dot512", 256},
    {"bf16_amx", 1024},  {"int8_amx", 2048},
};

TEST(PeakTable, SapphireRapidsPerCycleArithmetic) {
    for (const auto& c : spr_cases) {
        const auto peak = theoretical_ops_per_s(spr(), c.roof, 1.0, 1);
        ASSERT_TRUE(peak) << c.roof;
        EXPECT_DOUBLE_EQ(*peak, c.per_cycle_per_core) << c.roof;
    }
}

TEST(PeakTable, ScalesWithClockAndCores) {
    // fp32 zmm FMA on 2 cores at 2.8 GHz: 2.8e9 x 64 x 2 = 358.4 GFLOP/s.
    EXPECT_DOUBLE_EQ(*theoretical_ops_per_s(spr(), "fp32_fma512", 2.8e9, 2), 358.4e9);
}

TEST(PeakTable, UnknownRoofOrBadInputsHaveNoTheoreticalValue) {
    // Haswell has no AVX-512: no 512-bit theoretical peak, never a made-up one.
    const auto* hsw = find_microarchitecture("GenuineIntel", 6, 0x3F);
    ASSERT_NE(hsw, nullptr);
    EXPECT_FALSE(theoretical_ops_per_s(*hsw, "fp32_fma512", 3e9, 1));
    EXPECT_DOUBLE_EQ(*theoretical_ops_per_s(*hsw, "fp32_fma256", 1, 1), 32);
    EXPECT_FALSE(theoretical_ops_per_s(spr(), "no_such_roof", 3e9, 1));
    EXPECT_FALSE(theoretical_ops_per_s(spr(), "fp32_fma512", 0, 1));
    EXPECT_FALSE(theoretical_ops_per_s(spr(), "fp32_fma512", 3e9, 0));
    EXPECT_EQ(find_microarchitecture("GenuineIntel", 6, 0x01), nullptr);
    EXPECT_EQ(find_microarchitecture("CentaurHauls", 6, 0xCF), nullptr);
}

TEST(PeakTable, ZenFourDoublePumpsAvx512) {
    const auto* zen4 = find_microarchitecture("AuthenticAMD", 0x19, 0x11);
    ASSERT_NE(zen4, nullptr);
    // 512-bit FMAs occupy a 256-bit pipe twice: same per-cycle peak as 256-bit.
    EXPECT_DOUBLE_EQ(*theoretical_ops_per_s(*zen4, "fp32_fma512", 1, 1),
                     *theoretical_ops_per_s(*zen4, "fp32_fma256", 1, 1));
}

TEST(PeakTable, ZenFiveServerIsFullWidthAndMobileLetsTheMeasurementDecide) {
    // Turin (02h, the development VM): two full 512-bit FMA pipes.
    const auto* turin = find_microarchitecture("AuthenticAMD", 0x1A, 0x02);
    ASSERT_NE(turin, nullptr);
    EXPECT_EQ(*instructions_per_cycle(*turin, "fp32_fma512"), 2);
    // Strix Point (24h): a 256-bit datapath; both counts listed, the measurement picks.
    const auto* strix = find_microarchitecture("AuthenticAMD", 0x1A, 0x24);
    ASSERT_NE(strix, nullptr);
    EXPECT_NE(strix, turin);
    EXPECT_EQ(*instructions_per_cycle(*strix, "fp32_fma512"), 1);
    EXPECT_EQ(*instructions_per_cycle(*strix, "fp32_fma256"), 2);
    EXPECT_EQ(decide_instructions_per_cycle(strix, "fp32_fma512", 1.97).instructions_per_cycle, 2);
    EXPECT_EQ(decide_instructions_per_cycle(strix, "fp32_fma512", 1.02).instructions_per_cycle, 1);
}

TEST(PeakTable, TablesAreConsistent) {
    std::set<std::string_view> roofs;
    for (const auto& c : instruction_classes()) {
        EXPECT_TRUE(roofs.insert(c.roof).second) << "duplicate roof " << c.roof;
        EXPECT_GT(c.ops_per_instruction, 0) << c.roof;
        const std::set<std::string_view> widths = {"scalar", "128", "256", "512", "amx"};
        EXPECT_TRUE(widths.count(c.clock_width)) << c.roof;
    }
    std::set<std::pair<std::string_view, int>> models;
    for (const auto& u : microarchitectures()) {
        for (const auto& t : u.throughput) {
            EXPECT_TRUE(roofs.count(t.roof)) << u.name << " lists unknown roof " << t.roof;
            EXPECT_GT(t.instructions_per_cycle, 0) << u.name << " " << t.roof;
        }
        for (int m : u.models)
            EXPECT_TRUE(models.insert({u.vendor, u.family * 256 + m}).second)
                << u.name << " repeats model " << m;
    }
}

TEST(PeakTable, ZenAndZenPlusSplit256BitFmas) {
    // Family 17h models 01h/08h/11h/18h are Zen/Zen+ (two 128-bit FMA pipes), not Zen 2.
    for (int model : {0x01, 0x08, 0x11, 0x18}) {
        const auto* u = find_microarchitecture("AuthenticAMD", 0x17, model);
        ASSERT_NE(u, nullptr) << model;
        EXPECT_EQ(u->name, std::string_view("Zen / Zen+")) << model;
        EXPECT_EQ(*instructions_per_cycle(*u, "fp32_fma256"), 1) << model;
        EXPECT_EQ(*instructions_per_cycle(*u, "fp32_fma128"), 2) << model;
    }
    EXPECT_EQ(
        *instructions_per_cycle(*find_microarchitecture("AuthenticAMD", 0x17, 0x31), "fp32_fma256"),
        2);
}

TEST(PortBasis, TheTableDecidesAndTheMeasurementConfirmsOrDisagrees) {
    const auto* zen4 = find_microarchitecture("AuthenticAMD", 0x19, 0x11);
    auto b = decide_instructions_per_cycle(zen4, "fp32_fma512", 0.99);
    EXPECT_EQ(b.instructions_per_cycle, 1);
    EXPECT_FALSE(b.disagrees);
    EXPECT_FALSE(b.from_measurement);
    EXPECT_NE(b.source.find("Zen 4 table row"), std::string::npos) << b.source;
    EXPECT_NE(b.source.find("confirmed"), std::string::npos) << b.source;
    // A measurement far from the table is said, and the table's count still stands.
    b = decide_instructions_per_cycle(zen4, "fp32_fma512", 1.98);
    EXPECT_EQ(b.instructions_per_cycle, 1);
    EXPECT_TRUE(b.disagrees);
    EXPECT_NE(b.source.find("DISAGREES"), std::string::npos) << b.source;
    // No measurement: the table alone, said without a confirmation.
    b = decide_instructions_per_cycle(zen4, "fp32_fma512", std::nullopt);
    EXPECT_EQ(b.instructions_per_cycle, 1);
    EXPECT_EQ(b.source.find("confirmed"), std::string::npos) << b.source;
}

TEST(PortBasis, WhereTheTableListsTwoCountsTheMeasurementPicks) {
    // Skylake-SP model 0x55: Gold 6xxx has two 512-bit FMA units, Silver/Gold 5xxx one.
    const auto* skx = find_microarchitecture("GenuineIntel", 6, 0x55);
    ASSERT_NE(skx, nullptr);
    EXPECT_EQ(decide_instructions_per_cycle(skx, "fp32_fma512", 1.03).instructions_per_cycle, 1);
    EXPECT_EQ(decide_instructions_per_cycle(skx, "fp32_fma512", 1.9).instructions_per_cycle, 2);
    const auto b = decide_instructions_per_cycle(skx, "fp32_fma512", 1.03);
    EXPECT_NE(b.source.find("picks"), std::string::npos) << b.source;
    // Picked by the measurement, the count follows it: no check of it.
    EXPECT_TRUE(b.from_measurement);
    EXPECT_TRUE(decide_instructions_per_cycle(skx, "fp32_fma512", 1.9).from_measurement);
    // Without a measurement the first count stands, the table's.
    EXPECT_FALSE(decide_instructions_per_cycle(skx, "fp32_fma512", std::nullopt).from_measurement);
    // 256-bit rows are not ambiguous: two ports on every part.
    EXPECT_EQ(decide_instructions_per_cycle(skx, "fp32_fma256", 1.0).instructions_per_cycle, 2);
    EXPECT_FALSE(decide_instructions_per_cycle(skx, "fp32_fma256", 1.0).from_measurement);
}

TEST(PortBasis, AnUnknownCpuTakesAPlausibleMeasuredCountOrNothing) {
    auto b = decide_instructions_per_cycle(nullptr, "fp32_fma256", 1.93);
    EXPECT_EQ(b.instructions_per_cycle, 2);
    EXPECT_TRUE(b.from_measurement);
    EXPECT_NE(b.source.find("CPU not in the table"), std::string::npos) << b.source;
    // 1.5 per cycle is no count a core has: no theoretical value rather than a guess.
    EXPECT_FALSE(decide_instructions_per_cycle(nullptr, "fp32_fma256", 1.5).instructions_per_cycle);
    EXPECT_FALSE(
        decide_instructions_per_cycle(nullptr, "fp32_fma256", std::nullopt).instructions_per_cycle);
    // A tile unit's counts are per tens of cycles (one tile product per 16.1 cycles measured
    // on an SPR guest whose model number the table does not list); a vector one's are not.
    b = decide_instructions_per_cycle(nullptr, "bf16_amx", 1 / 16.1);
    EXPECT_EQ(b.instructions_per_cycle, 1.0 / 16) << b.source;
    EXPECT_FALSE(decide_instructions_per_cycle(nullptr, "fp32_fma256", 1 / 16.1).instructions_per_cycle);
    EXPECT_FALSE(decide_instructions_per_cycle(nullptr, "bf16_amx", 1.0).instructions_per_cycle);
    // Haswell knows no 512-bit row: same rule.
    const auto* hsw = find_microarchitecture("GenuineIntel", 6, 0x3F);
    b = decide_instructions_per_cycle(hsw, "fp32_fma512", 0.5);
    EXPECT_EQ(b.instructions_per_cycle, 0.5);
    EXPECT_NE(b.source.find("no row"), std::string::npos) << b.source;
}

TEST(PortBasis, SapphireRapidsBf16RowSaysItIsCeilingsOwnMeasurement) {
    const auto b = decide_instructions_per_cycle(&spr(), "bf16_dot512", 0.5);
    EXPECT_NE(b.source.find("ceiling's own measurement"), std::string::npos) << b.source;
    EXPECT_EQ(b.source.find("Optimization Reference Manual"), std::string::npos) << b.source;
}

}  // namespace
}  // namespace ceiling
