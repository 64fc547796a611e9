// RAPL energy: powercap domains and counter wrap on a recorded tree, the perf power PMU
// reading 0 in a VM marked untrusted, and this machine's answer with its reason.

#include "collectors/energy.hpp"

#include <gtest/gtest.h>

#include "tests/unit/collectors/fake_perf_event_api.hpp"

namespace ceiling::collectors {
namespace {

using testing::FakePerfEventApi;

TEST(Energy, DeltaAcrossAWrap) {
    EXPECT_DOUBLE_EQ(energy_delta_uj(1000, 4000, 262143328850.0), 3000);
    // Wrapped: (max - before) + after = (262143328850 - 262143328000) + 150 = 1000 uJ.
    EXPECT_DOUBLE_EQ(energy_delta_uj(262143328000.0, 150, 262143328850.0), 1000);
    EXPECT_DOUBLE_EQ(energy_delta_uj(5, 1, std::nullopt), 0) << "unknown wrap: no guess";
}

TEST(Energy, PowercapDomainsWithoutTheMmioDuplicate) {
    const auto scan = scan_powercap(FsRoot(CEILING_TEST_DATA "/fakeroot-spr"));
    ASSERT_TRUE(scan.capability.available) << scan.capability.reason;
    std::vector<std::string> names;
    for (const auto& d : scan.domains) names.push_back(d.name);
    EXPECT_EQ(names, (std::vector<std::string>{"package-0", "dram", "package-1"}));
    EXPECT_EQ(*scan.domains[0].max_range_uj, 262143328850.0);
}

TEST(Energy, PowercapReadingsOnAFixedTreeAreZeroAndSaySo) {
    // The recorded tree does not change between start and stop: 0 J, flagged.
    const FsRoot root(CEILING_TEST_DATA "/fakeroot-spr");
    FakePerfEventApi perf;
    PerfEnvironment env;
    EnergyCollector c(root, perf, &env);
    ASSERT_TRUE(c.probe().available);
    EXPECT_EQ(c.interface(), "powercap");
    c.start();
    usleep(20'000);
    const Readings r = c.stop();
    ASSERT_TRUE(r.find("energy_package_0_j"));
    ASSERT_TRUE(r.find("energy_dram_j"));
    ASSERT_TRUE(r.find("energy_j"));
    EXPECT_EQ(r.find("energy_j")->unit, "J");
    EXPECT_TRUE(r.find("energy_package_0_j")->low_confidence);
    EXPECT_NE(r.find("energy_package_0_j")->note.find("did not advance"), std::string::npos);
}

TEST(Energy, PerfPowerPmuThatReadsZeroInAVmIsNotBelieved) {
    // The KVM guest exposes power/energy-psys, and it reads 0 under load.
    const FsRoot root(CEILING_TEST_DATA "/fakeroot-vm");
    FakePerfEventApi perf;
    perf.count = [](const perf_event_attr&) { return RawCount{0, 1000, 1000}; };
    PerfEnvironment env;
    env.cap_perfmon = true;
    EnergyCollector c(root, perf, &env);
    const Capability probed = c.probe();
    ASSERT_TRUE(probed.available) << probed.reason;
    EXPECT_EQ(c.interface(), "perf power PMU");
    ASSERT_EQ(perf.opened.size(), 1u);
    EXPECT_EQ(perf.opened[0].attr.type, 9u);
    EXPECT_EQ(perf.opened[0].attr.config, 0x05u);
    EXPECT_EQ(perf.opened[0].pid, -1) << "RAPL is CPU-wide";
    const Capability verified = c.verify(std::chrono::milliseconds(20));
    EXPECT_FALSE(verified.available);
    EXPECT_NE(verified.reason.find("do not advance"), std::string::npos);
}

TEST(Energy, PerfPowerPmuCountsInJoules) {
    // 2^32 counts of 2^-32 J = 1 J, through the VM tree's power PMU with a fake that counts.
    const FsRoot root(CEILING_TEST_DATA "/fakeroot-vm");
    FakePerfEventApi perf;
    perf.count = [](const perf_event_attr&) { return RawCount{4294967296ULL, 1000, 1000}; };
    PerfEnvironment env;
    env.cap_perfmon = true;
    EnergyCollector c(root, perf, &env);
    ASSERT_TRUE(c.verify(std::chrono::milliseconds(5)).available);
    c.start();
    const Readings r = c.stop();
    ASSERT_TRUE(r.find("energy_energy_psys_j"));
    EXPECT_DOUBLE_EQ(r.find("energy_energy_psys_j")->value, 1.0);
    EXPECT_DOUBLE_EQ(r.find("energy_j")->value, 1.0) << "psys is the total when alone";
}

TEST(Energy, WithoutPrivilegeThePowerPmuSaysHowToGetIt) {
    FakePerfEventApi perf;
    perf.open_result = [](const perf_event_attr&, pid_t, int) { return -EACCES; };
    PerfEnvironment env;
    env.paranoid = 2;
    const FsRoot root(CEILING_TEST_DATA "/fakeroot-vm");
    EnergyCollector c(root, perf, &env);
    const Capability cap = c.probe();
    EXPECT_FALSE(cap.available);
    EXPECT_NE(cap.reason.find("CPU-wide events need"), std::string::npos) << cap.reason;
    EXPECT_NE(cap.fix.find("perf_event_paranoid=0"), std::string::npos) << cap.fix;
}

TEST(EnergyOnThisMachine, AnswersWithAReason) {
    EnergyCollector c;
    const Capability cap = c.verify();
    if (cap.available) GTEST_SKIP() << "RAPL works here: " << cap.reason;
    EXPECT_FALSE(cap.reason.empty());
}

}  // namespace
}  // namespace ceiling::collectors
