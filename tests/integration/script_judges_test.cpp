// Every judge of the scripts the tests never run whole (scripts/gpu-check, bench-kernels,
// bench-ceilings, bench-run; and check-layers, on trees) runs here on saved outputs (tests/data/scripts/: synthetic files in
// the formats the tools write, since this machine has no GPU and the benchmarks take minutes),
// through each script's own --judge: a good one must pass, a failing one fail with the line
// that says why, and a malformed one fail too (a judge that crashes or reads nothing never
// passes by saying nothing). The first run of a lent GPU is judged by these.
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/integration/process.hpp"

namespace ceiling::testing {
namespace {

namespace fs = std::filesystem;

fs::path repo() { return fs::path(CEILING_TEST_DATA).parent_path().parent_path(); }
fs::path saved(const std::string& name) { return fs::path(CEILING_TEST_DATA) / "scripts" / name; }

// FILE -> its new content, written over a copy of a saved folder.
using Changes = std::map<std::string, std::string>;

struct Judged {
    int exit_code = -1;
    std::string out;
    bool says(const std::string& line) const { return out.find(line) != std::string::npos; }
};

std::ostream& operator<<(std::ostream& o, const Judged& j) {
    return o << "exit " << j.exit_code << ":\n" << j.out;
}

// `script --judge` on a copy of the saved folder `good` with `changes` made to it; the copy
// stands as the folder, or with `file` set, that file in it.
Judged judge(const std::string& script, const std::string& good, const Changes& changes,
             const std::vector<std::string>& after = {}, const std::string& file = "") {
    TempDir dir;
    fs::copy(saved(good), dir.path(), fs::copy_options::recursive);
    for (const auto& [name, text] : changes) std::ofstream(dir / name, std::ios::trunc) << text;
    std::vector<std::string> argv = {"bash", (repo() / "scripts" / script).string(), "--judge",
                                     file.empty() ? dir.path().string() : (dir / file).string()};
    argv.insert(argv.end(), after.begin(), after.end());
    const auto r = run_process(argv);
    return {r.exit_code, r.out + r.err};
}

// A saved JSON file of `good` with `edit` applied, as text.
template <typename Edit>
std::string edited(const std::string& good, const std::string& file, Edit edit) {
    auto j = nlohmann::json::parse(slurp(saved(good) / file));
    edit(j);
    return j.dump();
}

// ---- scripts/gpu-check ---------------------------------------------------------------------

struct GpuJudge {
    const char* judge;
    const char* passes;  // a line of the good run
    Changes failing;
    const char* fails;  // the line the failing run must print
    Changes malformed;
    const char* fails_malformed;
};

std::ostream& operator<<(std::ostream& o, const GpuJudge& j) { return o << j.judge; }

const std::string device_test = R"("name": "EachMeasuredRoofLiesBetweenItsFloorAndItsTheoreticalValue")";

const GpuJudge gpu_judges[] = {
    {"doctor", "PASS  ceiling doctor: all checks passed",
     {{"doctor.rc", "1\n"}, {"doctor.txt", "CUPTI: counters not permitted (NVreg_RestrictProfilingToAdminUsers=1)\n"}},
     "FAIL  ceiling doctor: exited 1 (CUPTI: counters not permitted",
     {{"doctor.rc", ""}, {"doctor.txt", ""}},
     "FAIL  ceiling doctor: no exit status (no output)"},
    {"unit_tests", "PASS  GPU unit tests: 3 device tests ran and passed",
     {{"test_kernels.json",
       R"({"testsuites": [{"name": "GpuRoofs", "testsuite": [{)" + device_test +
           R"(, "status": "RUN", "result": "COMPLETED", "failures": [{"failure": "0.2x"}]}]}]})"}},
     "FAIL  GPU unit tests: 1 failed: GpuRoofs.EachMeasuredRoof",
     {{"test_kernels.json", R"({"testsuites": 5})"}},
     "FAIL  GPU unit tests: its judge failed (exit 1): TypeError"},
    {"suite", "PASS  ceiling suite --device gpu: 3 of 3 GPU cases judged by the engine",
     {{"suite.json", R"({"notes": [], "regions": [
         {"path": "gpu-gemv/fp32/optimized/16384x16384", "labels": {"device": "gpu"}}],
         "region_diagnoses": [{"path": "gpu-gemv/fp32/optimized/16384x16384",
                               "diagnosis": {"bound": "compute", "verdict": "good"}}]})"}},
     "FAIL  GPU GEMV decode bandwidth bound: gpu-gemv/fp32/optimized/16384x16384 compute",
     {{"suite.json", R"({"regions": [1]})"}},
     "FAIL  ceiling suite --device gpu: its judge failed (exit 1): AttributeError"},
    {"gpu_run", "PASS  ceiling run on a CUDA program: 1 kernel(s) judged against the GPU roofs",
     {{"gpu_run.trace.json", R"({"traceEvents": []})"}},
     "FAIL  ceiling run on a CUDA program: trace GPU tracks: none",
     {{"gpu_run.json", R"({"regions": {"step": 1}})"}},
     "FAIL  ceiling run on a CUDA program: its judge failed (exit 1): AttributeError"},
    {"cpu_run", "PASS  ceiling run around a CPU-only program on a GPU host: 15.1 ms end to end",
     {{"cpu_repeat_ms.txt", "812.0\n"}},
     "FAIL  ceiling run around a CPU-only program on a GPU host: 4.06 ms per execution",
     {{"cpu_repeat_ms.txt", "soon\n"}},
     "FAIL  ceiling run around a CPU-only program on a GPU host: --repeat 200 not measured (soon)"},
    {"counted_run", "PASS  ceiling run --gpu-counters on undeclared kernels: 1 kernels counted",
     {{"gpu_counted.json", R"({"regions": [{"path": "gemv_kernel", "measurement":
         {"measured_ops_source": "cupti", "measured_ops": 2.68e8, "measured_bytes": 2.7e8}}],
         "region_diagnoses": [{"path": "gemv_kernel", "diagnosis": {"bound": "bandwidth"}}]})"}},
     "FAIL  ceiling run --gpu-counters on undeclared kernels: 1 kernels counted; GEMV 2.68e+08 ops, "
     "2.7e+08 DRAM bytes (0.50x analytic)",
     {{"gpu_counted.json", R"({"regions": 7})"}},
     "FAIL  ceiling run --gpu-counters: its judge failed (exit 1): TypeError"},
    {"criteria_lines", "PASS  counters_vs_ncu 4 values of 2 cases, all within 3%",
     {{"timed.json", R"([{"name": "gemm/bf16/library/8192x8192x8192", "ops_per_s": 1.1e15}])"}},
     "FAIL  bf16_tensor_roof_vs_cublas_8192 roof bf16_wgmma 970 TFLOP/s, cuBLAS 8192^3 1100",
     {{"machine.json", R"({"gpus": [{"compute_roofs": 3, "bandwidth_roofs": []}]})"}},
     "FAIL  hbm_copy_vs_d2d_memcpy: not evaluated (no line in criteria.txt)"},
};

