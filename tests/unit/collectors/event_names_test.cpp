// Bad input: an unknown event name is an error that lists the close matches; known names
// of every spelling resolve.

#include "collectors/event_names.hpp"

#include <gtest/gtest.h>

#include "tests/unit/collectors/fake_pfm_api.hpp"

namespace ceiling::collectors {
namespace {

using testing::FakePfmApi;

const FsRoot spr_root(CEILING_TEST_DATA "/fakeroot-spr");

FakePfmApi spr_pfm() {
    FakePfmApi pfm;
    pfm.host = "spr";
    pfm.events["spr::FP_ARITH_INST_RETIRED:SCALAR_DOUBLE"] = {PERF_TYPE_RAW, 0x01c7, 0, 0};
    pfm.events["spr::FP_ARITH_INST_RETIRED:SCALAR_SINGLE"] = {PERF_TYPE_RAW, 0x02c7, 0, 0};
    pfm.events["spr::FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE"] = {PERF_TYPE_RAW, 0x40c7, 0, 0};
    pfm.events["spr::LONGEST_LAT_CACHE:MISS"] = {PERF_TYPE_RAW, 0x412e, 0, 0};
    pfm.events["FP_ARITH_INST_RETIRED:SCALAR_DOUBLE"] = {PERF_TYPE_RAW, 0x01c7, 0, 0};
    return pfm;
}

TEST(EditDistance, IsCaseInsensitiveLevenshtein) {
    EXPECT_EQ(edit_distance("task-clock", "task-clock"), 0u);
    EXPECT_EQ(edit_distance("TASK-CLOCK", "task-clock"), 0u);
    EXPECT_EQ(edit_distance("task-clok", "task-clock"), 1u);
    EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
    EXPECT_EQ(edit_distance("", "abc"), 3u);
}

TEST(ResolveEvent, UnknownNameListsCloseMatches) {
    const FakePfmApi pfm = spr_pfm();
    const auto l = resolve_event("FP_ARITH_INST_RETIRD:SCALAR_DOUBLE", pfm, spr_root);
    EXPECT_FALSE(l.spec);
    ASSERT_FALSE(l.suggestions.empty());
    EXPECT_EQ(l.suggestions[0], "FP_ARITH_INST_RETIRED:SCALAR_DOUBLE");
    EXPECT_NE(l.error.find("unknown event 'FP_ARITH_INST_RETIRD:SCALAR_DOUBLE'"),
              std::string::npos);
    EXPECT_NE(l.error.find("did you mean FP_ARITH_INST_RETIRED:SCALAR_DOUBLE"), std::string::npos)
        << l.error;
    EXPECT_EQ(l.error.find('\n'), std::string::npos) << "one line";

    const auto sw = resolve_event("task-clok", pfm, spr_root);
    ASSERT_FALSE(sw.suggestions.empty());
    EXPECT_EQ(sw.suggestions[0], "task-clock");

    const auto fragment = resolve_event("FP_ARITH", pfm, spr_root);
    EXPECT_GE(fragment.suggestions.size(), 3u) << "a fragment lists what contains it";

    const auto nothing = resolve_event("zzzzzzzzzzzzzzzzzz", pfm, spr_root);
    EXPECT_TRUE(nothing.suggestions.empty());
    EXPECT_FALSE(nothing.error.empty());
}

TEST(ResolveEvent, KnownNamesOfEverySpelling) {
    const FakePfmApi pfm = spr_pfm();
    const auto sw = resolve_event("page-faults", pfm, spr_root);
    ASSERT_TRUE(sw.spec);
    EXPECT_EQ(sw.spec->encoding.type, static_cast<std::uint32_t>(PERF_TYPE_SOFTWARE));
    EXPECT_EQ(sw.spec->scope, EventScope::software);

    const auto uncore = resolve_event("uncore_imc_0/cas_count_read/", pfm, spr_root);
    ASSERT_TRUE(uncore.spec) << uncore.error;
    EXPECT_EQ(uncore.spec->encoding.config, 0xcf05u);
    EXPECT_EQ(uncore.spec->scope, EventScope::system_wide);
    EXPECT_EQ(uncore.spec->unit, "MiB");

    const auto native = resolve_event("FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", pfm, spr_root);
    ASSERT_TRUE(native.spec);
    EXPECT_EQ(native.spec->encoding.config, 0x01c7u);
    EXPECT_EQ(native.spec->scope, EventScope::hardware);

    const auto bad_uncore = resolve_event("uncore_imc_0/cas_count_reed/", pfm, spr_root);
    EXPECT_FALSE(bad_uncore.spec);
    ASSERT_FALSE(bad_uncore.suggestions.empty());
    EXPECT_EQ(bad_uncore.suggestions[0], "uncore_imc_0/cas_count_read/");
}

TEST(ResolveEvent, OnThisMachineAHardwareEventNameSaysWhyItIsUnknown) {
    const auto pfm = make_pfm_api();
    const auto l = resolve_event("FP_ARITH_INST_RETIRD:SCALAR_DOUBLE", *pfm);
    if (pfm->host_pmu()) GTEST_SKIP() << "libpfm4 knows this CPU (" << *pfm->host_pmu() << ")";
    EXPECT_FALSE(l.spec);
    EXPECT_FALSE(l.error.empty());
}

}  // namespace
}  // namespace ceiling::collectors
