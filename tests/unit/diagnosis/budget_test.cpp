// Budgets: every outcome (pass, fail, at the budget, unknown), p50 and p99 judged apart,
// margins, the budget file and flag parsing.
#include "diagnosis/budget.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ceiling {
namespace {

const Thresholds t;

const BudgetCheck& check(const std::vector<BudgetCheck>& checks, const std::string& name) {
    for (const auto& c : checks)
        if (c.name == name) return c;
    throw std::runtime_error("no check " + name);
}

// Nine runs of 10 ms and one of 50 ms: p50 = 10 ms, p99 = 46.4 ms.
Summary latencies() {
    std::vector<double> x(9, 0.010);
    x.push_back(0.050);
    return summarize(x);
}

TEST(Budgets, LatencyIsJudgedAtP50AndP99) {
    Budgets b;
    set_budget(b, "latency", "12ms");
    BudgetActuals a;
    a.latency_s = latencies();
    const auto checks = judge_budgets(b, a, t);
    ASSERT_EQ(checks.size(), 2u);
    const auto& p50 = check(checks, "latency_p50_s");
    EXPECT_EQ(p50.outcome, BudgetOutcome::pass);
    EXPECT_DOUBLE_EQ(p50.budget, 0.012);
    EXPECT_DOUBLE_EQ(*p50.actual, 0.010);
    EXPECT_NEAR(*p50.margin, (0.012 - 0.010) / 0.012, 1e-12);
    // The median passes, the tail does not: judged on the distribution, not one number.
    const auto& p99 = check(checks, "latency_p99_s");
    EXPECT_EQ(p99.outcome, BudgetOutcome::fail);
    EXPECT_NEAR(*p99.actual, 0.0464, 1e-12);
    EXPECT_LT(*p99.margin, 0);
    EXPECT_NE(p99.note.find("p99 of 10 samples"), std::string::npos) << p99.note;
    EXPECT_EQ(budgets_met(checks), false);
}

TEST(Budgets, SeparateP99BudgetOverridesTheCommonOne) {
    Budgets b;
    set_budget(b, "latency", "12ms");
    set_budget(b, "latency-p99", "50ms");
    BudgetActuals a;
    a.latency_s = latencies();
    const auto checks = judge_budgets(b, a, t);
    EXPECT_EQ(check(checks, "latency_p99_s").outcome, BudgetOutcome::pass);
    EXPECT_DOUBLE_EQ(check(checks, "latency_p99_s").budget, 0.050);
    EXPECT_EQ(budgets_met(checks), true);
}

struct OutcomeCase {
    const char* name;
    double budget;
    std::optional<double> actual;
    BudgetOutcome expected;
};

TEST(Budgets, EveryOutcomeForMemory) {
    const OutcomeCase cases[] = {
        {"under", 40e6, 30e6, BudgetOutcome::pass},
        {"at", 40e6, 40e6, BudgetOutcome::pass},
        {"just over", 40e6, 40e6 + 1, BudgetOutcome::fail},
        {"over", 40e6, 80e6, BudgetOutcome::fail},
        {"not measured", 40e6, std::nullopt, BudgetOutcome::unknown},
    };
    for (const auto& c : cases) {
        Budgets b;
        b.memory_bytes = c.budget;
        BudgetActuals a;
        a.peak_memory_bytes = c.actual;
        const auto checks = judge_budgets(b, a, t);
        ASSERT_EQ(checks.size(), 1u);
        EXPECT_EQ(checks[0].outcome, c.expected) << c.name;
        EXPECT_EQ(checks[0].actual.has_value(), c.actual.has_value()) << c.name;
        if (c.actual)
            EXPECT_DOUBLE_EQ(*checks[0].margin, (c.budget - *c.actual) / c.budget) << c.name;
        else
            EXPECT_FALSE(checks[0].margin) << c.name;
    }
}

TEST(Budgets, EnergyAndPower) {
    Budgets b;
    set_budget(b, "energy_j", "5J");
    set_budget(b, "power", "30W");
    BudgetActuals a;
    a.energy_j = 6;  // power not measured
    const auto checks = judge_budgets(b, a, t);
    ASSERT_EQ(checks.size(), 2u);
    EXPECT_EQ(check(checks, "energy_j").outcome, BudgetOutcome::fail);
    EXPECT_NEAR(*check(checks, "energy_j").margin, -0.2, 1e-12);
    EXPECT_EQ(check(checks, "power_w").outcome, BudgetOutcome::unknown);
    EXPECT_EQ(check(checks, "power_w").note, "not measured");
}

TEST(Budgets, MetIsUnknownWhenSomethingWasNotMeasured) {
    std::vector<BudgetCheck> checks(2);
    checks[0].outcome = BudgetOutcome::pass;
    checks[1].outcome = BudgetOutcome::unknown;
    EXPECT_EQ(budgets_met(checks), std::nullopt);
    checks[1].outcome = BudgetOutcome::fail;
    EXPECT_EQ(budgets_met(checks), false);
    checks[1].outcome = BudgetOutcome::pass;
    EXPECT_EQ(budgets_met(checks), true);
    EXPECT_EQ(budgets_met({}), std::nullopt);
}

TEST(Budgets, UnsetBudgetsAreNotChecked) {
    BudgetActuals a;
    a.latency_s = latencies();
    a.peak_memory_bytes = 1e9;
    EXPECT_TRUE(judge_budgets(Budgets{}, a, t).empty());
    EXPECT_TRUE(Budgets{}.empty());
}

TEST(Budgets, OneRunAndUnstableRunsAreNoted) {
    Budgets b;
    b.latency_s = 1.0;
    BudgetActuals a;
    a.latency_s = summarize({0.5});
    EXPECT_NE(judge_budgets(b, a, t)[0].note.find("one run"), std::string::npos);
    a.latency_s = summarize({0.1, 0.1, 0.1, 0.2, 0.4, 0.1, 0.1, 0.1, 0.3, 0.5});
    EXPECT_NE(judge_budgets(b, a, t)[0].note.find("unstable"), std::string::npos);
}

TEST(Budgets, FileWithNumbersAndUnits) {
    const Budgets b = parse_budgets(
        R"({"latency_s": "12ms", "latency_p99_s": 0.02, "memory_bytes": "1.5GiB", "energy_j": 5})");
    EXPECT_DOUBLE_EQ(*b.latency_s, 0.012);
    EXPECT_DOUBLE_EQ(*b.latency_p99_s, 0.02);
    EXPECT_DOUBLE_EQ(*b.memory_bytes, 1.5 * 1024 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(*b.energy_j, 5);
    EXPECT_FALSE(b.power_w);
    const nlohmann::json j = b;
    EXPECT_EQ(j.size(), 4u);
    const Budgets back = j.get<Budgets>();
    EXPECT_EQ(nlohmann::json(back), j);
}

// The sentence that makes numbers a budget: kept, round-tripped, and never a budget alone.
TEST(Budgets, BecauseIsKeptAndIsNoBudgetByItself) {
    const Budgets b = parse_budgets(
        R"({"latency_s": "12ms", "because": "the frame is 33 ms and capture needs the rest"})");
    EXPECT_EQ(b.because, "the frame is 33 ms and capture needs the rest");
    EXPECT_FALSE(b.empty());
    EXPECT_EQ(nlohmann::json(nlohmann::json(b).get<Budgets>()), nlohmann::json(b));
    EXPECT_TRUE(parse_budgets(R"({"because": "reasons"})").empty());
    EXPECT_THROW(parse_budgets(R"({"because": ""})"), std::invalid_argument);
    EXPECT_THROW(parse_budgets(R"({"because": 3})"), std::invalid_argument);
}

TEST(Budgets, BadFilesAndFlags) {
    EXPECT_THROW(parse_budgets(R"({"latency": "12ms"})"), std::invalid_argument);  // unknown key
    EXPECT_THROW(parse_budgets(R"({"latency_s": "12 parsecs"})"), std::invalid_argument);
    EXPECT_THROW(parse_budgets(R"({"memory_bytes": -1})"), std::invalid_argument);
    EXPECT_THROW(parse_budgets(R"({"memory_bytes": [1]})"), std::invalid_argument);
    EXPECT_THROW(parse_budgets("not json"), std::invalid_argument);
    Budgets b;
    EXPECT_THROW(set_budget(b, "latency", "12MB"), std::invalid_argument);
    EXPECT_THROW(set_budget(b, "speed", "1"), std::invalid_argument);
    try {
        set_budget(b, "memory", "lots");
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("memory_bytes"), std::string::npos) << e.what();
    }
}

// Region budgets: latency and cost only, from the file or REGION:BUDGET=VALUE; the process's
// budgets (memory, energy, power) are refused for a region with the reason.
TEST(Budgets, RegionBudgetsFromTheFileAndFromFlags) {
    const Budgets b = parse_budgets(
        R"({"price_per_hour": 3.6, "cost_per_1000": 0.5,
            "regions": {"model": {"latency_p50_s": "4ms", "latency_p99_s": 0.004, "cost_per_1000": "0.01"}},
            "because": "the frame is 33 ms"})");
    ASSERT_EQ(b.regions.size(), 1u);
    EXPECT_EQ(b.regions[0].region, "model");
    EXPECT_DOUBLE_EQ(*b.regions[0].latency_p50_s, 0.004);
    EXPECT_DOUBLE_EQ(*b.regions[0].cost_per_1000, 0.01);
    EXPECT_DOUBLE_EQ(*b.price_per_hour, 3.6);
    EXPECT_DOUBLE_EQ(*b.cost_per_1000, 0.5);
    EXPECT_EQ(parse_budgets(nlohmann::json(b).dump()).regions[0].latency_p99_s, 0.004) << "round trip";