class GpuCheckJudge : public ::testing::TestWithParam<GpuJudge> {};

TEST_P(GpuCheckJudge, PassesAGoodRunFailsAFailingOneAndAMalformedOne) {
    const GpuJudge& j = GetParam();
    const auto good = judge("gpu-check", "gpu-check/good", {}, {j.judge});
    EXPECT_EQ(good.exit_code, 0) << good;
    EXPECT_TRUE(good.says(j.passes)) << good;
    EXPECT_FALSE(good.says("FAIL")) << good;
    const auto failing = judge("gpu-check", "gpu-check/good", j.failing, {j.judge});
    EXPECT_EQ(failing.exit_code, 1) << failing;
    EXPECT_TRUE(failing.says(j.fails)) << failing;
    const auto malformed = judge("gpu-check", "gpu-check/good", j.malformed, {j.judge});
    EXPECT_EQ(malformed.exit_code, 1) << malformed;
    EXPECT_TRUE(malformed.says(j.fails_malformed)) << malformed;
}

INSTANTIATE_TEST_SUITE_P(Scripts, GpuCheckJudge, ::testing::ValuesIn(gpu_judges),
                         [](const ::testing::TestParamInfo<GpuJudge>& i) {
                             return std::string(i.param.judge);
                         });

// A judge accounts for every case that ran: one left unjudged is a FAIL naming it, never a
// shorter list of passes.
TEST(GpuCheckJudges, ACaseThatRanAndWasNotJudgedFails) {
    // The engine left the fp32 cuBLAS case without a verdict.
    auto r = judge("gpu-check", "gpu-check/good",
                   {{"suite.json", edited("gpu-check/good", "suite.json", [](auto& j) {
                         j["region_diagnoses"].erase(2);
                     })}},
                   {"suite"});
    EXPECT_TRUE(r.says("FAIL  ceiling suite --device gpu: 2 of 3 GPU cases judged by the engine: "
                       "not gpu-gemm/fp32/library/8192x8192x8192"))
        << r;
    // A device test the device run never reached (the binary stopped early).
    r = judge("gpu-check", "gpu-check/good",
              {{"test_agent.json", edited("gpu-check/good", "test_agent.json", [](auto& j) {
                    j["testsuites"][0]["testsuite"].erase(0);
                })}},
              {"unit_tests"});
    EXPECT_TRUE(r.says("test_agent: 1 device tests not run on the device: GpuRun.")) << r;
    // A single run of /bin/true that failed is no time, not one fewer in the median.
    r = judge("gpu-check", "gpu-check/good", {{"cpu_run_ms.txt", "14.2\nfailed (exit 124)\n15.0\n"}},
              {"cpu_run"});
    EXPECT_TRUE(r.says("FAIL  ceiling run around a CPU-only program on a GPU host: 2 of 3 single "
                       "runs finished (failed (exit 124))"))
        << r;
    // A kernel the engine judged against no GPU roof.
    r = judge("gpu-check", "gpu-check/good",
              {{"gpu_run.json", edited("gpu-check/good", "gpu_run.json", [](auto& j) {
                    j["region_diagnoses"][0]["diagnosis"]["roofs"] = nlohmann::json::array();
                })}},
              {"gpu_run"});
    EXPECT_TRUE(r.says("FAIL  ceiling run on a CUDA program: 0 of 1 kernels judged")) << r;
    // A case ncu and our counters both ran and that no value compares.
    r = judge("gpu-check", "gpu-check/good",
              {{"cases.json", edited("gpu-check/good", "cases.json", [](auto& j) {
                    j.push_back(nlohmann::json{{"name", "nms/greedy/optimized/4096"}});
                })}},
              {"criteria_lines"});
    EXPECT_TRUE(r.says("FAIL  counters_vs_ncu 2 of 3 cases compared; not: nms/greedy/optimized/4096"))
        << r;
    EXPECT_EQ(r.exit_code, 1);
    // A case unavailable here ran nothing: named, not counted against the comparison.
    r = judge("gpu-check", "gpu-check/good",
              {{"cases.json", edited("gpu-check/good", "cases.json", [](auto& j) {
                    j.push_back(nlohmann::json{{"name", "gemm/bf16/library/8192x8192x8192"},
                                               {"unavailable", "cuBLAS not found"}});
                })}},
              {"criteria_lines"});
    EXPECT_TRUE(r.says("PASS  counters_vs_ncu 4 values of 2 cases, all within 3%; 1 unavailable "
                       "here: gemm/bf16/library/8192x8192x8192"))
        << r;
}

