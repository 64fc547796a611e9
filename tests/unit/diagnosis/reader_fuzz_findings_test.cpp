// Findings of the run_record, machine_profile, budget and thresholds fuzz targets
// (tests/fuzz/), each reduced to what made it fail. Each reader documents one refusal for bad
// input, std::invalid_argument, which the commands turn into a one-line usage error (exit 2)
// naming the file; anything else escaping the reader is a finding.
#include <gtest/gtest.h>

#include <string>

#include "diagnosis/budget.hpp"
#include "diagnosis/machine_profile.hpp"
#include "diagnosis/run_record.hpp"
#include "diagnosis/thresholds.hpp"

namespace ceiling {
namespace {

// A number beyond double's range is valid JSON syntax; nlohmann refuses it while parsing with
// out_of_range (406), not parse_error, and the readers caught only parse_error.
// budget-crash-421adf00 ("8.8e888"), thresholds-crash-f9e89fc1, machine_profile-crash-1d367f4d
// ("3e2768" inside a profile), run_record-crash-02ae5428 ("8.8095664978e70243" inside a record).
TEST(ReaderFuzzFindings, NumbersBeyondDoubleAreRefusedAsBadInput) {
    const std::string huge = "8.8e888";
    EXPECT_THROW(parse_budgets(huge), std::invalid_argument);
    EXPECT_THROW(parse_budgets(R"({"latency_s": )" + huge + "}"), std::invalid_argument);
    EXPECT_THROW(parse_thresholds(R"({"near_roof": 555555555555555e55555555555555555555555, "done": 0.9})"),
                 std::invalid_argument);
    EXPECT_THROW(parse_machine_profile(R"({"schema_version": 1, "duration_s": 3e2768})"),
                 std::invalid_argument);
    EXPECT_THROW(parse_run_record(R"({"schema_version": 1, "kind": "run", "whole": 8.8095664978e70243})"),
                 std::invalid_argument);
}

}  // namespace
}  // namespace ceiling