    Budgets f;
    set_region_budget(f, "detector/infer:latency-p99=15ms");
    set_region_budget(f, "detector/infer:latency=12ms");
    set_region_budget(f, "torch::model:cost=0.02");  // a domain's "::" stays in the region
    ASSERT_EQ(f.regions.size(), 2u);
    EXPECT_EQ(f.regions[0].region, "detector/infer");
    EXPECT_DOUBLE_EQ(*f.regions[0].latency_p99_s, 0.015);
    EXPECT_DOUBLE_EQ(*f.regions[0].latency_s, 0.012);
    EXPECT_EQ(f.regions[1].region, "torch::model");
    EXPECT_FALSE(f.empty());

    EXPECT_THROW(set_region_budget(f, "model=12ms"), std::invalid_argument);
    EXPECT_THROW(set_region_budget(f, "model:latency"), std::invalid_argument);
    EXPECT_THROW(set_region_budget(f, "model:speed=1"), std::invalid_argument);
    try {
        set_region_budget(f, "model:memory=1GB");
        ADD_FAILURE() << "a memory budget on a region was taken";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("belongs to the whole process"), std::string::npos) << e.what();
    }
    EXPECT_THROW(parse_budgets(R"({"regions": {"model": {"memory_bytes": 1}}})"), std::invalid_argument);
    EXPECT_THROW(parse_budgets(R"({"regions": ["model"]})"), std::invalid_argument);
    EXPECT_THROW(parse_budgets(R"({"regions": {"model": {"latency_s": "fast"}}})"), std::invalid_argument);
    EXPECT_THROW(parse_budgets(R"({"price_per_hour": -1})"), std::invalid_argument);
}