// ---- scripts/bench-kernels -------------------------------------------------------------------

TEST(BenchKernelsJudge, PassesAGoodRecordFailsAFailingOneAndAMalformedOne) {
    const auto good = judge("bench-kernels", "bench-kernels", {}, {}, "good.json");
    EXPECT_EQ(good.exit_code, 0) << good;
    EXPECT_TRUE(good.says("PASS  GEMV int8 16384 speed-up over fp32: 3.41x")) << good;
    EXPECT_FALSE(good.says("FAIL")) << good;
    // bf16 GEMV no faster than 1.45x fp32, and a library case gone from the record.
    const auto failing = judge(
        "bench-kernels", "bench-kernels",
        {{"good.json", edited("bench-kernels", "good.json", [](auto& j) {
              auto& regions = j["regions"];
              for (auto it = regions.begin(); it != regions.end();) {
                  if ((*it)["path"] == "gemv/bf16/optimized/16384x16384")
                      (*it)["measurement"]["duration_s"]["median"] = 0.02;
                  if ((*it)["path"] == "resize/bilinear/library/1080x1920")
                      it = regions.erase(it);
                  else
                      ++it;
              }
          })}},
        {}, "good.json");
    EXPECT_EQ(failing.exit_code, 1) << failing;
    EXPECT_TRUE(failing.says("FAIL  GEMV bf16 16384 speed-up over fp32: 1.45x")) << failing;
    EXPECT_TRUE(failing.says("FAIL  resize vs OpenCV 1080x1920: not measured: "
                             "resize/bilinear/library/1080x1920 missing from the record"))
        << failing;
    // Cut short: not JSON.
    const auto malformed =
        judge("bench-kernels", "bench-kernels", {{"good.json", R"({"regions": [{"path": )"}}, {},
              "good.json");
    EXPECT_EQ(malformed.exit_code, 1) << malformed;
    EXPECT_TRUE(malformed.says("FAIL  cannot read")) << malformed;
    // JSON, but not a suite record: every comparison is missing its cases.
    const auto empty =
        judge("bench-kernels", "bench-kernels", {{"good.json", R"({"regions": 5})"}}, {}, "good.json");
    EXPECT_EQ(empty.exit_code, 1) << empty;
    EXPECT_TRUE(empty.says("FAIL  GEMM fp32 vs OpenBLAS, ? threads: not measured")) << empty;
}

