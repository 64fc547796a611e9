// `ceiling bound` end to end against fixture profiles passed with --profile: the LLM decode
// ceiling is the DRAM bandwidth of that profile over the weight bytes, the floor of given
// work follows its roofs, and bad input ends in one line and exit status 2.

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "diagnosis/format.hpp"
#include "diagnosis/machine_profile.hpp"
#include "tests/integration/process.hpp"

namespace ceiling {
namespace {

using testing::run_ceiling;
using testing::TempDir;

const std::string synthetic = std::string(CEILING_TEST_DATA) + "/profile_synthetic.json";
// Recorded on a 2-CPU VM with `ceiling machine --quick`: real, noisy numbers.
const std::string recorded = std::string(CEILING_TEST_DATA) + "/profile_vm_quick.json";

MachineProfile load(const std::string& path) { return parse_machine_profile(testing::slurp(path)); }

// The DRAM roof `bound` should use at the profile's default (all-core) thread count: the
// best DRAM plateau of any kernel measured with at most that many threads.
double dram_bytes_per_s(const MachineProfile& p) {
    double best = 0;
    for (const auto& r : p.bandwidth_roofs)
        if (r.level == "DRAM" && r.threads <= p.host.threads_used)
            best = std::max(best, r.bytes_per_s.median);
    return best;
}

nlohmann::json run_json(std::vector<std::string> args) {
    args.push_back("--json");
    const auto r = run_ceiling(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    return nlohmann::json::parse(r.out);
}

void expect_one_line_usage_error(const std::vector<std::string>& args,
                                 const std::string& mentions) {
    const auto r = run_ceiling(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << joined << "\n" << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1)
        << joined << "\nnot one line: " << r.err;
    EXPECT_NE(r.err.find(mentions), std::string::npos) << joined << "\n" << r.err;
}

class BoundLlm : public ::testing::TestWithParam<std::string> {};

TEST_P(BoundLlm, DecodeCeilingIsDramBandwidthOverWeightBytesAndFourBitsIsFourTimes) {
    const std::string profile = GetParam();
    const double dram = dram_bytes_per_s(load(profile));
    ASSERT_GT(dram, 0);

    const auto b16 = run_json({"bound", "llm", "--params", "7e9", "--weight-bits", "16", "--batch",
                               "1", "--profile", profile});
    EXPECT_EQ(b16.at("profile").at("path"), profile);
    const auto& d16 = b16.at("decode");
    EXPECT_EQ(d16.at("level"), "DRAM");
    EXPECT_DOUBLE_EQ(d16.at("bandwidth_bytes_per_s").get<double>(), dram);
    EXPECT_DOUBLE_EQ(d16.at("bytes_per_step").get<double>(), 14e9);
    ASSERT_EQ(d16.at("bound"), "bandwidth");
    const double tokens16 = d16.at("tokens_per_s").get<double>();
    EXPECT_NEAR(tokens16, dram / 14e9, 1e-9 * tokens16);

    const auto b4 =
        run_json({"bound", "llm", "--params", "7e9", "--weight-bits", "4", "--profile", profile});
    const auto& d4 = b4.at("decode");
    ASSERT_EQ(d4.at("bound"), "bandwidth");
    EXPECT_NEAR(d4.at("tokens_per_s").get<double>() / tokens16, 4.0, 1e-9);

    // The table prints the same ceiling, rounded to three significant digits.
    const auto text = run_ceiling(
        {"bound", "llm", "--params", "7e9", "--weight-bits", "16", "--profile", profile});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    const std::string shown = si(dram / 14e9, "tokens/s");
    EXPECT_NE(text.out.find("Decode      " + shown + " ceiling, bandwidth bound"),
              std::string::npos)
        << "expected " << shown << " in\n"
        << text.out;
}

INSTANTIATE_TEST_SUITE_P(BoundProfiles, BoundLlm, ::testing::Values(synthetic, recorded),
                         [](const auto& param_info) {
                             return param_info.index == 0 ? "synthetic" : "recorded_vm";
                         });

TEST(BoundLlmOptions, SharedOptionsGoBeforeOrAfterTheSubcommand) {
    const auto after =
        run_json({"bound", "llm", "--params", "7B", "--profile", synthetic, "--threads", "1"});
    const auto before =
        run_json({"bound", "--profile", synthetic, "--threads", "1", "llm", "--params", "7B"});
    EXPECT_EQ(after.at("decode"), before.at("decode"));
    EXPECT_EQ(after.at("threads"), 1);
    // One thread: the 1-thread DRAM roof of the synthetic profile (30 GB/s).
    EXPECT_DOUBLE_EQ(after.at("decode").at("bandwidth_bytes_per_s").get<double>(), 30e9);
}

TEST(BoundLlmOptions, KvCacheShapeAndCapacity) {
    const auto j = run_json({"bound", "llm", "--params", "7e9", "--context", "4096", "--layers",
                             "32", "--kv-heads", "8", "--head-dim", "128", "--profile", synthetic});
    EXPECT_DOUBLE_EQ(j.at("kv_bytes_per_token").get<double>(), 131072);
    EXPECT_DOUBLE_EQ(j.at("decode").at("bytes_per_step").get<double>(), 14e9 + 4096.0 * 131072);
    EXPECT_EQ(j.at("footprint").at("fits"), true);
    const auto big = run_json({"bound", "llm", "--params", "70e9", "--profile", synthetic});
    EXPECT_EQ(big.at("footprint").at("fits"), false);
    EXPECT_EQ(big.at("footprint").at("capacity_bound"), true);
}

TEST(BoundWork, ComputeBoundWorkFloorIsItsComputeTime) {
    const auto j =
        run_json({"bound", "--flops", "2.1e9", "--bytes", "4.2e8", "--profile", synthetic});
    EXPECT_EQ(j.at("bound"), "compute");
    EXPECT_DOUBLE_EQ(j.at("floor_s").get<double>(), 2.1e9 / 143.7e9);
    EXPECT_DOUBLE_EQ(j.at("memory_floor_s").get<double>(), 4.2e8 / 125.1e9);
    EXPECT_EQ(j.at("level"), "DRAM");
    EXPECT_EQ(j.at("levels").size(), 4u);

    const auto text =
        run_ceiling({"bound", "--flops", "2.1e9", "--bytes", "420MB", "--profile", synthetic});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("compute bound"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("First move  fewer or cheaper operations"), std::string::npos)
        << text.out;
}

TEST(BoundWork, SaxpyIsBandwidthBound) {
    const auto j =
        run_json({"bound", "--flops", "2e8", "--bytes", "1.2e9", "--profile", synthetic});
    EXPECT_EQ(j.at("bound"), "bandwidth");
    EXPECT_NEAR(j.at("attainable_ops_per_s").get<double>() / 1e9, 20.9, 0.05);
}

TEST(BoundWork, MatrixEngineUsesTheMatrixRoof) {
    const auto j = run_json({"bound", "--flops", "1e12", "--bytes", "1e8", "--precision", "bf16",
                             "--engine", "matrix", "--profile", synthetic});
    EXPECT_EQ(j.at("compute").at("name"), "bf16_amx");
    EXPECT_DOUBLE_EQ(j.at("compute_floor_s").get<double>(), 1.0);
}

TEST(BoundErrors, BadInputIsOneLineAndExitTwo) {
    TempDir dir;
    const auto bad_thresholds = dir / "thresholds.json";
    { std::ofstream(bad_thresholds) << R"({"near_roof": 0.8, "done": 0.7})"; }
    const std::string p = synthetic;
    expect_one_line_usage_error({"bound", "--flops", "-1", "--bytes", "1e9", "--profile", p},
                                "--flops");
    expect_one_line_usage_error({"bound", "--flops", "lots", "--bytes", "1e9", "--profile", p},
                                "--flops");
    expect_one_line_usage_error({"bound", "--flops", "1e9", "--bytes", "-5", "--profile", p},
                                "--bytes");
    expect_one_line_usage_error({"bound", "--flops", "1e9", "--profile", p}, "--bytes");
    expect_one_line_usage_error(
        {"bound", "--flops", "1e9", "--bytes", "1e9", "--precision", "fp8", "--profile", p},
        "unknown precision 'fp8'");
    expect_one_line_usage_error(
        {"bound", "--flops", "1e9", "--bytes", "1e9", "--engine", "warp", "--profile", p},
        "unknown engine");
    expect_one_line_usage_error(
        {"bound", "--flops", "1e9", "--bytes", "1e9", "--precision", "tf32", "--profile", p},
        "no tf32 vector compute roof");
    expect_one_line_usage_error({"bound", "--flops", "1e9", "--bytes", "1e9", "--threshold",
                                 "near_roof=0.9", "--profile", p},
                                "out of order");
    expect_one_line_usage_error({"bound", "--flops", "1e9", "--bytes", "1e9", "--thresholds",
                                 bad_thresholds.string(), "--profile", p},
                                "out of order");
    expect_one_line_usage_error(
        {"bound", "--flops", "1e9", "--bytes", "1e9", "--threads", "0", "--profile", p},
        "--threads");
    expect_one_line_usage_error({"bound", "llm", "--params", "-7e9", "--profile", p}, "--params");
    expect_one_line_usage_error(
        {"bound", "llm", "--params", "7e9", "--weight-bits", "four", "--profile", p},
        "--weight-bits");
    expect_one_line_usage_error(
        {"bound", "llm", "--params", "7e9", "--context", "4096", "--profile", p}, "--layers");
    expect_one_line_usage_error({"bound", "llm", "--profile", p}, "--params");
    expect_one_line_usage_error(
        {"bound", "--flops", "1", "--bytes", "1", "--profile", (dir / "none.json").string()},
        "none.json");
}

}  // namespace
}  // namespace ceiling
