#include "diagnosis/thresholds.hpp"

#include <stdexcept>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ceiling {
namespace {

TEST(Thresholds, DefaultsAreDesignMd) {
    const Thresholds t;
    EXPECT_DOUBLE_EQ(t.near_roof, 0.60);
    EXPECT_DOUBLE_EQ(t.done, 0.70);
    EXPECT_DOUBLE_EQ(t.far, 0.10);
    EXPECT_DOUBLE_EQ(t.model_share, 0.50);
    EXPECT_NO_THROW(validate(t));
}

TEST(Thresholds, EveryFieldIsInTheTableOnce) {
    Thresholds t;
    // Setting every field through the table to a distinct value must change every member.
    double v = 1000;
    for (const auto& f : threshold_fields()) set_threshold(t, f.name, v++);
    v = 1000;
    for (const auto& f : threshold_fields()) EXPECT_EQ(t.*f.member, v++) << f.name;
    EXPECT_EQ(sizeof(Thresholds), threshold_fields().size() * sizeof(double));
}

TEST(Thresholds, OutOfOrderIsAnError) {
    struct Case {
        double far, near_roof, done;
        bool ok;
    };
    const Case cases[] = {
        {0.10, 0.60, 0.70, true},  {0.10, 0.70, 0.70, true},  // near == done allowed
        {0.60, 0.60, 0.70, false},                            // far must be below near
        {0.10, 0.80, 0.70, false},                            // near above done
        {0.10, 0.60, 1.10, false},                            // done above 1
        {0.00, 0.60, 0.70, false},                            // far must be positive
        {0.70, 0.60, 0.50, false},
    };
    for (const auto& c : cases) {
        Thresholds t;
        t.far = c.far;
        t.near_roof = c.near_roof;
        t.done = c.done;
        if (c.ok)
            EXPECT_NO_THROW(validate(t));
        else
            EXPECT_THROW(validate(t), std::invalid_argument)
                << c.far << " " << c.near_roof << " " << c.done;
    }
}

TEST(Thresholds, OutOfOrderMessageIsOneLine) {
    Thresholds t;
    t.near_roof = 0.9;
    try {
        validate(t);
        FAIL();
    } catch (const std::invalid_argument& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("out of order"), std::string::npos) << m;
        EXPECT_NE(m.find("near_roof 0.9"), std::string::npos) << m;
        EXPECT_EQ(m.find('\n'), std::string::npos);
    }
}

TEST(Thresholds, SharesAndRatesAreChecked) {
    Thresholds t;
    t.model_share = 1.5;
    EXPECT_THROW(validate(t), std::invalid_argument);
    t = {};
    t.page_faults_per_s = 0;
    EXPECT_THROW(validate(t), std::invalid_argument);
    t = {};
    t.above_roof_tolerance = -0.1;
    EXPECT_THROW(validate(t), std::invalid_argument);
}

TEST(Thresholds, ConfigFileOverridesSomeFields) {
    const Thresholds t = parse_thresholds(R"({"near_roof": 0.5, "done": 0.8})");
    EXPECT_DOUBLE_EQ(t.near_roof, 0.5);
    EXPECT_DOUBLE_EQ(t.done, 0.8);
    EXPECT_DOUBLE_EQ(t.far, 0.10);  // untouched
}

TEST(Thresholds, ConfigFileErrors) {
    EXPECT_THROW(parse_thresholds(R"({"nearroof": 0.5})"), std::invalid_argument);  // typo
    EXPECT_THROW(parse_thresholds(R"({"near_roof": "high"})"), std::invalid_argument);
    EXPECT_THROW(parse_thresholds(R"({"near_roof": 0.9})"), std::invalid_argument);  // above done
    EXPECT_THROW(parse_thresholds("[1, 2]"), std::invalid_argument);
    EXPECT_THROW(parse_thresholds("{"), std::invalid_argument);
}

TEST(Thresholds, FlagAssignmentsOverTheFile) {
    Thresholds t = parse_thresholds(R"({"near_roof": 0.5})");
    apply_threshold_assignment(t, "far=0.05");
    apply_threshold_assignment(t, "context_switches_per_s=5k");
    EXPECT_DOUBLE_EQ(t.far, 0.05);
    EXPECT_DOUBLE_EQ(t.near_roof, 0.5);
    EXPECT_DOUBLE_EQ(t.context_switches_per_s, 5000);
    EXPECT_THROW(apply_threshold_assignment(t, "far"), std::invalid_argument);
    EXPECT_THROW(apply_threshold_assignment(t, "=0.1"), std::invalid_argument);
    EXPECT_THROW(apply_threshold_assignment(t, "far=abc"), std::invalid_argument);
    EXPECT_THROW(apply_threshold_assignment(t, "nope=0.1"), std::invalid_argument);
}

TEST(Thresholds, JsonRoundTrip) {
    Thresholds t;
    t.near_roof = 0.55;
    const nlohmann::json j = t;
    EXPECT_DOUBLE_EQ(j.at("near_roof").get<double>(), 0.55);
    const Thresholds back = j.get<Thresholds>();
    for (const auto& f : threshold_fields()) EXPECT_EQ(back.*f.member, t.*f.member) << f.name;
}

}  // namespace
}  // namespace ceiling
