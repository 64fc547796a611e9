// `ceiling suite` end to end on a small subset: every case checked and timed, the record,
// roofline and trace written and readable, `report` re-rendering the record; bad input gets
// the documented exit status before anything is measured.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "agent/store/run_store.hpp"
#include "kernels/gpu/gpu_kernels.hpp"
#include "tests/integration/process.hpp"

namespace ceiling::testing {
namespace {

// A saved profile, so the test measures kernels and not the machine.
const std::string profile = std::string(CEILING_TEST_DATA) + "/profile_vm_quick.json";

TEST(Suite, QuickSubsetWritesARecordTheRooflineAndATrace) {
    TempDir dir;
    const auto record_path = dir / "s.json";
    const auto r = run_ceiling({"-q", "suite", "--quick", "--kernels", "nms,resize", "--variants",
                                "naive,optimized", "--threads", "1", "--profile", profile, "-o",
                                record_path.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("First moves"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("score pre-filter"), std::string::npos)
        << r.out;  // the change-the-problem lever

    const RunRecord rec = store::load_run_record(record_path);
    EXPECT_EQ(rec.kind, RecordKind::suite);
    ASSERT_GE(rec.regions.size(), 4u);
    for (const auto& reg : rec.regions) {
        EXPECT_EQ(reg.kind, RegionKind::kernel) << reg.path;
        EXPECT_TRUE(reg.labels.count("kernel") && reg.labels.count("variant")) << reg.path;
        ASSERT_TRUE(reg.measurement.work) << reg.path;
        EXPECT_GT(reg.measurement.work->ops, 0) << reg.path;
        EXPECT_GE(reg.measurement.durations_s.size(), 3u) << reg.path;
        EXPECT_GT(reg.measurement.duration_s.median, 0) << reg.path;
    }
    EXPECT_EQ(rec.region_diagnoses.size(), rec.regions.size());
    EXPECT_FALSE(rec.diagnosis) << "a suite is judged kernel by kernel, not as one run";

    const std::string svg = slurp(dir / "s.svg");
    EXPECT_NE(svg.find("<svg"), std::string::npos);
    EXPECT_NE(svg.find("nms/greedy/optimized"), std::string::npos);
    const auto trace = nlohmann::json::parse(slurp(dir / "s.trace.json"));
    std::size_t complete = 0;
    for (const auto& e : trace.at("traceEvents")) {
        if (e.value("ph", "") == "X") ++complete;
        if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name") {
            EXPECT_EQ(e["args"]["name"], "kernels, 1 thread") << "--threads 1: one track, named so";
        }
        if (e.value("ph", "") == "C") {
            EXPECT_EQ(e["args"].size(), 1u) << "one unit per counter track";
        }
    }
    EXPECT_GE(complete, 3 * rec.regions.size());  // one event per timed repetition

    // report re-renders the same cases from the record alone.
    const auto shown = run_ceiling({"report", record_path.string()});
    EXPECT_EQ(shown.exit_code, 0) << shown.err;
    for (const auto& reg : rec.regions)
        EXPECT_NE(shown.out.find(reg.labels.at("shape")), std::string::npos);
    EXPECT_NE(shown.out.find("First moves"), std::string::npos) << shown.out;

    // diff compares suites kernel by kernel (a suite's wall time depends on what it ran).
    const auto diffed = run_ceiling({"diff", record_path.string(), record_path.string()});
    EXPECT_EQ(diffed.exit_code, 0) << diffed.err;
    for (const auto& reg : rec.regions)
        EXPECT_NE(diffed.out.find(reg.path), std::string::npos) << diffed.out;
    EXPECT_EQ(diffed.out.find("whole run"), std::string::npos) << diffed.out;
}

// A shape's variants are timed in turns, not one after the other, so that a host slowing
// down for a while slows both sides of a comparison alike: in the trace (one event per
// timed run) the library's first run comes before the optimized variant's last one.
TEST(Suite, AShapesVariantsAreTimedInTurns) {
    TempDir dir;
    const auto record_path = dir / "s.json";
    const auto r = run_ceiling({"-q", "suite", "--quick", "--kernels", "resize", "--variants",
                                "optimized,library", "--threads", "1", "--profile", profile, "-o",
                                record_path.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const RunRecord rec = store::load_run_record(record_path);
    std::string shape;
    for (const auto& reg : rec.regions)
        if (reg.labels.at("variant") == "library") shape = reg.labels.at("shape");
    if (shape.empty()) GTEST_SKIP() << "no library resize case measured here: " << r.out;
    const auto trace = nlohmann::json::parse(slurp(dir / "s.trace.json"));
    double last_optimized = -1, first_library = -1;
    for (const auto& e : trace.at("traceEvents")) {
        const std::string name = e.value("name", "");
        if (e.value("ph", "") != "X" || !name.ends_with("/" + shape)) continue;
        const double ts = e.at("ts").get<double>();
        if (name.find("/optimized/") != std::string::npos)
            last_optimized = std::max(last_optimized, ts);
        if (name.find("/library/") != std::string::npos &&
            (first_library < 0 || ts < first_library))
            first_library = ts;
    }
    ASSERT_GE(last_optimized, 0);
    ASSERT_GE(first_library, 0);
    EXPECT_LT(first_library, last_optimized) << "optimized ran all its runs before the library's";
}

// The roofs each shape's cases are judged against are measured in turns with them: GEMV is
// judged against a DRAM roof (the test profile has them at one thread, and any CPU can run
// the stream kernels), so the record holds DRAM checks, each naming cases of this suite, and
// every case a check names says which roof it was judged against. Which DRAM kernel, and
// whether a case's first run reached `far` of it, depends on its speed (a sanitizer build is
// slower), so not every case is required to have one. --no-roof-check measures none.
TEST(Suite, TheRoofsAreMeasuredInTurnsWithTheCases) {
    TempDir dir;
    const auto off = run_ceiling({"-q", "suite", "--quick", "--kernels", "nms", "--variants",
                                  "optimized", "--threads", "1", "--no-roof-check", "--profile",
                                  profile, "-o", (dir / "off.json").string()});
    ASSERT_EQ(off.exit_code, 0) << off.err << off.out;
    EXPECT_TRUE(store::load_run_record(dir / "off.json").roof_checks.empty());
    EXPECT_EQ(off.out.find("Roofs measured in turns"), std::string::npos) << off.out;

#if defined(__SANITIZE_ADDRESS__)
    // GEMV's 16384^2 cases, checked against their reference in a Debug build, take a minute;
    // the looks run under the sanitizers in the other suite runs here and the unit tests.
    GTEST_SKIP() << "sanitizer build: the looks beside GEMV are checked in the release build";
#endif
    const auto record_path = dir / "s.json";
    const auto r =
        run_ceiling({"-q", "suite", "--quick", "--kernels", "gemv", "--variants", "optimized",
                     "--threads", "1", "--profile", profile, "-o", record_path.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("Roofs measured in turns with the cases"), std::string::npos) << r.out;
    const RunRecord rec = store::load_run_record(record_path);
    std::set<std::string> named;
    bool dram = false;
    for (const auto& c : rec.roof_checks) {
        ASSERT_FALSE(c.beside.empty()) << c.kernel;
        EXPECT_GT(c.now_per_s, 0) << c.kernel;
        ASSERT_TRUE(c.slowest_per_s) << c.kernel;
        EXPECT_LE(*c.slowest_per_s, c.now_per_s);
        dram = dram || (c.kind == RoofKind::bandwidth && c.level == "DRAM" && c.threads == 1);
        for (const auto& name : c.beside) {
            EXPECT_TRUE(rec.region(name)) << name << " is not a case of this suite";
            named.insert(name);
        }
    }
    EXPECT_TRUE(dram) << "no DRAM roof measured beside any GEMV case";
    for (const auto& v : rec.region_diagnoses) {
        if (!named.count(v.path)) continue;
        const auto& f = v.diagnosis.findings;
        const bool said = std::any_of(f.begin(), f.end(), [](const Finding& x) {
            return x.detail.find("measured in turns with it") != std::string::npos;
        });
        EXPECT_TRUE(said) << v.path << ": judged against which roof?";
    }
}

TEST(Suite, UnknownNamesExitTwoListingTheValidOnes) {
    TempDir dir;
    auto r = run_ceiling(
        {"suite", "--kernels", "gemmm", "--profile", profile, "-o", (dir / "s.json").string()});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("gemmm"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("gemv"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "not one line: " << r.err;
    r = run_ceiling(
        {"suite", "--variants", "fast", "--profile", profile, "-o", (dir / "s.json").string()});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("optimized"), std::string::npos) << r.err;
    r = run_ceiling({"suite", "--threads", "100000", "-o", (dir / "s.json").string()});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    r = run_ceiling({"suite", "--quick", "--full", "-o", (dir / "s.json").string()});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--full"), std::string::npos) << r.err;
    EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

// The library variants come from libceiling_libraries.so, loaded when first wanted: where it
// cannot be loaded they are unavailable, saying why, and the rest of the suite runs.
TEST(Suite, LibraryVariantsWithoutTheirModuleSayWhy) {
    TempDir dir;
    const auto missing = (dir / "nowhere" / "libceiling_libraries.so").string();
    const auto r = run_ceiling({"-q", "suite", "--quick", "--kernels", "nms", "--profile", profile,
                                "-o", (dir / "s.json").string()},
                               {"CEILING_LIBRARIES=" + missing});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto rec = store::load_run_record(dir / "s.json");
    bool said = false;
    for (const auto& n : rec.notes)
        said = said || (n.find("nms/greedy/library") != std::string::npos &&
                        n.find("unavailable") != std::string::npos &&
                        n.find(missing) != std::string::npos);
    EXPECT_TRUE(said) << "no note says why the library variant is unavailable";
    bool optimized = false;
    for (const auto& reg : rec.regions) optimized = optimized || reg.path.find("optimized") != std::string::npos;
    EXPECT_TRUE(optimized) << "the other variants did not run";
}

// Without a usable GPU, asking for GPU cases only is an error that says why; the default
// runs the CPU cases and notes why the GPU ones did not run.
TEST(Suite, GpuCasesWithoutAGpuSayWhy) {
    const auto gpu = kernels::gpu::gpu_availability();
    if (!gpu.devices.empty()) GTEST_SKIP() << "a GPU is usable here: scripts/gpu-check covers it";
    TempDir dir;
    auto r = run_ceiling(
        {"suite", "--device", "gpu", "--profile", profile, "-o", (dir / "g.json").string()});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(gpu.reason), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "g.json"));

    r = run_ceiling({"-q", "suite", "--quick", "--kernels", "nms", "--variants", "optimized",
                     "--profile", profile, "-o", (dir / "s.json").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    bool noted = false;
    for (const auto& n : store::load_run_record(dir / "s.json").notes)
        noted = noted || n.find("GPU cases not run: " + gpu.reason) != std::string::npos;
    EXPECT_TRUE(noted);
}

TEST(Suite, UnwritableOutputFailsBeforeMeasuring) {
    TempDir dir;
    { std::ofstream(dir / "file") << "x"; }
    const auto target = dir / "file" / "s.json";  // parent is a regular file
    const auto r = run_ceiling(
        {"suite", "--quick", "--kernels", "nms", "--profile", profile, "-o", target.string()});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(target.string()), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

}  // namespace
}  // namespace ceiling::testing
