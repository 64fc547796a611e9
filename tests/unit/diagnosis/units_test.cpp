#include "diagnosis/units.hpp"

#include <stdexcept>

#include <gtest/gtest.h>

namespace ceiling {
namespace {

struct Case {
    const char* text;
    QuantityKind kind;
    double expected;
};

TEST(Units, ParsesEachKindAndSuffix) {
    const Case cases[] = {
        {"12ms", QuantityKind::duration, 0.012},
        {"12 ms", QuantityKind::duration, 0.012},
        {"250us", QuantityKind::duration, 250e-6},
        {"40ns", QuantityKind::duration, 40e-9},
        {"0", QuantityKind::duration, 0},
        {"2min", QuantityKind::duration, 120},
        {"40MB", QuantityKind::bytes, 40e6},
        {"1.5GiB", QuantityKind::bytes, 1.5 * 1024 * 1024 * 1024},
        {"4KiB", QuantityKind::bytes, 4096},
        {"4.2e8", QuantityKind::bytes, 4.2e8},
        {"14GB", QuantityKind::bytes, 14e9},
        {"5J", QuantityKind::energy, 5},
        {"2kJ", QuantityKind::energy, 2000},
        {"1Wh", QuantityKind::energy, 3600},
        {"30W", QuantityKind::power, 30},
        {"7e9", QuantityKind::count, 7e9},
        {"7B", QuantityKind::count, 7e9},
        {"0", QuantityKind::count, 0},
    };
    for (const auto& c : cases)
        EXPECT_DOUBLE_EQ(parse_quantity(c.text, c.kind), c.expected) << c.text;
}

TEST(Units, RejectsBadText) {
    const Case bad[] = {{"", QuantityKind::bytes, 0},       {"abc", QuantityKind::count, 0},
                        {"-1", QuantityKind::count, 0},     {"12xs", QuantityKind::duration, 0},
                        {"nan", QuantityKind::count, 0},    {"inf", QuantityKind::count, 0},
                        {"1e999", QuantityKind::count, 0},  {"0x10", QuantityKind::count, 0},
                        {"40 MBs", QuantityKind::bytes, 0}, {"12ms", QuantityKind::bytes, 0},
                        {"10", QuantityKind::duration, 0},  {"1.5", QuantityKind::energy, 0},
                        {"30", QuantityKind::power, 0}};
    for (const auto& c : bad)
        EXPECT_THROW(parse_quantity(c.text, c.kind), std::invalid_argument) << c.text;
}

TEST(Units, ABareDurationAsksForItsUnit) {
    try {
        parse_duration_s("10");
        FAIL() << "10 would be a guess: seconds or milliseconds";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(),
                     "'10' is not a duration: a unit is needed (use ns, us, ms, s, min, h, "
                     "e.g. '10ms')");
    }
}

TEST(Units, MessageNamesTheTextAndTheUnits) {
    try {
        parse_duration_s("12xs");
        FAIL();
    } catch (const std::invalid_argument& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("'12xs'"), std::string::npos) << m;
        EXPECT_NE(m.find("ms"), std::string::npos) << m;
        EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
}

}  // namespace
}  // namespace ceiling
