// Whether a latency-bound region's rate is that of narrower vectors (or scalar code): the
// rung named, the ratio to the roof judged against, and the environment variable that picks a
// library's narrower kernel; nothing where no rung explains it or the widths run alike.
#include "diagnosis/vector_width.hpp"

#include <gtest/gtest.h>

#include "tests/unit/diagnosis/diagnosis_fixtures.hpp"

namespace ceiling {
namespace {

ComputeRoof rung(const std::string& name, Engine engine, const std::string& instruction,
                 double ops_per_s) {
    ComputeRoof r;
    r.name = name;
    r.engine = engine;
    r.instruction = instruction;
    r.ops_per_s.median = ops_per_s;
    return r;
}

// The synthetic profile (fp32_fma512 35.9 GFLOP/s on one thread) with a 256-bit rung at
// half of it and a scalar one at a sixteenth.
MachineProfile with_rungs(double ymm_ops_per_s = 35.9e9 / 2) {
    MachineProfile p = testing::synthetic_profile();
    p.compute_roofs.push_back(
        rung("fp32_fma256", Engine::vector, "vfmadd231ps ymm", ymm_ops_per_s));
    p.compute_roofs.push_back(rung("fp32_scalar", Engine::scalar, "vfmadd231ss", 35.9e9 / 16));
    return p;
}

Diagnosis judged(double fraction, Bound bound = Bound::latency) {
    Diagnosis d;
    d.bound = bound;
    RoofComparison c;
    c.kind = RoofKind::compute;
    c.roof = "fp32_fma512";
    c.precision = Precision::fp32;
    c.fraction = fraction;
    c.verdict = Verdict::good;
    d.roofs.push_back(c);
    return d;
}

const Thresholds t;

TEST(VectorWidth, ARateOfNarrowerVectorsNamesTheRungAndTheVariableThatPickedIt) {
    const auto w =
        narrower_vectors(with_rungs(), judged(0.42), t, {{"OPENBLAS_CORETYPE", "Haswell"}});
    ASSERT_TRUE(w);
    EXPECT_EQ(w->move.rfind("check its vector width: 84% of the fp32_fma256 roof, 42% of "
                            "the fp32_fma512 one, as 256-bit vectors would run "
                            "(where it calls that library, OPENBLAS_CORETYPE=Haswell in its "
                            "environment",
                            0),
              0u)
        << w->move;
    EXPECT_NE(w->finding.detail.find("raises its roof 2.0x"), std::string::npos)
        << w->finding.detail;
    // Without the variable, the lever stands alone.
    const auto plain = narrower_vectors(with_rungs(), judged(0.42), t, {});
    ASSERT_TRUE(plain);
    EXPECT_EQ(plain->move.find("environment"), std::string::npos);
}

// Its move goes after the system's levers at the front of the first move, before the table's.
TEST(VectorWidth, TheMoveFollowsTheSystemsLeversAndPrecedesTheTables) {
    const std::string table(first_move_for(decision_row(Bound::latency), Evidence{}));
    Diagnosis d = judged(0.42);
    d.first_move = "let its threads run at once (...); then " + table;
    weigh_vector_width(with_rungs(), d, t, {});
    EXPECT_EQ(
        d.first_move.rfind("let its threads run at once (...); then check its vector width: ", 0),
        0u)
        << d.first_move;
    EXPECT_TRUE(d.first_move.ends_with("; then " + table)) << d.first_move;
    // With the side of the ridge before the table's move, before that side.
    Diagnosis sided = judged(0.42);
    sided.first_move = std::string(right_of_ridge_move) + table;
    weigh_vector_width(with_rungs(), sided, t, {});
    EXPECT_EQ(sided.first_move.rfind("check its vector width: ", 0), 0u) << sided.first_move;
    EXPECT_TRUE(sided.first_move.ends_with(std::string(right_of_ridge_move) + table))
        << sided.first_move;
    ASSERT_FALSE(d.findings.empty());
    EXPECT_NE(d.findings.back().detail.find("as fast as 256-bit vectors allow"), std::string::npos);
}

TEST(VectorWidth, AScalarRateAsksForVectorisedCode) {
    const auto w = narrower_vectors(with_rungs(), judged(0.05), t, {});
    ASSERT_TRUE(w);
    EXPECT_NE(w->move.find("80% of the fp32_scalar roof"), std::string::npos) << w->move;
    EXPECT_NE(w->move.find("vectorised code"), std::string::npos) << w->move;
}

TEST(VectorWidth, NothingWhereNoRungExplainsTheRateOrTheWidthsRunAlike) {
    // Above the 256-bit rung's roof (1.1x) and far below the scalar one's: neither explains it.
    EXPECT_FALSE(narrower_vectors(with_rungs(), judged(0.55), t, {}));
    // Near the roof judged against, or another bound: the width is not what misleads.
    EXPECT_FALSE(narrower_vectors(with_rungs(), judged(0.65), t, {}));
    EXPECT_FALSE(narrower_vectors(with_rungs(), judged(0.42, Bound::bandwidth), t, {}));
    // Zen 4: 512-bit instructions at the 256-bit rate: the width is no lever.
    EXPECT_FALSE(narrower_vectors(with_rungs(35.9e9 / 1.1), judged(0.42), t, {}));
    // Left of the ridge: the roof to approach is bandwidth's.
    Diagnosis stream = judged(0.05);
    stream.roofs.front().roof_per_s = 35.9e9;
    RoofComparison dram;
    dram.kind = RoofKind::bandwidth;
    dram.roof_per_s = 10e9;  // ridge 3.59 op/B
    stream.roofs.push_back(dram);
    stream.intensity_ops_per_byte = 1.0;
    EXPECT_FALSE(narrower_vectors(with_rungs(), stream, t, {}));
    stream.intensity_ops_per_byte = 4.0;
    EXPECT_TRUE(narrower_vectors(with_rungs(), stream, t, {}));
    // A fraction above the roof is not one to scale.
    Diagnosis above = judged(0.42);
    above.roofs.front().verdict = Verdict::above_roof;
    EXPECT_FALSE(narrower_vectors(with_rungs(), above, t, {}));
}

// -march=native needs the program's own compiled code (diagnosis/premises.hpp): a library's
// op (a PyTorch op) is pointed at the library's kernel for this CPU instead.
TEST(VectorWidth, ALibrarysOpIsNeverToldToBuildWithMarchNative) {
    const Thresholds t;
    const auto own = narrower_vectors(with_rungs(), judged(0.42), t, {});
    const auto library = narrower_vectors(with_rungs(), judged(0.42), t, {}, false);
    ASSERT_TRUE(own && library);
    EXPECT_NE(own->move.find("-march=native"), std::string::npos) << own->move;
    EXPECT_EQ(library->move.find("-march=native"), std::string::npos) << library->move;
    EXPECT_EQ(library->finding.detail.find("-march=native"), std::string::npos) << library->finding.detail;
    EXPECT_NE(library->move.find("the library's kernel for this CPU"), std::string::npos) << library->move;
    Diagnosis d = judged(0.42);
    weigh_vector_width(with_rungs(), d, t, {}, Evidence{true, 1.0, std::nullopt});
    EXPECT_EQ(d.first_move.find("-march=native"), std::string::npos) << d.first_move;
}

}  // namespace
}  // namespace ceiling
