// `ceiling run` with budgets: latency, memory and per-region budgets, the sentence that makes
// them budgets, the exit status of a missed one, the stop line, and a record judged again
// against another budget, driving the real binary around small test programs.
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "tests/integration/run_support.hpp"

namespace ceiling::testing {
namespace {

TEST(Run, LatencyBudgetPassesAndFails) {
    TempDir dir;
    auto pass =
        ceiling_run(dir / "pass.json", {"-q", "--latency-budget", "10s", "--fail-on-budget"},
                    {run_target, "exit", "0"});
    EXPECT_EQ(pass.exit_code, 0) << pass.err;
    const RunRecord rp = read_record(dir / "pass.json");
    ASSERT_FALSE(rp.budget_checks.empty());
    for (const auto& c : rp.budget_checks) EXPECT_EQ(c.outcome, BudgetOutcome::pass) << c.name;

    auto fail =
        ceiling_run(dir / "fail.json", {"-q", "--latency-budget", "1ms", "--fail-on-budget"},
                    {run_target, "sleep", "0.05"});
    EXPECT_EQ(fail.exit_code, 3) << fail.err;
    const RunRecord rf = read_record(dir / "fail.json");
    ASSERT_FALSE(rf.budget_checks.empty());
    EXPECT_EQ(rf.budget_checks.front().outcome, BudgetOutcome::fail);

    // Without --fail-on-budget a missed budget is reported, not an exit status.
    auto report_only =
        ceiling_run(dir / "r.json", {"--latency-budget", "1ms"}, {run_target, "sleep", "0.05"});
    EXPECT_EQ(report_only.exit_code, 0);
    EXPECT_NE(report_only.err.find("FAIL"), std::string::npos) << report_only.err;
    EXPECT_NE(report_only.err.find("no 'because': a preference"), std::string::npos)
        << report_only.err;
    // With the sentence it is a budget: kept in the record and printed with the checks.
    auto because = ceiling_run(dir / "because.json",
                               {"--latency-budget", "10s", "--because", "the frame is 33 ms"},
                               {run_target, "exit", "0"});
    EXPECT_EQ(because.exit_code, 0) << because.err;
    EXPECT_NE(because.err.find("because the frame is 33 ms"), std::string::npos) << because.err;
    const RunRecord rb = read_record(dir / "because.json");
    ASSERT_TRUE(rb.budgets);
    EXPECT_EQ(rb.budgets->because, "the frame is 33 ms");
    // A sentence without a budget to explain is bad input.
    EXPECT_EQ(
        ceiling_run(dir / "x.json", {"--because", "reasons"}, {run_target, "exit", "0"}).exit_code,
        2);
    // The program's own failure wins over a missed budget.
    auto both = ceiling_run(dir / "b.json", {"-q", "--latency-budget", "1ms", "--fail-on-budget"},
                            {run_target, "exit", "5"});
    EXPECT_EQ(both.exit_code, 5);
}

TEST(Run, MemoryBudgetAndBudgetFile) {
    TempDir dir;
    std::ofstream(dir / "budget.json") << R"({"memory_bytes": "1kB"})";
    auto r = ceiling_run(dir / "r.json",
                         {"-q", "--budget", (dir / "budget.json").string(), "--fail-on-budget"},
                         {run_target, "sleep", "0.1"});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    const RunRecord rec = read_record(dir / "r.json");
    ASSERT_EQ(rec.budget_checks.size(), 1u);
    EXPECT_EQ(rec.budget_checks[0].name, "memory_bytes");
    EXPECT_EQ(rec.budget_checks[0].outcome, BudgetOutcome::fail);
    auto bad = ceiling_run(dir / "x.json", {"--memory-budget", "lots"}, {run_target, "exit", "0"});
    EXPECT_EQ(bad.exit_code, 2);
}

TEST(Run, BudgetsEndWithAStopLine) {
    CEILING_NEED_NVTX();
    TempDir dir;
    const std::string profile = std::string(CEILING_TEST_DATA) + "/profile_synthetic.json";
    const auto inside = ceiling_run(
        dir / "in.json", {"--profile", profile, "--latency-budget", "60s", "--because", "x"},
        {nvtx_target, "declared", "2"});
    ASSERT_EQ(inside.exit_code, 0) << inside.err;
    EXPECT_NE(inside.err.find("inside every budget with at least"), std::string::npos)
        << inside.err;
    EXPECT_NE(inside.err.find(": stop; spend the next lever, "), std::string::npos) << inside.err;
    EXPECT_NE(inside.err.find("the longest judged region, gemm, runs at "), std::string::npos)
        << inside.err;
    const auto missed =
        ceiling_run(dir / "out.json", {"--profile", profile, "--latency-budget", "1ms"},
                    {nvtx_target, "declared", "2"});
    EXPECT_NE(missed.err.find("a budget is missed: next lever "), std::string::npos) << missed.err;
    // A tighter stop margin than the run's margin turns "stop" into "next lever".
    const auto tight = ceiling_run(
        dir / "t.json",
        {"--profile", profile, "--latency-budget", "60s", "--threshold", "stop_margin=1"},
        {nvtx_target, "declared", "2"});
    EXPECT_NE(tight.err.find("inside every budget, but with only"), std::string::npos) << tight.err;
}

// The method's budget: the model's latency inside a frame, at p50 and p99 over every frame
// (a slow model step every 50 frames passes p50 and fails p99), its cost per 1000 frames at
// a given price, the sentence, and the stop line; in the output and in the record.
TEST(Run, PerFrameModelBudgetPassesAtP50AndFailsAtP99WithACost) {
    CEILING_NEED_NVTX();
    TempDir dir;
    const auto budget = dir / "budget.json";
    std::ofstream(budget) << R"({"because": "the camera delivers a frame every 33 ms",
        "price_per_hour": 3.6,
        "regions": {"model": {"latency_s": "4ms", "cost_per_1000": 0.01}}})";
    const auto r =
        ceiling_run(dir / "r.json", {"--budget", budget.string(), "--model-regions", "^model$"},
                    {nvtx_target, "frames", "150"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto rec = read_record(dir / "r.json");
    std::map<std::string, const BudgetCheck*> checks;
    for (const auto& c : rec.budget_checks) {
        EXPECT_EQ(c.region, "model") << c.name;
        checks[c.name] = &c;
    }
    ASSERT_EQ(checks.size(), 3u) << r.err;
    EXPECT_EQ(checks.at("latency_p50_s")->outcome, BudgetOutcome::pass) << r.err;
    EXPECT_EQ(checks.at("latency_p99_s")->outcome, BudgetOutcome::fail) << r.err;
    // Cost per 1000 frames: 3.6 per hour is 0.001 per second, times the run's wall time per
    // frame (~3 ms, and more under a loaded machine) x 1000.
    const auto& cost = *checks.at("cost_per_1000");
    ASSERT_TRUE(cost.actual) << cost.note;
    double wall = 0;
    for (const auto* e : rec.timed_executions()) wall += e->wall_s;
    EXPECT_NEAR(*cost.actual, 0.001 * wall / 150 * 1000, 1e-9);
    EXPECT_EQ(rec.budgets->because, "the camera delivers a frame every 33 ms");
    EXPECT_NE(r.err.find("because the camera delivers a frame every 33 ms"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("model: latency_p99_s: budget 4.0 ms"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("model: cost_per_1000: budget 0.01, actual "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("price 3.6 per hour"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("a budget is missed: next lever "), std::string::npos) << r.err;
    // The same record judged later against a looser budget: the p99 flips to a pass.
    const auto loose = dir / "loose.json";
    std::ofstream(loose)
        << R"({"because": "the frame is 33 ms", "regions": {"model": {"latency_s": "30ms"}}})";
    const auto rep = run_ceiling({"report", "--detail", (dir / "r.json").string(), "--budget", loose.string()});
    EXPECT_EQ(rep.exit_code, 0) << rep.err;
    EXPECT_NE(rep.out.find("model: latency_p99_s: budget 30.0 ms"), std::string::npos) << rep.out;
    EXPECT_EQ(rep.out.find("FAIL"), std::string::npos) << rep.out;
    // A region the run does not have: unknown, saying so, never a pass.
    const auto none = ceiling_run(dir / "n.json", {"--region-budget", "decode:latency=1s"},
                                  {nvtx_target, "frames", "2"});
    ASSERT_EQ(none.exit_code, 0) << none.err;
    const auto nrec = read_record(dir / "n.json");
    ASSERT_FALSE(nrec.budget_checks.empty());
    EXPECT_EQ(nrec.budget_checks[0].outcome, BudgetOutcome::unknown);
    EXPECT_NE(nrec.budget_checks[0].note.find("no region 'decode'"), std::string::npos)
        << nrec.budget_checks[0].note;
}

}  // namespace
}  // namespace ceiling::testing
