// Regions and "not the model": model share of wall time, top non-model regions, nesting,
// system-bound evidence and the run's diagnosis.
#include "diagnosis/regions.hpp"

#include <algorithm>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "diagnosis/json_support.hpp"

namespace ceiling {
namespace {

const Thresholds t;

RegionTiming region(const char* name, double s, bool model,
                    std::optional<std::size_t> parent = {}) {
    RegionTiming r;
    r.name = name;
    r.total_s = s;
    r.model = model;
    r.parent = parent;
    r.count = 1;
    return r;
}

// 10 s of wall time: 2 s inference, 5 s decoding images, 1.5 s resize inside it, 1 s I/O.
std::vector<RegionTiming> preprocessing_heavy() {
    return {region("inference", 2, true), region("decode_jpeg", 5, false),
            region("resize", 1.5, false, 1), region("read_files", 1, false)};
}

TEST(ModelShare, ShareAndTopNonModelRegions) {
    const auto m = model_share(preprocessing_heavy(), 10);
    ASSERT_TRUE(m);
    EXPECT_DOUBLE_EQ(m->model_s, 2);
    EXPECT_DOUBLE_EQ(m->share, 0.2);
    EXPECT_DOUBLE_EQ(m->outside_regions_s, 2);  // 10 - (2 + 5 + 1)
    EXPECT_FALSE(m->overlapping);
    ASSERT_EQ(m->top_non_model.size(), 3u);
    // decode_jpeg's own time: its 1.5 s of resize is listed under resize, not twice.
    EXPECT_EQ(m->top_non_model[0].name, "decode_jpeg");
    EXPECT_DOUBLE_EQ(m->top_non_model[0].share, 0.35);
    EXPECT_EQ(m->top_non_model[1].name, "(outside any region)");
    EXPECT_EQ(m->top_non_model[2].name, "resize");
}

double listed_share(const ModelShare& m) {
    double s = m.share;
    for (const auto& r : m.top_non_model) s += r.share;
    return s;
}

// The reported case: --model-regions 'forward|backward' and a `step` enclosing them was
// listed as 47 % "not model" with its whole time, and the shares added up to 146 %.
TEST(ModelShare, AParentIsListedWithItsOwnTimeOnly) {
    const std::vector<RegionTiming> r = {region("step", 10, false), region("forward", 3, true, 0),
                                         region("backward", 1.7, true, 0),
                                         region("optimizer", 2, false, 0)};
    const auto m = model_share(r, 10, 10);
    ASSERT_TRUE(m);
    EXPECT_DOUBLE_EQ(m->model_s, 4.7);
    ASSERT_EQ(m->top_non_model.size(), 2u);
    EXPECT_EQ(m->top_non_model[0].name, "step");
    EXPECT_NEAR(m->top_non_model[0].share, 0.33, 1e-12);  // 10 - 3 - 1.7 - 2
    EXPECT_EQ(m->top_non_model[1].name, "optimizer");
    EXPECT_NEAR(listed_share(*m), 1.0, 1e-12);
}

// Regions on two threads: measured unions and the split of non-model time add up exactly.
TEST(ModelShare, MeasuredCoverageAndSplitAddUpToTheWallTime) {
    // forward (model) 0-6 s on one thread, load 4-8 s on another: load holds 6-8 s alone.
    std::vector<RegionTiming> r = {region("forward", 6, true), region("load", 4, false)};
    r[0].non_model_s = 0;
    r[1].non_model_s = 2;
    const auto m = model_share(r, 10, 10, Coverage{.model_s = 6.0, .regions_s = 8.0});
    ASSERT_TRUE(m);
    EXPECT_FALSE(m->overlapping);
    EXPECT_DOUBLE_EQ(m->share, 0.6);
    ASSERT_EQ(m->top_non_model.size(), 2u);
    EXPECT_EQ(m->top_non_model[0].name, "load");
    EXPECT_DOUBLE_EQ(m->top_non_model[0].share, 0.2);
    EXPECT_DOUBLE_EQ(m->outside_regions_s, 2);
    EXPECT_NEAR(listed_share(*m), 1.0, 1e-12);
}

TEST(ModelShare, NestedModelRegionsAreNotCountedTwice) {
    const std::vector<RegionTiming> r = {
        region("forward", 6, true), region("attention", 3, true, 0),
        region("host_to_device", 1, false, 0), region("tokenise", 2, false)};
    const auto m = model_share(r, 10);
    ASSERT_TRUE(m);
    EXPECT_DOUBLE_EQ(m->model_s, 6);
    // A non-model region inside the model (a copy in forward) is part of the model's time.
    ASSERT_EQ(m->top_non_model.size(), 2u);
    EXPECT_EQ(m->top_non_model[0].name, "tokenise");
}

TEST(ModelShare, UnknownWithoutModelRegions) {
    EXPECT_FALSE(model_share(std::vector<RegionTiming>{region("main", 5, false)}, 10));
    EXPECT_FALSE(model_share(std::vector<RegionTiming>{}, 10));
    EXPECT_FALSE(model_share(preprocessing_heavy(), 0));
}

TEST(ModelShare, OverlappingThreadsCapTheShare) {
    const std::vector<RegionTiming> r = {region("worker0", 9, true), region("worker1", 9, true)};
    const auto m = model_share(r, 10);
    ASSERT_TRUE(m);
    EXPECT_TRUE(m->overlapping);
    EXPECT_DOUBLE_EQ(m->share, 1.0);
}

TEST(ModelShare, BadParentsThrow) {
    EXPECT_THROW(model_share(std::vector<RegionTiming>{region("a", 1, true, 5)}, 10),
                 std::invalid_argument);
    EXPECT_THROW(
        model_share(std::vector<RegionTiming>{region("a", 1, true, 1), region("b", 1, false, 0)},
                    10),
        std::invalid_argument);
}

const SystemSignal& signal(const std::vector<SystemSignal>& s, const std::string& name) {
    return *std::find_if(s.begin(), s.end(), [&](const SystemSignal& x) { return x.name == name; });
}

TEST(SystemEvidence, EachRuleFiresOnItsThresholdAndUnknownNeverFires) {
    ProcessAccounting p;
    p.wall_s = 10;
    p.cores_used = 4;
    p.user_s = 6;
    p.system_s = 4;  // utilisation 10 / 40 = 0.25 < 0.5; system share 0.4 >= 0.2
    p.voluntary_context_switches = 30000;
    p.involuntary_context_switches = 0;  // 3000/s >= 2000
    p.minor_page_faults = 50000;         // 5000/s < 10000
    p.major_page_faults = 10;            // 1/s: at the threshold
    p.device_wait_s = 1.9;               // 0.19 < 0.2
    // device copies not measured
    const auto s = system_evidence(p, t);
    ASSERT_EQ(s.size(), system_rules().size());
    EXPECT_TRUE(signal(s, "cpu_utilisation").fired);
    EXPECT_DOUBLE_EQ(*signal(s, "cpu_utilisation").value, 0.25);
    EXPECT_TRUE(signal(s, "system_time_share").fired);
    EXPECT_TRUE(signal(s, "context_switches_per_s").fired);
    EXPECT_FALSE(signal(s, "page_faults_per_s").fired);
    EXPECT_TRUE(signal(s, "major_page_faults_per_s").fired);
    EXPECT_FALSE(signal(s, "device_wait_share").fired);
    EXPECT_FALSE(signal(s, "device_copy_share").value);
    EXPECT_FALSE(signal(s, "device_copy_share").fired);
}

TEST(SystemEvidence, NothingMeasuredNothingFires) {
    ProcessAccounting p;
    p.wall_s = 10;
    for (const auto& s : system_evidence(p, t)) {
        EXPECT_FALSE(s.value) << s.name;
        EXPECT_FALSE(s.fired) << s.name;
    }
}

TEST(DiagnoseRun, SmallModelShareIsNotTheModel) {
    RunInputs in;
    in.process.wall_s = 10;
    in.regions = preprocessing_heavy();
    const Diagnosis d = diagnose_run(in, t);
    ASSERT_TRUE(d.bound);
    EXPECT_EQ(*d.bound, Bound::not_the_model);
    EXPECT_EQ(d.diagnosis, "not the model (system bound)");
    EXPECT_EQ(d.levers.front().lever, Lever::system);
    ASSERT_TRUE(d.model_share);
    EXPECT_EQ(d.model_share->top_non_model.front().name, "decode_jpeg");
}

// A short script around its model: 10 s, the model 3 s, 6 s in no region, of which `before`
// came before the first region and `after` after the last; `load` holds the last second.
Diagnosis script_run(double before, double after) {
    RunInputs in;
    in.process.wall_s = 10;
    in.regions = {region("forward", 3, true), region("load", 1, false)};
    in.coverage = {
        .model_s = 3.0, .regions_s = 4.0, .before_regions_s = before, .after_regions_s = after};
    return diagnose_run(in, t);
}

TEST(DiagnoseRun, StartUpBeforeTheFirstRegionLeadsTheMoveWhereItIsTheLargestPiece) {
    const std::string table(first_move_for(decision_row(Bound::not_the_model), Evidence{}));
    const Diagnosis startup = script_run(4.5, 0.5);  // between regions: 1 s
    ASSERT_EQ(startup.bound, Bound::not_the_model);
    ASSERT_TRUE(startup.model_share);
    EXPECT_DOUBLE_EQ(startup.model_share->before_regions_s.value_or(-1), 4.5);
    EXPECT_DOUBLE_EQ(startup.model_share->after_regions_s.value_or(-1), 0.5);
    EXPECT_EQ(startup.first_move.rfind("start-up first: 45% of the wall time", 0), 0u)
        << startup.first_move;
    EXPECT_NE(startup.first_move.find(table), std::string::npos);

    const Diagnosis end = script_run(0.5, 4.5);
    EXPECT_EQ(end.first_move.rfind("the end first: 45% of the wall time", 0), 0u) << end.first_move;
    // Between regions the most (4 s): the table's move, about that time, stands alone.
    EXPECT_EQ(script_run(1, 1).first_move, table);
    // A non-model region longer than the start-up: the same.
    RunInputs in;
    in.process.wall_s = 10;
    in.regions = {region("forward", 3, true), region("load", 4, false)};
    in.coverage = {
        .model_s = 3.0, .regions_s = 7.0, .before_regions_s = 2.5, .after_regions_s = 0.0};
    EXPECT_EQ(diagnose_run(in, t).first_move, table);
    // All of it between regions: the same.
    EXPECT_EQ(script_run(0, 0).first_move, table);
}

TEST(ModelShare, EndsAreClampedToTheTimeInNoRegion) {
    const std::vector<RegionTiming> r = {region("forward", 6, true)};
    const auto m = model_share(
        r, 10, 3,
        Coverage{
            .model_s = 6.0, .regions_s = 6.0, .before_regions_s = 5.0, .after_regions_s = 3.0});
    ASSERT_TRUE(m);
    EXPECT_DOUBLE_EQ(m->outside_regions_s, 4);
    EXPECT_DOUBLE_EQ(*m->before_regions_s, 4);
    EXPECT_DOUBLE_EQ(*m->after_regions_s, 0);
    EXPECT_FALSE(model_share(r, 10, 3, Coverage{.model_s = 6.0})->before_regions_s);
}

TEST(DiagnoseRun, ModelShareEdge) {
    for (const auto& [model_s, expected] : std::vector<std::pair<double, std::optional<Bound>>>{
             {4.99, Bound::not_the_model}, {5.0, std::nullopt}, {5.01, std::nullopt}}) {
        RunInputs in;
        in.process.wall_s = 10;
        in.regions = {region("model", model_s, true)};
        EXPECT_EQ(diagnose_run(in, t).bound, expected) << model_s;
    }
}

TEST(DiagnoseRun, ModelDominatesSoTheModelsBoundStands) {
    Diagnosis model;
    model.subject = "decoder";
    model.roofs.push_back(compare(RoofComparison{RoofKind::compute,
                                                 "fp32_fma512",
                                                 "",
                                                 "",
                                                 Precision::fp32,
                                                 Engine::vector,
                                                 4,
                                                 10.0,
                                                 100.0,
                                                 {},
                                                 Source::analytic,
                                                 {}},
                                  t));
    model.roofs.push_back(compare(RoofComparison{RoofKind::bandwidth,
                                                 "DRAM",
                                                 "DRAM",
                                                 "triad",
                                                 {},
                                                 {},
                                                 4,
                                                 85.0,
                                                 100.0,
                                                 {},
                                                 Source::analytic,
                                                 {}},
                                  t));
    RunInputs in;
    in.process.wall_s = 10;
    in.regions = {region("decoder", 9, true)};
    in.model = model;
    const Diagnosis d = diagnose_run(in, t);
    EXPECT_EQ(d.subject, "run");
    EXPECT_EQ(d.bound, Bound::bandwidth);
    EXPECT_EQ(d.verdict, Verdict::done);
}

TEST(DiagnoseRun, FootprintNearCapacityOrBudget) {
    RunInputs in;
    in.process.wall_s = 10;
    in.process.peak_rss_bytes = 7.5e9;
    in.memory_capacity_bytes = 16e9;
    EXPECT_NE(diagnose_run(in, t).bound, Bound::capacity);  // 47% of memory
    in.memory_budget_bytes = 8e9;                           // 94% of the budget
    const Diagnosis d = diagnose_run(in, t);
    EXPECT_EQ(d.bound, Bound::capacity);
    ASSERT_TRUE(d.capacity);
    EXPECT_EQ(d.capacity->against, "memory budget");
    EXPECT_DOUBLE_EQ(d.capacity->fraction, 7.5e9 / 8e9);
}

TEST(DiagnoseRun, NothingKnownIsUnknownAndSaysWhy) {
    RunInputs in;
    in.process.wall_s = 10;
    const Diagnosis d = diagnose_run(in, t);
    EXPECT_FALSE(d.bound);
    EXPECT_FALSE(d.model_share);
    EXPECT_FALSE(d.capacity);
    EXPECT_GE(d.findings.size(), 2u);
    const nlohmann::json j = d;
    EXPECT_EQ(nlohmann::json(j.get<Diagnosis>()), j);
}

TEST(Regions, InputsSerialise) {
    const nlohmann::json r = region("resize", 1.5, false, 1);
    EXPECT_EQ(r.at("parent"), 1);
    EXPECT_EQ(nlohmann::json(r.get<RegionTiming>()), r);
    ProcessAccounting p;
    p.wall_s = 2;
    p.user_s = 1;
    const nlohmann::json pj = p;
    EXPECT_TRUE(pj.at("system_s").is_null());
    EXPECT_EQ(nlohmann::json(pj.get<ProcessAccounting>()), pj);
}

}  // namespace
}  // namespace ceiling
