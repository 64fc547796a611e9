// What the kernel allows, read from recorded /proc and /sys trees, and the table that
// turns perf_event_open errors into reasons and fixes.

#include "collectors/perf_environment.hpp"

#include <cerrno>

#include <gtest/gtest.h>

namespace ceiling::collectors {
namespace {

TEST(PerfEnvironment, BareMetalSapphireRapidsWithoutPrivilege) {
    const auto env = read_perf_environment(FsRoot(CEILING_TEST_DATA "/fakeroot-spr"));
    EXPECT_EQ(env.paranoid, 2);
    EXPECT_FALSE(env.privileged());
    EXPECT_FALSE(env.virtual_machine);
    EXPECT_TRUE(env.has_cpu_pmu());
    EXPECT_EQ(env.cpu_vendor, "GenuineIntel");
    EXPECT_EQ(env.cpu_family, 6);
    EXPECT_EQ(env.cpu_model, 143);
    EXPECT_FALSE(env.kernel_counting_allowed());
    EXPECT_FALSE(env.system_wide_allowed());
}

TEST(PerfEnvironment, KvmGuestWithoutAPmuRunningAsRoot) {
    const auto env = read_perf_environment(FsRoot(CEILING_TEST_DATA "/fakeroot-vm"));
    EXPECT_TRUE(env.virtual_machine);
    EXPECT_EQ(env.hypervisor, "QEMU");
    EXPECT_FALSE(env.has_cpu_pmu());
    EXPECT_TRUE(env.privileged()) << "CapEff has CAP_SYS_ADMIN and CAP_PERFMON";
    EXPECT_TRUE(env.system_wide_allowed());
}

TEST(PerfEnvironment, EveryParanoidLevelIsExplained) {
    for (int level = -1; level <= 4; ++level) EXPECT_FALSE(paranoid_meaning(level).empty());
    EXPECT_NE(paranoid_meaning(2).find("user mode only"), std::string_view::npos);
}

TEST(ExplainOpenError, NoPmuInAVmSaysEnableTheVirtualPmu) {
    PerfEnvironment env;
    env.virtual_machine = true;
    env.hypervisor = "KVM";
    const auto c = explain_open_error(ENOENT, EventScope::hardware, env);
    EXPECT_FALSE(c.available);
    EXPECT_EQ(c.reason, "no CPU PMU exposed in this VM (KVM)");
    EXPECT_NE(c.fix.find("enable the virtual PMU in the hypervisor"), std::string::npos);
}

TEST(ExplainOpenError, ParanoidAndPrivilegeDecideTheFix) {
    PerfEnvironment env;
    env.paranoid = 3;
    const auto forbidden = explain_open_error(EACCES, EventScope::software, env);
    EXPECT_NE(forbidden.reason.find("perf_event_paranoid=3"), std::string::npos);
    EXPECT_NE(forbidden.fix.find("sysctl kernel.perf_event_paranoid=1"), std::string::npos);

    env.paranoid = 2;
    const auto uncore = explain_open_error(EACCES, EventScope::system_wide, env);
    EXPECT_NE(uncore.fix.find("sysctl kernel.perf_event_paranoid=0"), std::string::npos);
    EXPECT_NE(uncore.fix.find("cap_perfmon"), std::string::npos);

    const auto container = explain_open_error(EPERM, EventScope::software, env);
    EXPECT_NE(container.fix.find("--cap-add PERFMON"), std::string::npos);
}

TEST(ExplainOpenError, UnknownErrorsStillSayWhatHappened) {
    const auto c = explain_open_error(EXDEV, EventScope::hardware, PerfEnvironment{});
    EXPECT_FALSE(c.available);
    EXPECT_NE(c.reason.find("perf_event_open failed"), std::string::npos);
}

}  // namespace
}  // namespace ceiling::collectors
