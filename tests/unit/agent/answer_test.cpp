// What the answer stands on (judge/answer.cpp): decided from the verdicts, kept in the record
// and read back the same, so no renderer has to choose.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "agent/judge/judge_record.hpp"
#include "diagnosis/statistics.hpp"

namespace ceiling::judge {
namespace {

RecordedRegion region(const std::string& path, double seconds) {
    RecordedRegion reg;
    reg.path = reg.name = path;
    reg.total_s_per_execution = {seconds};
    reg.instances = 1;
    return reg;
}

Diagnosis judged(std::optional<Bound> bound, const std::string& move, double fraction) {
    Diagnosis d;
    d.bound = bound;
    d.diagnosis = bound ? std::string(to_string(*bound)) + " bound" : "unknown";
    d.first_move = move;
    d.observation = bound ? "" : "no work declared";
    if (fraction > 0) {
        RoofComparison c;
        c.kind = RoofKind::compute;
        c.roof = "fp32_fma512";
        c.fraction = fraction;
        d.roofs.push_back(c);
        d.levers.push_back({Lever::compiler_kernel, "fusion, layout"});
    }
    return d;
}

// A run whose own bound is unknown: a long region with unknown work, a shorter judged one.
RunRecord unknown_run() {
    RunRecord r;
    r.kind = RecordKind::run;
    r.whole.durations_s = {1.0};
    r.whole.duration_s = summarize(r.whole.durations_s);
    r.regions = {region("load", 0.6), region("compute", 0.3)};
    r.region_diagnoses = {{"load", judged(std::nullopt, "declare its work", 0)},
                          {"compute", judged(Bound::compute, "fewer operations", 0.8)}};
    r.diagnosis = judged(std::nullopt, "measure what is missing first", 0);
    return r;
}

TEST(Answer, AnUnknownRunStandsOnItsLongestJudgedRegionAndMovesByIt) {
    const RunAnswer a = decide_answer(unknown_run());
    ASSERT_TRUE(a.stand_in);
    EXPECT_EQ(a.stand_in->path, "compute");
    EXPECT_EQ(a.stand_in_kind, StandIn::longest_judged);
    EXPECT_NEAR(a.stand_in->wall_share, 0.3, 1e-9);
    ASSERT_TRUE(a.longer_unjudged);
    EXPECT_EQ(a.longer_unjudged->path, "load");
    EXPECT_EQ(a.longer_unjudged_why, "no work declared");
    EXPECT_EQ(a.first_move, "fewer operations");
    // Headroom and the next lever from the longest region compared with a roof.
    ASSERT_TRUE(a.headroom_region && a.headroom_fraction);
    EXPECT_EQ(a.headroom_region->path, "compute");
    EXPECT_EQ(a.headroom_roof, "fp32_fma512");
    EXPECT_DOUBLE_EQ(*a.headroom_fraction, 0.8);
    ASSERT_TRUE(a.next_lever);
    EXPECT_EQ(a.next_lever->lever, Lever::compiler_kernel);
    EXPECT_FALSE(a.stop) << "no budgets, no call";
}

TEST(Answer, AModelRegionStandsInAndAKnownRunKeepsItsOwnMove) {
    RunRecord r = unknown_run();
    r.model_region = "load";
    r.diagnosis = judged(Bound::not_the_model, "preprocessing", 0);
    r.diagnosis->model_share = ModelShare{};
    r.diagnosis->model_share->share = 0.25;
    const RunAnswer a = decide_answer(r);
    ASSERT_TRUE(a.stand_in);
    EXPECT_EQ(a.stand_in->path, "load");
    EXPECT_EQ(a.stand_in_kind, StandIn::model);
    EXPECT_FALSE(a.longer_unjudged);
    EXPECT_EQ(a.first_move, "preprocessing");
    EXPECT_NE(a.expected_gain.find("25%"), std::string::npos) << a.expected_gain;
}

TEST(Answer, TheStopCallFollowsTheBudgetsMargins) {
    auto call = [](std::vector<std::pair<BudgetOutcome, std::optional<double>>> checks) {
        RunRecord r = unknown_run();
        for (const auto& [outcome, margin] : checks) {
            BudgetCheck c;
            c.name = "latency_p50_s";
            c.outcome = outcome;
            c.margin = margin;
            r.budget_checks.push_back(c);
        }
        return decide_answer(r).stop;
    };
    EXPECT_EQ(call({{BudgetOutcome::pass, 0.5}}), StopCall::stop);
    EXPECT_EQ(call({{BudgetOutcome::pass, 0.5}, {BudgetOutcome::pass, 0.1}}), StopCall::thin_margin);
    EXPECT_EQ(call({{BudgetOutcome::pass, 0.5}, {BudgetOutcome::fail, -0.2}}), StopCall::missed);
    EXPECT_EQ(call({{BudgetOutcome::pass, 0.5}, {BudgetOutcome::unknown, std::nullopt}}),
              StopCall::unmeasured);
}

TEST(Answer, RoundTripsThroughJson) {
    const RunAnswer a = decide_answer(unknown_run());
    const RunAnswer b = nlohmann::json(a).get<RunAnswer>();
    EXPECT_EQ(nlohmann::json(b), nlohmann::json(a));
    EXPECT_EQ(b.stand_in->path, "compute");
    EXPECT_EQ(b.stand_in_kind, StandIn::longest_judged);
}

}  // namespace
}  // namespace ceiling::judge
