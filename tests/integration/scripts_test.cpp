// The scripts the tests never run whole (the benchmarks, the GPU check, the fresh-machine
// check) must at least parse: an apostrophe in a comment inside bench-kernels' single-quoted
// jq program once ended the quote, and the script failed at once until someone ran it.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/integration/process.hpp"

namespace ceiling {
namespace {

TEST(Scripts, EveryBashScriptParses) {
    const auto dir =
        std::filesystem::path(CEILING_TEST_DATA).parent_path().parent_path() / "scripts";
    int parsed = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (!entry.is_regular_file()) continue;
        std::ifstream in(entry.path());
        std::string first;
        std::getline(in, first);
        if (first.find("bash") == std::string::npos && entry.path().extension() != ".sh") continue;
        const auto r = testing::run_process({"bash", "-n", entry.path().string()});
        EXPECT_EQ(r.exit_code, 0) << entry.path() << ": " << r.err;
        ++parsed;
    }
    EXPECT_GE(parsed, 5) << "too few bash scripts found in " << dir;
}

// The Python the scripts run (gpu-check's judges) must compile as well.
TEST(Scripts, EveryPythonScriptCompiles) {
    const auto dir =
        std::filesystem::path(CEILING_TEST_DATA).parent_path().parent_path() / "scripts";
    testing::TempDir cache;
    int compiled = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() != ".py") continue;
        const auto r = testing::run_process(
            {"python3", "-c", "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)",
             entry.path().string(), (cache / "out.pyc").string()});
        EXPECT_EQ(r.exit_code, 0) << entry.path() << ": " << r.err;
        ++compiled;
    }
    EXPECT_GE(compiled, 1) << "no Python script found in " << dir;
}

// The GPU check's judges run here on crafted files (--judge DIR): a judge that crashes on a
// file it did not expect is a FAIL line naming it, never a step that passes by printing
// nothing; and a GEMV counted with null counts is judged, not a traceback.
TEST(Scripts, GpuCheckJudgesThatCrashFailTheirStep) {
    const auto script = std::filesystem::path(CEILING_TEST_DATA).parent_path().parent_path() /
                        "scripts" / "gpu-check";
    testing::TempDir dir;
    std::ofstream(dir / "gpu_counted.json") << R"({"regions": 7})";  // iterating it raises
    auto r = testing::run_process({"bash", script.string(), "--judge", dir.path().string()});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("FAIL  ceiling run --gpu-counters: its judge failed (exit 1): TypeError"),
              std::string::npos)
        << r.out << r.err;
    std::ofstream(dir / "gpu_counted.json", std::ios::trunc)
        << R"({"regions": [{"path": "step/gemv_kernel", "measurement":
               {"measured_ops_source": "cupti", "measured_ops": null, "measured_bytes": null}}]})";
    r = testing::run_process({"bash", script.string(), "--judge", dir.path().string()});
    EXPECT_NE(r.out.find("FAIL  ceiling run --gpu-counters on undeclared kernels: 1 kernels counted"),
              std::string::npos)
        << r.out << r.err;
    EXPECT_EQ(r.out.find("its judge failed"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace ceiling