// ---- scripts/bench-ceilings ------------------------------------------------------------------

TEST(BenchCeilingsJudge, PassesAGoodRunFailsAFailingOneAndAMalformedOne) {
    const auto good = judge("bench-ceilings", "bench-ceilings/good", {});
    EXPECT_EQ(good.exit_code, 0) << good;
    EXPECT_TRUE(good.says("PASS  fp32 FMA roof vs likwid: ratio ceiling/likwid 0.983")) << good;
    EXPECT_TRUE(good.says("PASS  fp32 FMA measured/theoretical: 0.978")) << good;
    EXPECT_TRUE(good.says("PASS  DRAM read roof vs likwid")) << good;
    const auto failing = judge("bench-ceilings", "bench-ceilings/good",
                               {{"likwid-flops", "300000\n"}, {"likwid-load", "FAIL no figure\n"}});
    EXPECT_EQ(failing.exit_code, 1) << failing;
    EXPECT_TRUE(failing.says("FAIL  fp32 FMA roof vs likwid: ratio ceiling/likwid 0.803")) << failing;
    EXPECT_TRUE(failing.says("FAIL  DRAM read roof vs likwid: no likwid figure: no figure")) << failing;
    const auto malformed = judge(
        "bench-ceilings", "bench-ceilings/good",
        {{"profile.json", R"({"host": {"isa": ["fma"], "threads_used": 2}, "compute_roofs": 5})"}});
    EXPECT_EQ(malformed.exit_code, 1) << malformed;
    EXPECT_TRUE(malformed.says("FAIL  cannot read")) << malformed;
}

