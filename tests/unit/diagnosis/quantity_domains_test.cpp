// Saved quantities are checked against the domain their field name's unit implies.

#include "diagnosis/quantity_domains.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ceiling {
namespace {

TEST(QuantityDomains, NamesTheFirstFieldOutsideItsDomain) {
    auto j = nlohmann::json::parse(R"({"executions": [{"wall_s": 1.5}, {"wall_s": -1}]})");
    EXPECT_EQ(find_out_of_domain(j).value_or(""),
              "executions[1].wall_s = -1: a duration cannot be negative");
    // A statistic takes the unit of the field that holds it.
    j = nlohmann::json::parse(R"({"duration_s": {"median": 1, "min": -0.5}})");
    EXPECT_EQ(find_out_of_domain(j).value_or(""),
              "duration_s.min = -0.5: a duration cannot be negative");
    j = nlohmann::json::parse(R"({"ops_per_s": {"median": -3}})");
    EXPECT_NE(find_out_of_domain(j).value_or("").find("a rate cannot be negative"),
              std::string::npos);
    j = nlohmann::json::parse(R"({"device_wait_share": 1.5})");
    EXPECT_NE(find_out_of_domain(j).value_or("").find("a share of time cannot exceed 1"),
              std::string::npos);
    j = nlohmann::json::parse(R"({"regions": [{"instances": -2}]})");
    EXPECT_NE(find_out_of_domain(j).value_or("").find("regions[0].instances"), std::string::npos);
}

TEST(QuantityDomains, LeavesFieldsWithoutAUnitAndValidValuesAlone) {
    // Margins, exit codes and plain indices carry no unit: any sign is theirs to have.
    const auto j = nlohmann::json::parse(
        R"({"margin": -0.2, "exit_code": -1, "wall_s": 0, "bytes_per_s": {"median": 3e10},
            "system_time_share": 0.25, "durations_s": [0.1, 0.2], "name": "x", "flag": true})");
    EXPECT_FALSE(find_out_of_domain(j)) << *find_out_of_domain(j);
}

}  // namespace
}  // namespace ceiling
