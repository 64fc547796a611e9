// The default summary of `ceiling run` and `ceiling report`: the answer in at most 30 lines,
// ending with the first move; --detail keeps every finding (output/run_answer.hpp).

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/run_support.hpp"

namespace ceiling::testing {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
}

// `ceiling run` without --detail, as a user types it.
ProcessResult run_plain(const std::filesystem::path& out, const std::vector<std::string>& argv,
                        std::vector<std::string> options = {}) {
    std::vector<std::string> args = {"run", "--output", out.string(), "--profile",
                                     std::string(CEILING_TEST_DATA) + "/profile_synthetic.json"};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back("--");
    args.insert(args.end(), argv.begin(), argv.end());
    return run_ceiling(args);
}

// The answer's shape: what ran first, at most 30 lines (the record's line after them), the
// run's verdict, and the first move last.
void expect_answer(const std::string& err) {
    auto lines = lines_of(err);
    while (!lines.empty() && (lines.front().empty() || lines.front().rfind("ceiling run:", 0) != 0))
        lines.erase(lines.begin());  // ceiling's progress lines before the summary, if any
    ASSERT_FALSE(lines.empty()) << err;
    ASSERT_EQ(lines.back().rfind("record: ", 0), 0u) << err;
    lines.pop_back();
    EXPECT_LE(lines.size(), 30u) << err;
    std::size_t run_line = lines.size(), move_line = lines.size();
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].rfind("Run:   ", 0) == 0) run_line = i;
        if (lines[i].rfind("First move: ", 0) == 0) move_line = i;
    }
    ASSERT_LT(run_line, lines.size()) << err;
    // Nothing after the first move but its own continuation lines.
    if (move_line < lines.size())
        for (std::size_t i = move_line + 1; i < lines.size(); ++i)
            EXPECT_EQ(lines[i].rfind("            ", 0), 0u) << lines[i] << "\n" << err;
    EXPECT_NE(err.find("--detail"), std::string::npos) << err;
    EXPECT_EQ(err.find("note: "), std::string::npos) << "notes belong to --detail:\n" << err;
}

TEST(RunAnswer, AProgramWithoutRegionsGetsTheAnswerInThirtyLines) {
    TempDir dir;
    const auto r = run_plain(dir / "r.json", {run_target, "work", "20"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_answer(r.err);
    EXPECT_NE(r.err.find("No NVTX regions recorded"), std::string::npos) << r.err;
}

TEST(RunAnswer, AProgramWithRegionsGetsATableOfThemAndTheAnswer) {
    CEILING_NEED_NVTX();
    TempDir dir;
    const auto r = run_plain(dir / "r.json", {nvtx_target, "declared", "3"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_answer(r.err);
    EXPECT_NE(r.err.find("Where the time went"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("gemm"), std::string::npos) << r.err;
    // Its declared work placed on the roofline: a fraction of a named roof, in a band.
    EXPECT_NE(r.err.find("fp32_fma512 ("), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("(good)"), std::string::npos) << "no praise words:\n" << r.err;
}

TEST(RunAnswer, ReportGivesTheAnswerAndDetailGivesEverything) {
    CEILING_NEED_NVTX();
    TempDir dir;
    ASSERT_EQ(run_plain(dir / "r.json", {nvtx_target, "nested"}, {"-q"}).exit_code, 0);
    const auto answer = run_ceiling({"report", (dir / "r.json").string()});
    ASSERT_EQ(answer.exit_code, 0) << answer.err;
    EXPECT_LE(lines_of(answer.out).size(), 30u) << answer.out;
    EXPECT_NE(answer.out.find("Run:   "), std::string::npos) << answer.out;
    const auto detail = run_ceiling({"report", "--detail", (dir / "r.json").string()});
    ASSERT_EQ(detail.exit_code, 0) << detail.err;
    EXPECT_GT(lines_of(detail.out).size(), lines_of(answer.out).size()) << detail.out;
    EXPECT_NE(detail.out.find("Diagnosis"), std::string::npos) << detail.out;
    EXPECT_NE(detail.out.find("note: "), std::string::npos) << detail.out;
}

}  // namespace
}  // namespace ceiling::testing
