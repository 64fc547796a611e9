// The default summary (output/run_answer.hpp) on records built here: its line budget, its
// table's row cap, the verdict words, and the first move last.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "agent/judge/judge_record.hpp"
#include "agent/output/run_answer.hpp"
#include "diagnosis/statistics.hpp"

namespace ceiling::output {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
}

// A run of `regions` regions, region i taking (i + 1) ms, judged latency bound with a first
// move of several hundred characters.
RunRecord many_regions(int regions) {
    RunRecord r;
    r.kind = RecordKind::run;
    r.command = {"prog", "--flag"};
    r.end.message = "exited with status 0";
    r.whole.durations_s = {1.0};
    r.whole.duration_s = summarize(r.whole.durations_s);
    for (int i = 0; i < regions; ++i) {
        RecordedRegion reg;
        reg.path = reg.name = "region" + std::to_string(i);
        reg.total_s_per_execution = {(i + 1) * 1e-3};
        reg.instances = 1;
        reg.measurement.durations_s = reg.total_s_per_execution;
        reg.measurement.duration_s = summarize(reg.total_s_per_execution);
        r.regions.push_back(reg);
    }
    Diagnosis d;
    d.subject = "run";
    d.bound = Bound::latency;
    d.diagnosis = "latency bound";
    d.observation = "neither near a roof";
    d.first_move = std::string(400, 'x').replace(0, 20, "a long move: ") + " end of the move";
    for (std::size_t i = 50; i < d.first_move.size(); i += 37) d.first_move[i] = ' ';
    RoofComparison c;
    c.kind = RoofKind::compute;
    c.roof = "fp32_fma512";
    c.achieved_per_s = 1e10;
    c.roof_per_s = 1e11;
    c.fraction = 0.1;
    c.verdict = Verdict::good;
    d.roofs.push_back(c);
    r.diagnosis = d;
    r.answer = judge::decide_answer(r);  // as judge_record keeps it
    return r;
}

TEST(RunAnswer, AtMostThirtyLinesAndTenRowsWhateverTheRegions) {
    for (int n : {0, 3, 12, 200}) {
        std::ostringstream out;
        render_run_answer(many_regions(n), out);
        const auto lines = lines_of(out.str());
        EXPECT_LE(lines.size(), answer_max_lines) << out.str();
        int rows = 0;
        for (const auto& l : lines) rows += l.rfind("region", 0) == 0 && l.find("region ") != 0;
        EXPECT_LE(rows, static_cast<int>(answer_max_rows)) << out.str();
        if (n > 10) {
            EXPECT_NE(out.str().find("region" + std::to_string(n - 1)), std::string::npos) << out.str();
            EXPECT_EQ(out.str().find("region0 "), std::string::npos) << "the shortest is left out";
            EXPECT_NE(out.str().find(" more regions (--detail)"), std::string::npos) << out.str();
        }
        // The answer is last: the first move, wrapped, ending with its own last words.
        ASSERT_FALSE(lines.empty());
        std::string move;
        for (const auto& l : lines)
            if (l.rfind("First move: ", 0) == 0 || (!move.empty() && l.rfind("            ", 0) == 0))
                move += l.substr(12) + " ";
        EXPECT_NE(move.find("end of the move"), std::string::npos) << out.str();
        EXPECT_EQ(lines.back().rfind("            ", 0), 0u) << out.str();
        for (const auto& l : lines) EXPECT_LE(l.size(), 120u) << l;
    }
}

// Nested regions keep their leaf: cut from the right, a recursion's levels all read as
// "level 0/level 1 of a ..." (seen on 256 levels).
TEST(RunAnswer, ALongPathKeepsItsLeafAndTheNamesAboveItThatFit) {
    RunRecord r = many_regions(0);
    std::string path;
    for (int i = 0; i < 12; ++i) {
        path += (i ? "/" : "") + std::string("level ") + std::to_string(i);
        RecordedRegion reg;
        reg.path = path;
        reg.name = "level " + std::to_string(i);
        reg.total_s_per_execution = {0.5 - i * 0.01};
        reg.instances = 1;
        r.regions.push_back(reg);
    }
    std::ostringstream out;
    render_run_answer(r, out);
    EXPECT_NE(out.str().find(".../level 5/level 6/level 7/level 8/level 9 "), std::string::npos)
        << out.str();
    EXPECT_EQ(out.str().find("level 0/level 1/level 2/level 3/level 4/level 5/..."),
              std::string::npos)
        << out.str();
}

TEST(RunAnswer, BelowBothRoofsIsSaidAtTheVerdictAndBandsAreNotPraise) {
    std::ostringstream out;
    render_run_answer(many_regions(2), out);
    EXPECT_NE(out.str().find("Run:   below both roofs (latency bound)"), std::string::npos) << out.str();
    EXPECT_EQ(out.str().find("good"), std::string::npos) << out.str();
}

// A --torch run whose ops ran outside any module: no model to table, said as that (never
// "no NVTX regions ... use --torch").
TEST(RunAnswer, TorchOpsOutsideAnyModuleAreSaidToHaveNoModel) {
    RunRecord r = many_regions(0);
    RecordedRegion op;
    op.path = op.name = "torch::aten.mm [matmul]";
    op.labels[torch_role_label] = "op";
    op.total_s_per_execution = {0.5};
    op.instances = 12;
    r.regions.push_back(op);
    std::ostringstream out;
    render_run_answer(r, out);
    EXPECT_NE(out.str().find("No model: its PyTorch ops ran outside any nn.Module call"), std::string::npos)
        << out.str();
    EXPECT_EQ(out.str().find("No NVTX regions"), std::string::npos) << out.str();
    EXPECT_NE(out.str().find("ops outside the model: 12 calls"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace ceiling::output
