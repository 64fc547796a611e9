// Kernel-described PMU events (uncore memory controllers, RAPL) encoded from a recorded
// /sys tree of a two-socket Sapphire Rapids.

#include "collectors/sysfs_pmu.hpp"

#include <gtest/gtest.h>

namespace ceiling::collectors {
namespace {

const FsRoot spr_root(CEILING_TEST_DATA "/fakeroot-spr");

TEST(SysfsFormat, ParsesContiguousAndSplitFields) {
    const auto f = parse_format_field("config:0-7");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->word, "config");
    ASSERT_EQ(f->bit_ranges.size(), 1u);
    EXPECT_EQ(f->bit_ranges[0], (std::pair<int, int>{0, 7}));
    const auto split = parse_format_field("config1:0-3,32-35");
    ASSERT_TRUE(split);
    EXPECT_EQ(split->word, "config1");
    EXPECT_EQ(split->bit_ranges.size(), 2u);
    const auto single = parse_format_field("config:18");
    ASSERT_TRUE(single);
    EXPECT_EQ(single->bit_ranges[0], (std::pair<int, int>{18, 18}));
    EXPECT_FALSE(parse_format_field("cfg:0-7"));
    EXPECT_FALSE(parse_format_field("config:7-0"));
}

TEST(SysfsEvents, SapphireRapidsCasReadEncodesFromTheKernelsDescription) {
    // events/cas_count_read = "event=0x05,umask=0xcf"; format event = config:0-7,
    // umask = config:8-15 -> config = 0xcf << 8 | 0x05 = 0xcf05, type from uncore_imc_0/type.
    const auto l = resolve_sysfs_event(spr_root, "uncore_imc_0", "cas_count_read");
    ASSERT_TRUE(l.event) << l.error;
    EXPECT_EQ(l.event->encoding.type, 38u);
    EXPECT_EQ(l.event->encoding.config, 0xcf05u);
    // The kernel's scale: 6.103515625e-5 MiB per count = 64 / 2^20 MiB, one 64-byte line.
    EXPECT_DOUBLE_EQ(l.event->scale * 1024 * 1024, 64.0);
    EXPECT_EQ(l.event->unit, "MiB");
    EXPECT_EQ(l.event->cpus, (std::vector<int>{0, 56})) << "one CPU per socket";
    // cas_count_write = "event=0x05,umask=0xf0" -> 0xf005.
    EXPECT_EQ(
        resolve_sysfs_event(spr_root, "uncore_imc_1", "cas_count_write").event->encoding.config,
        0xf005u);
}

TEST(SysfsEvents, RaplEnergyThroughThePowerPmu) {
    // energy-pkg = "event=0x02", 2^-32 J per count.
    const auto l = resolve_sysfs_event(spr_root, "power", "energy-pkg");
    ASSERT_TRUE(l.event) << l.error;
    EXPECT_EQ(l.event->encoding.type, 27u);
    EXPECT_EQ(l.event->encoding.config, 0x02u);
    EXPECT_DOUBLE_EQ(l.event->scale, 2.3283064365386962890625e-10);
    EXPECT_EQ(l.event->unit, "Joules");
}

TEST(SysfsEvents, MissingPmusAndEventsSayWhich) {
    const auto no_pmu = resolve_sysfs_event(spr_root, "uncore_imc_9", "cas_count_read");
    EXPECT_FALSE(no_pmu.event);
    EXPECT_NE(no_pmu.error.find("uncore_imc_9"), std::string::npos);
    const auto no_event = resolve_sysfs_event(spr_root, "uncore_imc_0", "cas_count_all");
    EXPECT_FALSE(no_event.event);
    EXPECT_NE(no_event.error.find("cas_count_all"), std::string::npos);
}

TEST(SysfsEvents, ListsPmuInstancesAndEventNames) {
    EXPECT_EQ(sysfs_pmus(spr_root, "uncore_imc"),
              (std::vector<std::string>{"uncore_imc_0", "uncore_imc_1"}));
    EXPECT_EQ(sysfs_pmus(spr_root, "power"), (std::vector<std::string>{"power"}));
    EXPECT_TRUE(sysfs_pmus(FsRoot(CEILING_TEST_DATA "/fakeroot-vm"), "uncore_imc").empty());
    EXPECT_EQ(sysfs_event_names(spr_root, "uncore_imc_0"),
              (std::vector<std::string>{"cas_count_read", "cas_count_write", "clockticks"}));
}

}  // namespace
}  // namespace ceiling::collectors
