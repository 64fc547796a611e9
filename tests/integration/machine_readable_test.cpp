// Machine-readable output of every command that judges (issue: reports tools can consume):
// `--json` summaries with units in their field names and null for what was not measured,
// and `--csv` region tables, checked field by field against the record they summarise.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "agent/store/run_store.hpp"
#include "tests/integration/run_support.hpp"

namespace ceiling::testing {
namespace {

const std::string quick_profile = std::string(CEILING_TEST_DATA) + "/profile_vm_quick.json";

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

// The fields every summary has, of the types a consumer relies on.
void expect_summary_shape(const nlohmann::json& j, const std::string& kind) {
    EXPECT_EQ(j.at("schema_version"), 1);
    EXPECT_EQ(j.at("kind"), kind);
    EXPECT_TRUE(j.at("command").is_array());
    EXPECT_TRUE(j.at("regions").is_array());
    EXPECT_TRUE(j.at("notes").is_array());
    EXPECT_TRUE(j.at("roof_checks").is_array());
    for (const auto& reg : j.at("regions")) {
        EXPECT_TRUE(reg.at("path").is_string());
        EXPECT_TRUE(reg.at("instances").is_number_unsigned());
        EXPECT_TRUE(reg.contains("time_s_per_execution"));
        EXPECT_TRUE(reg.contains("busy_cores"));
        EXPECT_TRUE(reg.contains("concurrency"));  // instances open at once; null for kernels
        const auto& d = reg.at("diagnosis");
        if (d.is_null()) continue;
        EXPECT_TRUE(d.at("verdict").is_string());
        EXPECT_TRUE(d.at("bound").is_null() || d.at("bound").is_string());
        EXPECT_TRUE(d.at("signals").is_array());  // the system evidence that fired, by name
        for (const auto& roof : d.at("roofs")) {
            // Units in the names: achieved_ops_per_s / roof_bytes_per_s, never a bare number.
            bool unit = false;
            for (const auto& [k, v] : roof.items()) unit = unit || k.find("_per_s") != std::string::npos;
            EXPECT_TRUE(unit) << roof.dump();
        }
    }
}

TEST(MachineReadable, RunJsonOnStderrAndCsvMatchTheRecord) {
    CEILING_NEED_NVTX();
    TempDir dir;
    const auto r = ceiling_run(dir / "r.json", {"--json", "--csv", (dir / "r.csv").string(),
                                                "--region-budget", "model:latency=1s", "--model-regions", "^model$"},
                               {nvtx_target, "frames", "20"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.err);  // nothing but the JSON on stderr
    expect_summary_shape(j, "run");
    EXPECT_EQ(j.at("record"), (dir / "r.json").string());
    EXPECT_EQ(j.at("exit_status"), 0);
    EXPECT_EQ(j.at("executions"), 1);
    EXPECT_GT(j.at("wall_s").at("median").get<double>(), 0);
    const auto rec = read_record(dir / "r.json");
    ASSERT_EQ(j.at("regions").size(), rec.regions.size());
    for (std::size_t i = 0; i < rec.regions.size(); ++i) {
        EXPECT_EQ(j["regions"][i]["path"], rec.regions[i].path);
        EXPECT_EQ(j["regions"][i]["instances"], rec.regions[i].instances);
    }
    ASSERT_EQ(j.at("budgets").at("checks").size(), 2u);
    EXPECT_EQ(j["budgets"]["checks"][0]["region"], "model");
    EXPECT_TRUE(j["budgets"]["because"].is_null()) << "no sentence: null, not an empty string";
    // The run's fired system evidence by name, each with its value and threshold.
    ASSERT_TRUE(j.at("diagnosis").at("signals").is_array());
    ASSERT_TRUE(rec.diagnosis);
    std::size_t fired = 0;
    for (const auto& sig : rec.diagnosis->system) fired += sig.fired ? 1 : 0;
    EXPECT_EQ(j["diagnosis"]["signals"].size(), fired);
    for (const auto& sig : j["diagnosis"]["signals"]) {
        EXPECT_TRUE(sig.at("name").is_string());
        EXPECT_TRUE(sig.at("threshold").is_number());
    }
    // Without a machine profile nothing is judged against a roof: nulls, never zeros.
    EXPECT_TRUE(j["regions"][0]["diagnosis"].is_null() || j["regions"][0]["diagnosis"]["bound"].is_null());

    const auto csv = lines_of(slurp(dir / "r.csv"));
    ASSERT_EQ(csv.size(), rec.regions.size() + 1);
    EXPECT_EQ(csv[0].rfind("path,kind,model,instances,time_s_per_execution,p50_s,p99_s,", 0), 0u) << csv[0];
    EXPECT_NE(csv[0].find(",busy_cores,descendant_busy_cores,other_busy_cores,bound,"),
              std::string::npos)
        << csv[0];
    EXPECT_TRUE(j["regions"][0].contains("other_busy_cores")) << j["regions"][0].dump();
    EXPECT_EQ(csv[1].rfind("frame,range,false,20,", 0), 0u) << csv[1];
    EXPECT_EQ(csv[2].rfind("frame/model,range,true,20,", 0), 0u) << csv[2];
}

// The CSV carries the work and rates the verdicts came from: ops and bytes per instance, the
// achieved rates, the intensity (and a torch op's class), beside the verdict.
TEST(MachineReadable, CsvCarriesWorkRatesAndIntensity) {
    CEILING_NEED_NVTX();
    TempDir dir;
    const auto r = ceiling_run(dir / "r.json",
                               {"-q", "--profile", std::string(CEILING_TEST_DATA) + "/profile_synthetic.json",
                                "--csv", (dir / "r.csv").string()},
                               {nvtx_target, "declared", "2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto csv = lines_of(slurp(dir / "r.csv"));
    ASSERT_GE(csv.size(), 2u);
    EXPECT_NE(csv[0].find(",memory_fraction,ops_per_instance,bytes_per_instance,ops_per_s,bytes_per_s,"
                          "intensity_ops_per_byte,op_class"),
              std::string::npos)
        << csv[0];
    const RunRecord rec = read_record(dir / "r.json");
    const RecordedRegion* gemm = rec.region("gemm");
    ASSERT_TRUE(gemm && gemm->measurement.work);
    for (const auto& line : csv) {
        if (line.rfind("gemm,", 0) != 0) continue;
        std::vector<std::string> cells;
        std::stringstream in(line);
        for (std::string c; std::getline(in, c, ',');) cells.push_back(c);
        ASSERT_GE(cells.size(), 21u) << line;
        EXPECT_DOUBLE_EQ(std::stod(cells[16]), gemm->measurement.work->ops) << line;
        EXPECT_DOUBLE_EQ(std::stod(cells[17]), gemm->measurement.work->compulsory_bytes) << line;
        EXPECT_GT(std::stod(cells[18]), 0) << line;  // achieved op/s
        EXPECT_NEAR(std::stod(cells[20]), gemm->measurement.work->ops / gemm->measurement.work->compulsory_bytes,
                    1e-6 * std::stod(cells[20]))
            << line;
        return;
    }
    ADD_FAILURE() << "no gemm row:\n" << slurp(dir / "r.csv");
}

// run --json FILE writes the JSON summary there (the program's stderr stays its own, the text
// beside it); a name that is not a .json one is refused before anything runs, so a program
// named after --json without -- is never overwritten.
TEST(MachineReadable, RunJsonToAFile) {
    TempDir dir;
    const auto r = run_ceiling({"run", "--json", (dir / "s.json").string(), "--output",
                                (dir / "r.json").string(), "--", run_target, "exit", "0"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = read_json(dir / "s.json");
    EXPECT_EQ(j.at("schema_version"), 1);
    EXPECT_EQ(j.at("exit_status"), 0);
    EXPECT_EQ(j.at("record"), (dir / "r.json").string());
    EXPECT_NE(r.err.find("Run:   "), std::string::npos) << "the text still on stderr:\n" << r.err;
    EXPECT_EQ(r.err.find("\"schema_version\""), std::string::npos) << r.err;
    const auto bad = run_ceiling({"run", "--json", run_target, "exit", "0"});
    EXPECT_EQ(bad.exit_code, 2) << bad.err;
    EXPECT_NE(bad.err.find("--json FILE takes a file name ending in .json"), std::string::npos) << bad.err;
    // --json alone: on stderr, as before.
    const auto plain = run_ceiling({"run", "--json", "--output", (dir / "p.json").string(), "--",
                                    run_target, "exit", "0"});
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    EXPECT_NE(plain.err.find("\"schema_version\""), std::string::npos) << plain.err;
}

TEST(MachineReadable, ReportAndDiffJson) {
    TempDir dir;
    ASSERT_EQ(ceiling_run(dir / "a.json", {"-q", "-r", "2"}, {run_target, "exit", "0"}).exit_code, 0);
    ASSERT_EQ(ceiling_run(dir / "b.json", {"-q", "-r", "2"}, {run_target, "exit", "0"}).exit_code, 0);
    auto r = run_ceiling({"report", "--json", (dir / "a.json").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto one = nlohmann::json::parse(r.out);
    expect_summary_shape(one, "run");
    EXPECT_EQ(one.at("executions"), 2);
    EXPECT_EQ(one.at("wall_s").at("count"), 2);
    // Several records: an array, one summary each, in the order given.
    r = run_ceiling({"report", "--json", (dir / "a.json").string(), (dir / "b.json").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto two = nlohmann::json::parse(r.out);
    ASSERT_TRUE(two.is_array());
    ASSERT_EQ(two.size(), 2u);
    EXPECT_EQ(two[1].at("record"), (dir / "b.json").string());
    // --csv names one record.
    r = run_ceiling({"report", "--csv", (dir / "x.csv").string(), (dir / "a.json").string(),
                     (dir / "b.json").string()});
    EXPECT_EQ(r.exit_code, 2) << r.err;

    r = run_ceiling({"diff", "--json", (dir / "a.json").string(), (dir / "b.json").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto d = nlohmann::json::parse(r.out);
    EXPECT_EQ(d.at("schema_version"), 1);
    ASSERT_FALSE(d.at("rows").empty());
    const auto& whole = d["rows"][0];
    EXPECT_EQ(whole.at("name"), "whole run");
    EXPECT_TRUE(whole.at("ratio").is_number());
    EXPECT_TRUE(whole.at("noise").is_number());
    EXPECT_EQ(whole.at("before_samples"), 2);
    const std::string change = whole.at("change");
    EXPECT_TRUE(change == "faster" || change == "slower" || change == "within_noise") << change;
}

TEST(MachineReadable, SuiteJsonAndCsv) {
    TempDir dir;
    const auto r = run_ceiling({"-q", "suite", "--quick", "--kernels", "nms", "--variants", "optimized",
                                "--threads", "1", "--profile", quick_profile, "-o", (dir / "s.json").string(),
                                "--json", "--csv", (dir / "s.csv").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);  // nothing but the JSON on stdout
    expect_summary_shape(j, "suite");
    ASSERT_FALSE(j.at("regions").empty());
    for (const auto& reg : j.at("regions")) {
        EXPECT_EQ(reg.at("kind"), "kernel");
        ASSERT_FALSE(reg.at("diagnosis").is_null()) << "every kernel is judged: " << reg.dump();
        EXPECT_FALSE(reg.at("diagnosis").at("roofs").empty());
        EXPECT_EQ(reg.at("labels").at("variant"), "optimized");
    }
    const auto csv = lines_of(slurp(dir / "s.csv"));
    EXPECT_EQ(csv.size(), j.at("regions").size() + 1);
}

}  // namespace
}  // namespace ceiling::testing