// A theoretical value the measurement chose (a CPU the peak table does not know, or a row of
// two counts) agrees with the measurement by construction: never a PASS.
TEST(BenchCeilingsJudge, TheoryInferredFromTheMeasurementIsNoAgreement) {
    const auto r = judge("bench-ceilings", "bench-ceilings/good",
                         {{"profile.json", edited("bench-ceilings/good", "profile.json", [](auto& j) {
                               for (auto& roof : j["compute_roofs"])
                                   roof["theoretical_from_measurement"] = true;
                           })}});
    EXPECT_FALSE(r.says("PASS  fp32 FMA measured/theoretical")) << r;
    EXPECT_TRUE(r.says("SKIP  fp32 FMA measured/theoretical: n/a: theory inferred from the "
                       "measurement"))
        << r;
}

// ---- scripts/bench-run -----------------------------------------------------------------------

TEST(BenchRunJudge, PassesAGoodRunFailsAFailingOneAndAMalformedOne) {
    const auto good = judge("bench-run", "bench-run/good", {});
    EXPECT_EQ(good.exit_code, 0) << good;
    EXPECT_TRUE(good.says("NVTX-heavy, 100k ranges/s")) << good;
    EXPECT_FALSE(good.says("MISSED")) << good;
    EXPECT_FALSE(good.says("FAIL")) << good;
    // The CPU-bound program 5 % longer end to end: its 2 % goal missed.
    const auto failing = judge("bench-run", "bench-run/good",
                               {{"cpu.e2e", "2.11\n2.10\n2.10\n2.12\n2.11\n"}});
    EXPECT_EQ(failing.exit_code, 1) << failing;
    EXPECT_TRUE(failing.says("goal <= 2%: MISSED")) << failing;
    const auto malformed = judge("bench-run", "bench-run/good", {{"cpu.prog", "2.01\nabc\n"}});
    EXPECT_EQ(malformed.exit_code, 1) << malformed;
    EXPECT_TRUE(malformed.says("FAIL: not measured: cpu.prog missing, empty or not seconds"))
        << malformed;
}

// The NVTX-heavy goal is met only with every range recorded: a record that lost them cost the
// program nothing to write.
TEST(BenchRunJudge, TheNvtxGoalIsNotMetWithRangesMissingFromARecord) {
    auto r = judge("bench-run", "bench-run/good",
                   {{"nvtx.recorded", "200000\n200000\nnone\n200000\n200000\n"}});
    EXPECT_EQ(r.exit_code, 1) << r;
    EXPECT_TRUE(r.says("FAIL: not every range recorded: 200000 ranges pushed per run, the records "
                       "held 200000 200000 none 200000 200000"))
        << r;
    r = judge("bench-run", "bench-run/good", {{"nvtx.recorded", ""}});
    EXPECT_EQ(r.exit_code, 1) << r;
    EXPECT_TRUE(r.says("FAIL: not every range recorded")) << r;
}

// ---- scripts/check-layers ----------------------------------------------------------------------

// The house's arrows (docs/DESIGN.md, section 2) judged on trees: this repository passes; a
// tree whose diagnosis room includes the run room fails naming the include; a tree without
// the rooms the table names fails rather than passing by checking nothing.
TEST(CheckLayersJudge, PassesThisTreeFailsAWrongArrowAndATreeWithoutTheRooms) {
    const std::string script = (repo() / "scripts" / "check-layers").string();
    auto r = run_process({"bash", script, repo().string()});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    TempDir tree;
    for (const char* room : {"agent/cli", "agent/run", "agent/suite", "agent/machine", "agent/judge",
                             "agent/output", "agent/store", "agent/inject", "diagnosis",
                             "collectors", "kernels"})
        fs::create_directories(tree / room);
    std::ofstream(tree / "diagnosis" / "work.cpp") << "#include \"diagnosis/work.hpp\"\n";
    r = run_process({"bash", script, tree.path().string()});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    std::ofstream(tree / "diagnosis" / "bound.cpp") << "#include \"agent/run/region.hpp\"\n";
    r = run_process({"bash", script, tree.path().string()});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("diagnosis/bound.cpp:1: diagnosis may not include agent/run/region.hpp"),
              std::string::npos)
        << r.out;
    TempDir bare;
    r = run_process({"bash", script, bare.path().string()});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.err.find("check-layers: no folder"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ceiling::testing