// A region's latency at p50 and p99 of its instances; cost from the price and the machine's
// wall time per instance; a cost without a price is unknown, saying what is missing.
TEST(Budgets, RegionLatencyAndCost) {
    RegionBudget rb{"model", 0.012, {}, {}, 0.01};
    BudgetActuals a;
    a.latency_s = latencies();        // p50 10 ms passes, p99 46 ms fails
    a.seconds_per_item = 0.005;       // 200 items per second
    const auto checks = judge_region_budget(rb, 3.6, a, t);
    ASSERT_EQ(checks.size(), 3u);
    EXPECT_EQ(check(checks, "latency_p50_s").outcome, BudgetOutcome::pass);
    EXPECT_EQ(check(checks, "latency_p99_s").outcome, BudgetOutcome::fail);
    const auto& cost = check(checks, "cost_per_1000");
    // 3.6 per hour = 0.001 per second; 1000 items x 5 ms = 5 s: 0.005.
    EXPECT_NEAR(*cost.actual, 0.005, 1e-12);
    EXPECT_EQ(cost.outcome, BudgetOutcome::pass);
    for (const auto& c : checks) EXPECT_EQ(c.region, "model");
    const auto unpriced = judge_region_budget(rb, std::nullopt, a, t);
    const auto& u = check(unpriced, "cost_per_1000");
    EXPECT_EQ(u.outcome, BudgetOutcome::unknown);
    EXPECT_FALSE(u.actual);
    EXPECT_NE(u.note.find("price per hour"), std::string::npos) << u.note;
    const nlohmann::json j = cost;
    EXPECT_EQ(j.at("region"), "model");
    EXPECT_EQ(j.get<BudgetCheck>().region, "model");
}

TEST(Budgets, ChecksSerialise) {
    Budgets b;
    b.memory_bytes = 100;
    BudgetActuals a;
    a.peak_memory_bytes = 50;
    const nlohmann::json j = judge_budgets(b, a, t)[0];
    EXPECT_EQ(j.at("outcome"), "pass");
    EXPECT_DOUBLE_EQ(j.at("margin").get<double>(), 0.5);
    EXPECT_EQ(nlohmann::json(j.get<BudgetCheck>()), j);
}

}  // namespace
}  // namespace ceiling
