// `ceiling diff`: records written by `run` (regions slower by a known factor) and bad input.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/integration/run_support.hpp"

namespace ceiling::testing {
namespace {

TEST(Diff, FlagsARegionThatGotSlower) {
    CEILING_NEED_NVTX();
    TempDir dir;
    ASSERT_EQ(ceiling_run(dir / "before.json", {"-q", "--repeat", "3"}, {nvtx_target, "preprocess", "2"}).exit_code, 0);
    ASSERT_EQ(ceiling_run(dir / "after.json", {"-q", "--repeat", "3"}, {nvtx_target, "preprocess", "4"}).exit_code, 0);
    const auto r = run_ceiling({"diff", (dir / "before.json").string(), (dir / "after.json").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // preprocess ran twice as often: about 2x its time per run, well beyond the noise.
    std::string line;
    std::istringstream lines(r.out);
    bool seen = false;
    while (std::getline(lines, line))
        if (line.rfind("preprocess", 0) == 0) {
            seen = true;
            EXPECT_NE(line.find("SLOWER"), std::string::npos) << line;
        }
    EXPECT_TRUE(seen) << r.out;
    EXPECT_NE(r.out.find("whole run"), std::string::npos);
}

TEST(Diff, OneRunEachSaysTheNoiseIsUnknown) {
    TempDir dir;
    ASSERT_EQ(ceiling_run(dir / "a.json", {"-q"}, {run_target, "exit", "0"}).exit_code, 0);
    ASSERT_EQ(ceiling_run(dir / "b.json", {"-q"}, {run_target, "exit", "0"}).exit_code, 0);
    const auto r = run_ceiling({"diff", (dir / "a.json").string(), (dir / "b.json").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("noise unknown"), std::string::npos) << r.out;
}

TEST(Diff, BadInputIsExit2NamingTheFile) {
    TempDir dir;
    ASSERT_EQ(ceiling_run(dir / "a.json", {"-q"}, {run_target, "exit", "0"}).exit_code, 0);
    std::ofstream(dir / "bad.json") << "{";
    const auto r = run_ceiling({"diff", (dir / "a.json").string(), (dir / "bad.json").string()});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find((dir / "bad.json").string()), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ceiling::testing
