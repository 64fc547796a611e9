// Derived metrics on recorded raw counts, with the arithmetic written out: FLOPs from
// FP_ARITH per width, bytes from memory-controller CAS, estimates labelled, ratios with a
// zero denominator absent, and the self-validation verdicts.

#include "collectors/pmu_metrics.hpp"

#include <array>

#include <gtest/gtest.h>

#include "collectors/pmu_tables.hpp"

namespace ceiling::collectors {
namespace {

constexpr std::array<std::string_view, 1> flops_group = {group_flops};

ScaledCount exact(double v) {
    ScaledCount c;
    c.value = v;
    return c;
}

const UarchEvents& spr() {
    const UarchEvents* t = find_uarch_events("spr");
    EXPECT_NE(t, nullptr);
    return *t;
}

EventCounts spr_counts() {
    return {
        {"FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", exact(1000)},
        {"FP_ARITH_INST_RETIRED:SCALAR_SINGLE", exact(2000)},
        {"FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE", exact(300)},
        {"FP_ARITH_INST_RETIRED:128B_PACKED_SINGLE", exact(400)},
        {"FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE", exact(50)},
        {"FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE", exact(60)},
        {"FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE", exact(7)},
        {"FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE", exact(8)},
    };
}

TEST(Flops, FromFpArithPerWidth) {
    // fp64: 1000 x 1 + 300 x 2 + 50 x 4 + 7 x 8  = 1000 + 600 + 200 + 56  = 1856
    // fp32: 2000 x 1 + 400 x 4 + 60 x 8 + 8 x 16 = 2000 + 1600 + 480 + 128 = 4208
    // all:  1856 + 4208 = 6064
    const auto counts = spr_counts();
    EXPECT_DOUBLE_EQ(*flops_from_counts(spr().flops, counts, flops_group, "fp64").value, 1856);
    EXPECT_DOUBLE_EQ(*flops_from_counts(spr().flops, counts, flops_group, "fp32").value, 4208);
    const auto all = flops_from_counts(spr().flops, counts, flops_group);
    EXPECT_DOUBLE_EQ(*all.value, 6064);
    EXPECT_FALSE(all.low_confidence);
    EXPECT_FALSE(all.estimate);
}

TEST(Flops, FmaCountsTwiceInTheEventNotInTheFormula) {
    // 1e6 vfmadd231pd zmm: 8 doubles x (multiply + add) = 16 FLOPs each, 1.6e7 in all.
    // The hardware counts each FMA instruction twice in 512B_PACKED_DOUBLE (2e6), and the
    // table's factor is the lane count (8): 2e6 x 8 = 1.6e7.
    EventCounts counts = spr_counts();
    for (auto& [name, c] : counts) c = exact(0);
    counts["FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE"] = exact(2e6);
    EXPECT_DOUBLE_EQ(*flops_from_counts(spr().flops, counts, flops_group, "fp64").value, 1.6e7);
}

TEST(Flops, AbsentWhenATermWasNotCountedNeverAPartialSum) {
    EventCounts counts = spr_counts();
    counts.erase("FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE");
    const auto fp32 = flops_from_counts(spr().flops, counts, flops_group, "fp32");
    EXPECT_FALSE(fp32.value);
    EXPECT_NE(fp32.note.find("512B_PACKED_SINGLE"), std::string::npos);
    // fp64 does not need that event.
    EXPECT_TRUE(flops_from_counts(spr().flops, counts, flops_group, "fp64").value);
    // A counter that never got scheduled is absent too.
    counts["FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE"] = ScaledCount{};
    EXPECT_FALSE(flops_from_counts(spr().flops, counts, flops_group).value);
}

TEST(Flops, MultiplexedInputsCarryTheirConfidence) {
    EventCounts counts = spr_counts();
    ScaledCount thin = exact(8);
    thin.running_fraction = 0.3;
    thin.low_confidence = true;
    thin.note = "counted 30% of the time";
    counts["FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE"] = thin;
    const auto all = flops_from_counts(spr().flops, counts, flops_group);
    ASSERT_TRUE(all.value);
    EXPECT_TRUE(all.low_confidence);
    EXPECT_DOUBLE_EQ(*all.running_fraction, 0.3);
}

TEST(Flops, HalfPrecisionAndAmxOnlyWhenAskedFor) {
    // FP16: 10 x 1 (scalar) + 5 x 2 (complex scalar) + 4 x 8 + 3 x 16 + 2 x 32
    //     = 10 + 10 + 32 + 48 + 64 = 164
    EventCounts counts = spr_counts();
    counts["FP_ARITH_INST_RETIRED2:SCALAR_HALF"] = exact(10);
    counts["FP_ARITH_INST_RETIRED2:COMPLEX_SCALAR_HALF"] = exact(5);
    counts["FP_ARITH_INST_RETIRED2:128B_PACKED_HALF"] = exact(4);
    counts["FP_ARITH_INST_RETIRED2:256B_PACKED_HALF"] = exact(3);
    counts["FP_ARITH_INST_RETIRED2:512B_PACKED_HALF"] = exact(2);
    counts["AMX_OPS_RETIRED:BF16"] = exact(100);
    EXPECT_FALSE(flops_from_counts(spr().flops, counts, flops_group, "fp16").value)
        << "not in the default group";
    constexpr std::array<std::string_view, 2> with_half = {group_flops, group_flops_half};
    EXPECT_DOUBLE_EQ(*flops_from_counts(spr().flops, counts, with_half, "fp16").value, 164);
    // AMX: 100 x 4 = 400, low-confidence (event withdrawn by Intel).
    constexpr std::array<std::string_view, 1> matrix = {group_flops_matrix};
    const auto amx = flops_from_counts(spr().flops, counts, matrix, "bf16");
    EXPECT_DOUBLE_EQ(*amx.value, 400);
    EXPECT_TRUE(amx.low_confidence);
}

TEST(Flops, AmdCountsFlopsDirectly) {
    // RETIRED_SSE_AVX_FLOPS already counts FLOPs (a MAC as 2): factor 1.
    const UarchEvents* zen4 = find_uarch_events("amd64_fam19h_zen4");
    ASSERT_NE(zen4, nullptr);
    const EventCounts counts = {{"RETIRED_SSE_AVX_FLOPS:ANY", exact(5e9)}};
    EXPECT_DOUBLE_EQ(*flops_from_counts(zen4->flops, counts, flops_group).value, 5e9);
    EXPECT_FALSE(flops_from_counts(zen4->flops, counts, flops_group, "fp64").value)
        << "AMD does not split by precision: absent, not 0";
}

TEST(Bytes, FromMemoryControllerCas) {
    // 1.5e6 CAS reads + 0.5e6 CAS writes, 64 bytes each: 2e6 x 64 = 1.28e8 bytes.
    const ByteRecipe& cas = spr().dram_bytes[0];
    ASSERT_EQ(cas.sysfs_pmu, "uncore_imc");
    const EventCounts counts = {{"cas_count_read", exact(1.5e6)},
                                {"cas_count_write", exact(0.5e6)}};
    const auto b = bytes_from_counts(cas, counts);
    EXPECT_DOUBLE_EQ(*b.value, 1.28e8);
    EXPECT_FALSE(b.estimate);
}

TEST(Bytes, FromLlcMissesIsLabelledAnEstimate) {
    // 1e6 L3 misses x 64-byte lines = 6.4e7 bytes, an estimate.
    const ByteRecipe& llc = spr().dram_bytes.back();
    ASSERT_TRUE(llc.estimate);
    const auto b = bytes_from_counts(llc, {{"LONGEST_LAT_CACHE:MISS", exact(1e6)}});
    EXPECT_DOUBLE_EQ(*b.value, 6.4e7);
    EXPECT_TRUE(b.estimate);
    EXPECT_NE(b.note.find("estimate"), std::string::npos);
    EXPECT_FALSE(bytes_from_counts(llc, {}).value) << "no count, no bytes: absent, not 0";
}

TEST(Ratio, ZeroOrUnknownDenominatorIsAbsentNotZero) {
    EXPECT_DOUBLE_EQ(*ratio(3.0e9, 1.5e9), 2.0);
    EXPECT_FALSE(ratio(3.0e9, 0.0));
    EXPECT_FALSE(ratio(3.0e9, std::nullopt));
    EXPECT_FALSE(ratio(std::nullopt, 2.0));
    EXPECT_DOUBLE_EQ(*ratio(0.0, 2.0), 0.0) << "a zero numerator is a real zero";
}

TEST(SelfValidation, Trusted) {
    // Known work 1.6e7 FLOPs, counted 1.6032e7: ratio 1.002, inside +/-5%.
    const auto v = validate_count("FLOPs", 1.6e7, 1.6032e7, flops_tolerance);
    EXPECT_EQ(v.verdict, Verdict::trusted);
    EXPECT_NEAR(*v.ratio, 1.002, 1e-12);
    EXPECT_NE(v.explanation.find("trusted"), std::string::npos);
}

TEST(SelfValidation, UntrustedBecauseZero) {
    const auto v = validate_count("FLOPs", 1.6e7, 0.0, flops_tolerance);
    EXPECT_EQ(v.verdict, Verdict::untrusted_zero);
    EXPECT_NE(v.explanation.find("read 0"), std::string::npos);
}

TEST(SelfValidation, UntrustedBecauseOffByTwo) {
    // Counted 3.2e7 for 1.6e7: ratio 2.0, e.g. a PMU counting FMA twice and the formula
    // doubling it again.
    const auto v = validate_count("FLOPs", 1.6e7, 3.2e7, flops_tolerance);
    EXPECT_EQ(v.verdict, Verdict::untrusted_ratio);
    EXPECT_DOUBLE_EQ(*v.ratio, 2.0);
    EXPECT_NE(v.explanation.find("ratio 2"), std::string::npos);
    // Half the work counted is as untrustworthy.
    EXPECT_EQ(validate_count("FLOPs", 1.6e7, 0.8e7, flops_tolerance).verdict,
              Verdict::untrusted_ratio);
}

TEST(SelfValidation, NotMeasuredAndBadExpectations) {
    EXPECT_EQ(validate_count("bytes", 1e9, std::nullopt, bytes_tolerance).verdict,
              Verdict::not_measured);
    EXPECT_THROW(validate_count("bytes", 0, 1.0, bytes_tolerance), std::invalid_argument);
    EXPECT_EQ(to_string(Verdict::untrusted_zero), "untrusted_zero");
}

TEST(Tables, AreSoundAndTheCheckCatchesMistakes) {
    EXPECT_TRUE(check_uarch_events(uarch_events()).empty());
    // A table with a zero factor, an unknown precision and a duplicated event.
    static constexpr FlopTerm bad_flops[] = {
        {"FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", 0, "fp64", group_flops},
        {"FP_ARITH_INST_RETIRED:SCALAR_SINGLE", 1, "fp33", group_flops},
        {"FP_ARITH_INST_RETIRED:SCALAR_SINGLE", 1, "fp32", group_flops},
    };
    static constexpr ByteTerm bad_bytes[] = {{"LONGEST_LAT_CACHE:MISS", -64, "sideways"}};
    static constexpr ByteRecipe bad_recipe[] = {{"bad", "", bad_bytes, true, ""}};
    const UarchEvents bad[] = {{"bad", "GenuineIntel", "Bad", "UNHALTED_CORE_CYCLES",
                                "INSTRUCTION_RETIRED", bad_flops, bad_recipe, 8, ""}};
    const auto problems = check_uarch_events(bad);
    ASSERT_EQ(problems.size(), 5u);
    auto mentions = [&](const char* what) {
        for (const auto& p : problems)
            if (p.find(what) != std::string::npos) return true;
        return false;
    };
    EXPECT_TRUE(mentions("flop per count"));
    EXPECT_TRUE(mentions("unknown precision 'fp33'"));
    EXPECT_TRUE(mentions("listed twice"));
    EXPECT_TRUE(mentions("bytes per count"));
    EXPECT_TRUE(mentions("unknown direction"));
}

// The verdict cache and doctor's JSON read verdicts back by name.
TEST(Verdict, NamesReadBackAndUnknownNamesDoNot) {
    for (auto v : {Verdict::trusted, Verdict::untrusted_zero, Verdict::untrusted_ratio, Verdict::not_measured})
        EXPECT_EQ(parse_verdict(to_string(v)), v);
    EXPECT_FALSE(parse_verdict("trusted "));
    EXPECT_FALSE(parse_verdict(""));
}

}  // namespace
}  // namespace ceiling::collectors
