// The suite table renders from a record alone: rows grouped by kernel, the comparisons for
// a CPU family and its GPU twin alike, first moves grouped by bound.
#include "agent/output/suite_table.hpp"

#include <sstream>

#include <gtest/gtest.h>

namespace ceiling::output {
namespace {

RecordedRegion gemv(const std::string& kernel, const std::string& problem, double bytes,
                    double seconds, Device device) {
    RecordedRegion r;
    r.kind = RegionKind::kernel;
    r.path = r.name = kernel + "/" + problem + "/optimized/16384x8192";
    r.labels = {{"kernel", kernel},
                {"problem", problem},
                {"variant", "optimized"},
                {"shape", "16384x8192"}};
    Work w;
    w.device = device;
    w.ops = 2.0 * 16384 * 8192;
    w.compulsory_bytes = bytes;
    w.working_set_bytes = bytes;
    r.measurement.work = w;
    r.measurement.threads = 2;
    r.measurement.durations_s = {seconds, seconds, seconds};
    r.measurement.duration_s = summarize(r.measurement.durations_s);
    return r;
}

TEST(SuiteTable, QuantisationIsComparedForTheCpuFamilyAndItsGpuTwin) {
    RunRecord rec;
    rec.kind = RecordKind::suite;
    const double fp32 = 4.0 * 16384 * 8192;
    rec.regions = {gemv("gemv", "fp32", fp32, 0.020, Device::cpu),
                   gemv("gemv", "int8", fp32 / 4, 0.006, Device::cpu),
                   gemv("gpu-gemv", "fp32", fp32, 2e-4, Device::gpu),
                   gemv("gpu-gemv", "int8", fp32 / 4, 5e-5, Device::gpu)};
    rec.whole.durations_s = {1.5};
    std::ostringstream out;
    render_suite(rec, out);
    const std::string s = out.str();
    EXPECT_NE(
        s.find(
            "gemv 16384x8192 optimized: int8 weights 3.33x faster than fp32 (4.00x fewer bytes)"),
        std::string::npos)
        << s;
    EXPECT_NE(s.find("gpu-gemv 16384x8192 optimized: int8 weights 4.00x faster than fp32"),
              std::string::npos)
        << s;
    EXPECT_NE(s.find("gpu-gemv\n"), std::string::npos) << "GPU cases under their own heading:\n"
                                                       << s;
    EXPECT_NE(s.find("GPU"), std::string::npos) << "a GPU row shows GPU, not a thread count:\n"
                                                << s;
    EXPECT_EQ(s.find("First moves"), std::string::npos) << "not judged: no first moves to show\n"
                                                        << s;
    EXPECT_NE(s.find("Suite took 1.5 s"), std::string::npos) << s;
    EXPECT_NE(s.find("no hardware counts"), std::string::npos) << s;
}

TEST(SuiteTable, CountedWorkIsShownBesideTheAnalytic) {
    RunRecord rec;
    rec.kind = RecordKind::suite;
    auto r = gemv("gemv", "fp32", 4.0 * 16384 * 8192, 0.02, Device::cpu);
    r.measurement.measured_ops =
        1.02 * r.measurement.work->ops;  // FMA counted twice, plus loop overhead
    r.measurement.measured_bytes = 0.97 * r.measurement.work->compulsory_bytes;
    rec.regions = {r};
    std::ostringstream out;
    render_suite(rec, out);
    EXPECT_NE(
        out.str().find("gemv/fp32/optimized/16384x8192: FLOPs counted/analytic x1.02, DRAM bytes "
                       "counted/compulsory x0.97"),
        std::string::npos)
        << out.str();
}

// A judged GEMM case: its fraction of the bf16_amx roof (1 Top/s) and its working set's
// level; right of the ridge (the compute roof is what it can attain) unless told otherwise.
void add_judged(RunRecord& rec, const std::string& problem, const std::string& variant,
                const std::string& shape, double fraction, const std::string& level,
                bool right_of_ridge = true) {
    auto r = gemv("gemm", problem, 1e6, 1e-3, Device::cpu);
    r.path = r.name = "gemm/" + problem + "/" + variant + "/" + shape;
    r.labels["variant"] = variant;
    r.labels["shape"] = shape;
    rec.regions.push_back(r);
    RegionVerdict d;
    d.path = r.path;
    d.diagnosis.level = level;
    d.diagnosis.attainable_ops_per_s = right_of_ridge ? 1e12 : 0.2e12;
    RoofComparison c;
    c.kind = RoofKind::compute;
    c.roof = "bf16_amx";
    c.roof_per_s = 1e12;
    c.fraction = fraction;
    d.diagnosis.roofs = {c};
    rec.region_diagnoses.push_back(d);
}

// The "-tiles" problem is the kernel's loop alone: its ceilings per cache level, beside the
// kernel's own fractions of the same roof (why the kernel stops where it does), for the
// cases that roof bounds (one left of the ridge is held by bandwidth, not the loop) and not
// a sweep's points (the sweep has its own line).
TEST(SuiteTable, ALoopCeilingIsSetBesideItsKernel) {
    RunRecord rec;
    rec.kind = RecordKind::suite;
    add_judged(rec, "bf16", "optimized", "2048x2048x2048", 0.38, "L3");
    add_judged(rec, "bf16", "library", "2048x2048x2048", 0.29, "L3");
    add_judged(rec, "bf16", "optimized", "4x2048x2048", 0.05, "DRAM", false);
    add_judged(rec, "bf16", "optimized", "256x2048x2048", 0.3, "DRAM");
    rec.regions.back().labels["series"] = "batch";
    add_judged(rec, "bf16-tiles", "optimized", "32x32x256", 0.83, "L1");
    add_judged(rec, "bf16-tiles", "optimized", "32x32x4096", 0.53, "L2");
    add_judged(rec, "fp32", "optimized", "512x512x512", 0.9, "L2");
    std::ostringstream out;
    render_suite(rec, out);
    EXPECT_NE(out.str().find("gemm bf16: its loop alone (bf16-tiles) reaches 83% of the bf16_amx "
                             "roof with its operands in L1 (32x32x256), 53% with its operands in "
                             "L2 (32x32x4096); the whole kernel: optimized 2048x2048x2048 38%, "
                             "library 2048x2048x2048 29%\n"),
              std::string::npos)
        << out.str();
    EXPECT_EQ(out.str().find("gemm fp32: its loop"), std::string::npos) << out.str();
}

// The roofs measured in turns with the cases: one line per roof with the range of its share
// of the profile's (best looks) over the shapes, the lowest named, and the shapes whose
// looks disagreed listed too (their fractions may be higher than shown).
TEST(SuiteTable, RoofsMeasuredBesideTheCasesAreListedPerRoof) {
    RunRecord rec;
    rec.kind = RecordKind::suite;
    add_judged(rec, "fp32", "optimized", "512x512x512", 0.9, "L2");
    const auto check = [](const char* roof, double now, double slowest,
                          std::vector<std::string> beside) {
        RoofCheck c{"", roof, 2, 200e9, now, RoofKind::compute, slowest, 2, {}};
        c.beside = std::move(beside);
        return c;
    };
    rec.roof_checks = {
        check("fp32_fma512", 190e9, 185e9, {"gemm/fp32/optimized/512", "gemm/fp32/library/512"}),
        check("fp32_fma512", 110e9, 104e9, {"gemm/fp32/optimized/256x4096x4096"}),
        check("fp32_fma512", 200e9, 120e9, {"gemm/fp32/optimized/1024"})};
    // A shape's other problems and variants are counted, not called variants (GEMV's bf16 and
    // int8 weights share the fp32 shape's rounds).
    RoofCheck dram{"DRAM", "read", 2, 20e9, 20e9, RoofKind::bandwidth, 10e9, 2, {}};
    dram.beside = {"gemv/fp32/optimized/16384x16384", "gemv/fp32/library/16384x16384",
                   "gemv/int8/optimized/16384x16384"};
    rec.roof_checks.push_back(dram);
    std::ostringstream out;
    render_suite(rec, out);
    EXPECT_NE(
        out.str().find("  fp32_fma512, 2 threads: 0.55-1.00 x the profile's 200 Gop/s beside 3 "
                       "shapes (lowest beside gemm/fp32/optimized/256x4096x4096); moved "
                       "during the looks beside gemm/fp32/optimized/1024 0.60-1.00\n"),
        std::string::npos)
        << out.str();
    EXPECT_NE(out.str().find("(those roofs as measured in turns with the case"), std::string::npos);
    EXPECT_NE(
        out.str().find("  DRAM read, 2 threads: 1.00 x the profile's 20.0 GB/s beside 1 shape; "
                       "moved during the looks beside gemv/fp32/optimized/16384x16384 and 2 "
                       "more 0.50-1.00\n"),
        std::string::npos)
        << out.str();

    // A run's checks (after the run, beside no case) are not the suite's.
    for (auto& c : rec.roof_checks) c.beside.clear();
    std::ostringstream plain;
    render_suite(rec, plain);
    EXPECT_EQ(plain.str().find("Roofs measured in turns"), std::string::npos) << plain.str();
    EXPECT_EQ(plain.str().find("(those roofs as measured"), std::string::npos);
}

}  // namespace
}  // namespace ceiling::output
