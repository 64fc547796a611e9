// `ceiling diff`: records written by `run` (regions slower by a known factor) and bad input.
#include <gtest/gtest.h>

#include <fstream>

#include "agent/store/run_store.hpp"
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

// The CI gate: a region twice as slow fails --fail-on-regression with exit status 4 naming it;
// a threshold above the change passes; comparing a record with itself passes; a bad
// threshold is a usage error.
TEST(Diff, FailOnRegressionGatesBeyondTheNoiseAndTheThreshold) {
    CEILING_NEED_NVTX();
    TempDir dir;
    const auto before = (dir / "before.json").string(), after = (dir / "after.json").string();
    ASSERT_EQ(ceiling_run(before, {"-q", "--repeat", "3"}, {nvtx_target, "preprocess", "2"}).exit_code, 0);
    ASSERT_EQ(ceiling_run(after, {"-q", "--repeat", "3"}, {nvtx_target, "preprocess", "4"}).exit_code, 0);
    auto r = run_ceiling({"diff", before, after, "--fail-on-regression"});
    EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
    EXPECT_NE(r.err.find("regression beyond the noise: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("preprocess"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("SLOWER"), std::string::npos) << "the table is still printed";
    // About 2x: a 1000 % threshold lets it through, 20 % does not. (300 % failed once in
    // seven full runs on a 2-vCPU VM: the two records, made while other tests ran beside
    // them, were 4x apart.)
    EXPECT_EQ(run_ceiling({"diff", before, after, "--fail-on-regression", "1000%"}).exit_code, 0);
    EXPECT_EQ(run_ceiling({"diff", before, after, "--fail-on-regression=0.2"}).exit_code, 4);
    // Faster is no regression; neither is the same record. (The reversed diff may still
    // name `forward`, the same work in both, where other tests beside the two runs moved it
    // beyond the noise: seen once under ASan; preprocess, the region that changed, never.)
    r = run_ceiling({"diff", after, before, "--fail-on-regression"});
    if (r.exit_code == 4)
        EXPECT_EQ(r.err.find("preprocess"), std::string::npos) << r.err;
    else
        EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(run_ceiling({"diff", before, before, "--fail-on-regression"}).exit_code, 0);
    // Without the flag, diff reports and exits 0 as before.
    EXPECT_EQ(run_ceiling({"diff", before, after}).exit_code, 0);
    for (const std::string bad : {"-5%", "fast", "5%%"}) {
        r = run_ceiling({"diff", before, after, "--fail-on-regression=" + bad});
        EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
        EXPECT_NE(r.err.find("not a threshold"), std::string::npos) << r.err;
    }
}

// Thresholds given to diff judge both records with them: the bound of a region can flip.
// The records are written here, so the region's fractions are fixed: 10 GB/s against a
// 15 GB/s DRAM roof (67 %), 10 Gop/s against a 50 Gop/s compute roof (20 %).
TEST(Diff, ThresholdsJudgeBothRecords) {
    TempDir dir;
    RunRecord r;
    r.command = {"prog"};
    MachineProfile p;
    p.host.hostname = "test";
    ComputeRoof c;
    c.name = "fp32_fma256";
    c.threads = 1;
    c.ops_per_s = summarize({5e10, 5e10, 5e10});
    p.compute_roofs.push_back(c);
    BandwidthRoof b;
    b.level = "DRAM";
    b.kernel = "read";
    b.threads = 1;
    b.bytes_per_s = summarize({1.5e10, 1.5e10, 1.5e10});
    p.bandwidth_roofs.push_back(b);
    r.machine_profile = p;
    RecordedRegion reg;
    reg.path = reg.name = "gemm";
    reg.instances = 3;
    reg.total_s_per_execution = {0.3};
    Work w;
    w.ops = 1e9;
    w.compulsory_bytes = 1e9;
    w.working_set_bytes = 1e10;  // DRAM-sized
    reg.measurement.name = "gemm";
    reg.measurement.work = w;
    reg.measurement.durations_s = {0.1, 0.1, 0.1};
    reg.measurement.duration_s = summarize(reg.measurement.durations_s);
    r.regions.push_back(reg);
    r.whole.durations_s = {0.3};
    r.whole.duration_s = summarize(r.whole.durations_s);
    const auto a = (dir / "a.json").string(), bb = (dir / "b.json").string();
    store::save_run_record(r, a);
    store::save_run_record(r, bb);
    auto bound_of = [](const std::string& out, const std::string& name) {
        const auto j = nlohmann::json::parse(out);
        for (const auto& row : j.at("rows"))
            if (row.at("name") == name) return row.at("bound_after").dump();
        return std::string("absent");
    };
    const auto plain = run_ceiling({"diff", "--json", a, bb, "--threshold", "far=0.1"});
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    EXPECT_EQ(bound_of(plain.out, "gemm"), "\"bandwidth\"") << plain.out;
    // near_roof 0.98: 67 % of the DRAM roof is no longer near it.
    const auto strict = run_ceiling({"diff", "--json", a, bb, "--threshold", "near_roof=0.98",
                                     "--threshold", "done=0.99"});
    ASSERT_EQ(strict.exit_code, 0) << strict.err;
    EXPECT_NE(bound_of(strict.out, "gemm"), "\"bandwidth\"") << strict.out;
    EXPECT_EQ(run_ceiling({"diff", a, bb, "--threshold", "far=2"}).exit_code, 2) << "a bad threshold is exit 2";
}

TEST(Diff, OneRunEachSaysTheNoiseIsUnknown) {
    TempDir dir;
    ASSERT_EQ(ceiling_run(dir / "a.json", {"-q"}, {run_target, "exit", "0"}).exit_code, 0);
    ASSERT_EQ(ceiling_run(dir / "b.json", {"-q"}, {run_target, "exit", "0"}).exit_code, 0);
    const auto r = run_ceiling({"diff", (dir / "a.json").string(), (dir / "b.json").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("noise unknown"), std::string::npos) << r.out;
}

// Budgets set after the measurement: report and diff judge saved records against a budget
// file given later, and diff says which budgets flipped between the two.
TEST(Diff, ABudgetGivenLaterJudgesSavedRecords) {
    TempDir dir;
    ASSERT_EQ(ceiling_run(dir / "fast.json", {"-q"}, {run_target, "sleep", "0.01"}).exit_code, 0);
    ASSERT_EQ(ceiling_run(dir / "slow.json", {"-q"}, {run_target, "sleep", "0.3"}).exit_code, 0);
    std::ofstream(dir / "budget.json") << R"({"latency_s": "150ms", "because": "the frame is 200 ms"})";
    const auto report = run_ceiling({"report", "--detail", "--budget", (dir / "budget.json").string(),
                                     (dir / "fast.json").string()});
    ASSERT_EQ(report.exit_code, 0) << report.err;
    EXPECT_NE(report.out.find("because the frame is 200 ms"), std::string::npos) << report.out;
    EXPECT_NE(report.out.find("latency_p50_s: budget 150.0 ms"), std::string::npos) << report.out;
    const auto diff = run_ceiling({"diff", "--budget", (dir / "budget.json").string(),
                                   (dir / "fast.json").string(), (dir / "slow.json").string()});
    ASSERT_EQ(diff.exit_code, 0) << diff.err;
    EXPECT_NE(diff.out.find("latency_p50_s: passed -> MISSED"), std::string::npos) << diff.out;
    // The records themselves are not changed by being judged again.
    EXPECT_FALSE(read_record(dir / "fast.json").budgets);
    EXPECT_EQ(run_ceiling({"report", "--budget", (dir / "missing.json").string(),
                           (dir / "fast.json").string()}).exit_code, 2);
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
