// RunRecord: JSON round trip, refusal of other schema versions and malformed records,
// shell statuses, subsampling.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "diagnosis/run_record.hpp"

namespace ceiling {
namespace {

RunRecord sample() {
    RunRecord r;
    r.command = {"./train", "--epochs", "1"};
    r.created_at = "2026-01-01T00:00:00Z";
    r.rank = 2;
    r.environment = {{"OMP_NUM_THREADS", "4"}};
    r.options.repeat = 2;
    r.options.interval_s = 0.01;
    r.options.model_regions = "forward";
    Execution e;
    e.pid = 42;
    e.wall_s = 1.5;
    e.end.kind = EndKind::signaled;
    e.end.signal = 11;
    e.end.signal_name = "SIGSEGV";
    CounterValue c;
    c.name = "user_s";
    c.value = 1.2;
    c.unit = "s";
    e.counters.push_back(c);
    Series s;
    s.name = "cpu_cores";
    s.unit = "cores";
    s.t_s = {0.01, 0.02};
    s.values = {1, 2};
    e.time_series.push_back(s);
    r.executions = {e, e};
    r.end = e.end;
    r.whole.durations_s = {1.5, 1.6};
    r.whole.duration_s = summarize(r.whole.durations_s);
    RecordedRegion reg;
    reg.path = "step/forward";
    reg.name = "forward";
    reg.parent = "step";
    reg.model = true;
    reg.self_s = 0.5;
    reg.total_s_per_execution = {0.7, 0.8};
    Work w;
    w.ops = 1e9;
    reg.measurement.work = w;
    r.regions.push_back(reg);
    Budgets b;
    b.latency_s = 0.012;
    r.budgets = b;
    Diagnosis d;
    d.bound = Bound::not_the_model;
    r.diagnosis = d;
    // A check of a roof derived from 1 thread, and one from a record written before checks
    // kept their slowest look or the threads of the profile's figure.
    r.roof_checks = {
        {"DRAM", "triad", 2, 60e9, 41e9, RoofKind::bandwidth, 39e9, 1, {}},
        {"DRAM", "read", 1, 30e9, 29e9, RoofKind::bandwidth, std::nullopt, std::nullopt, {}}};
    return r;
}

TEST(RunRecord, RoundTrips) {
    const RunRecord r = sample();
    const nlohmann::json j = r;
    const RunRecord back = parse_run_record(j.dump());
    EXPECT_EQ(nlohmann::json(back), j);
    EXPECT_EQ(back.end.shell_status(), 139);
    EXPECT_EQ(back.timed_executions().size(), 2u);
    ASSERT_NE(back.region("step/forward"), nullptr);
    EXPECT_EQ(*back.diagnosis->bound, Bound::not_the_model);
    EXPECT_EQ(j["end"]["shell_status"], 139);
    ASSERT_EQ(back.roof_checks.size(), 2u);
    EXPECT_EQ(back.roof_checks[0].profile_threads, 1);
    EXPECT_TRUE(back.roof_checks[0].derived());
    EXPECT_FALSE(back.roof_checks[1].profile_threads);
    EXPECT_FALSE(back.roof_checks[1].derived());
}

TEST(RunRecord, RefusesOtherVersionsAndMalformedRecords) {
    nlohmann::json j = sample();
    j["schema_version"] = 2;
    EXPECT_THROW(parse_run_record(j.dump()), std::invalid_argument);
    j = sample();
    j.erase("executions");
    try {
        parse_run_record(j.dump());
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("executions"), std::string::npos) << e.what();
    }
    EXPECT_THROW(parse_run_record("[1, 2]"), std::invalid_argument);
    EXPECT_THROW(parse_run_record("{\"schema_version\": 1"), std::invalid_argument);
    j = sample();
    j["regions"][0]["kind"] = "bogus";
    EXPECT_THROW(parse_run_record(j.dump()), std::invalid_argument);
}

TEST(RunRecord, ShellStatus) {
    ProcessEnd e;
    e.exit_code = 3;
    EXPECT_EQ(e.shell_status(), 3);
    e.kind = EndKind::not_started;
    e.exit_code = 126;
    EXPECT_EQ(e.shell_status(), 126);
}

TEST(RunRecord, SubsampleKeepsEvenlySpacedValues) {
    std::vector<double> v(100);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
    const auto s = subsample(v, 10);
    ASSERT_EQ(s.size(), 10u);
    EXPECT_EQ(s.front(), 0);
    EXPECT_EQ(s[5], 50);
    EXPECT_EQ(subsample(v, 1000).size(), 100u);
}

// Regions and diagnoses are found by path through an index (a scan per lookup made a record
// of 8000 regions take seconds in every renderer); the index follows the vectors as they
// grow, are copied, or a path changes in place.
TEST(RunRecordLookup, FindsByPathAndFollowsTheVectorsAsTheyChange) {
    RunRecord r;
    for (int i = 0; i < 100; ++i) {
        RecordedRegion g;
        g.path = g.name = "region " + std::to_string(i);
        g.instances = i;
        r.regions.push_back(g);
        r.region_diagnoses.push_back({g.path, {}});
        r.region_diagnoses.back().diagnosis.observation = g.path;
    }
    ASSERT_NE(r.region("region 42"), nullptr);
    EXPECT_EQ(r.region("region 42")->instances, 42);
    EXPECT_EQ(r.diagnosis_of("region 7")->observation, "region 7");
    EXPECT_EQ(r.region("region 100"), nullptr);
    EXPECT_EQ(r.diagnosis_of("nowhere"), nullptr);

    RecordedRegion late;
    late.path = "region 100";
    late.instances = 100;
    r.regions.push_back(late);
    ASSERT_NE(r.region("region 100"), nullptr);
    EXPECT_EQ(r.region("region 100")->instances, 100);

    r.regions[3].path = "renamed";  // in place: the index's entry for "region 3" is stale
    EXPECT_EQ(r.region("region 3"), nullptr);
    ASSERT_NE(r.region("renamed"), nullptr);
    EXPECT_EQ(r.region("renamed")->instances, 3);

    const RunRecord copy = r;
    ASSERT_NE(copy.region("region 42"), nullptr);
    EXPECT_EQ(copy.region("region 42"), &copy.regions[42]);  // the copy's own, not r's

    // Two regions with one path, as built: the first, as a scan would find.
    RunRecord twice;
    twice.regions.resize(2);
    twice.regions[0].path = twice.regions[1].path = "same";
    EXPECT_EQ(twice.region("same"), &twice.regions[0]);
}

}  // namespace
}  // namespace ceiling
