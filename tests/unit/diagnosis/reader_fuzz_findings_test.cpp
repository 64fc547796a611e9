// Findings of the run_record, machine_profile, budget and thresholds fuzz targets
// (tests/fuzz/), each reduced to what made it fail. Each reader documents one refusal for bad
// input, std::invalid_argument, which the commands turn into a one-line usage error (exit 2)
// naming the file; anything else escaping the reader is a finding.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

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

// nlohmann converts a float to an integer type with a bare cast, undefined beyond the type's
// range (UBSan: "outside the range of representable values"; on x86 INT_MIN came out).
// run_record-crash-97a9afe7: "pid": 46611111111111111111110, too large for any integer type,
// is parsed as a float and was cast to int. Integer fields are checked against their type's
// range before anything is converted.
TEST(ReaderFuzzFindings, IntegerFieldsBeyondTheirTypeAreRefused) {
    RunRecord r;
    r.executions.emplace_back();
    nlohmann::json j = r;
    j["executions"][0]["pid"] = 4.6611111111111111e22;
    EXPECT_THROW(parse_run_record(j.dump()), std::invalid_argument);
    j["executions"][0]["pid"] = 4242;
    EXPECT_NO_THROW(parse_run_record(j.dump()));
    j["executions"][0]["index"] = 3e9;  // beyond int, within int64
    EXPECT_THROW(parse_run_record(j.dump()), std::invalid_argument);

    const MachineProfile p;
    for (const auto& [key, value] : {std::pair{"threads_used", 1e30}, std::pair{"memory_bytes", 1e20}}) {
        nlohmann::json pj = p;
        pj["host"][key] = value;
        EXPECT_THROW(parse_machine_profile(pj.dump()), std::invalid_argument) << key;
    }
}

// Found by reading the domain walk rather than by the fuzzer (its inputs stay near the seeds'
// size, ~15 KB): 20 000 nested brackets (40 KB) overflowed the stack in its recursion, and
// `ceiling report FILE` ended with SIGSEGV.
TEST(ReaderFuzzFindings, DeepNestingIsRefusedNotRecursedInto) {
    const std::string deep = std::string(20000, '[') + std::string(20000, ']');
    EXPECT_THROW(parse_run_record(deep), std::invalid_argument);
    EXPECT_THROW(parse_machine_profile(deep), std::invalid_argument);
    // Deep nesting inside a valid record, spliced in as text: building it as a json value
    // and dumping that would recurse 20 000 deep in the test itself.
    std::string text = nlohmann::json(RunRecord{}).dump();
    const auto notes = text.find("\"notes\":[]");
    ASSERT_NE(notes, std::string::npos);
    text.replace(notes, 10, "\"notes\":" + deep);
    EXPECT_THROW(parse_run_record(text), std::invalid_argument);
}

}  // namespace
}  // namespace ceiling
