// Control-group limits on described machines: a hybrid v1 host (this kind of VM), a v2-only
// host, a container whose mount's root is its own group, and cpu.stat's two formats.

#include "collectors/cgroup.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace ceiling::collectors {
namespace {

namespace fs = std::filesystem;

// A described machine in a fresh directory: files written at their absolute paths.
class FakeMachine {
  public:
    FakeMachine() {
        std::string tmpl = (fs::temp_directory_path() / "ceiling-cgroup-XXXXXX").string();
        dir_ = ::mkdtemp(tmpl.data());
    }
    ~FakeMachine() {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    FakeMachine& file(const std::string& absolute, const std::string& text) {
        const fs::path p = dir_ / absolute.substr(1);
        fs::create_directories(p.parent_path());
        std::ofstream(p) << text;
        return *this;
    }
    FsRoot root() const { return FsRoot(dir_); }

  private:
    fs::path dir_;
};

constexpr const char* hybrid_mounts =
    "30 25 0:26 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
    "31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw\n"
    "33 30 0:29 / /sys/fs/cgroup/cpu rw,nosuid shared:9 - cgroup cgroup rw,cpu\n"
    "35 30 0:31 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n";

TEST(CgroupLimits, TakesTheTightestQuotaOverTheGroupAndItsAncestorsOnV1) {
    FakeMachine m;
    m.file("/proc/self/mountinfo", hybrid_mounts)
        .file("/proc/self/cgroup", "4:memory:/a/b\n1:cpu:/a/b\n0::/\n")
        .file("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n")
        .file("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n")
        .file("/sys/fs/cgroup/cpu/a/cpu.cfs_quota_us", "150000\n")
        .file("/sys/fs/cgroup/cpu/a/cpu.cfs_period_us", "100000\n")
        .file("/sys/fs/cgroup/cpu/a/b/cpu.cfs_quota_us", "-1\n")
        .file("/sys/fs/cgroup/cpu/a/b/cpu.cfs_period_us", "100000\n")
        .file("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n")
        .file("/sys/fs/cgroup/memory/a/b/memory.limit_in_bytes", "4294967296\n");
    const auto l = read_cgroup_limits(m.root());
    ASSERT_TRUE(l.cpu);
    EXPECT_DOUBLE_EQ(l.cpu->cpus, 1.5);
    EXPECT_DOUBLE_EQ(l.cpu->period_s, 0.1);
    EXPECT_EQ(l.cpu->group, "/a");
    EXPECT_EQ(l.cpu->version, 1);
    EXPECT_EQ(l.cpu->stat_path, "/sys/fs/cgroup/cpu/a/cpu.stat");
    ASSERT_TRUE(l.memory_limit_bytes);
    EXPECT_DOUBLE_EQ(*l.memory_limit_bytes, 4294967296.0);
    EXPECT_EQ(l.memory_group, "/a/b");
}

TEST(CgroupLimits, ReadsTheV2HierarchyWhereNoV1ControllerIsMounted) {
    FakeMachine m;
    m.file("/proc/self/mountinfo", "29 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n")
        .file("/proc/self/cgroup", "0::/user.slice/job.scope\n")
        .file("/sys/fs/cgroup/user.slice/cpu.max", "200000 100000\n")
        .file("/sys/fs/cgroup/user.slice/job.scope/cpu.max", "max 100000\n")
        .file("/sys/fs/cgroup/user.slice/job.scope/memory.max", "max\n")
        .file("/sys/fs/cgroup/user.slice/memory.max", "1073741824\n");
    const auto l = read_cgroup_limits(m.root());
    ASSERT_TRUE(l.cpu);
    EXPECT_DOUBLE_EQ(l.cpu->cpus, 2.0);
    EXPECT_EQ(l.cpu->group, "/user.slice");
    EXPECT_EQ(l.cpu->version, 2);
    EXPECT_EQ(l.cpu->stat_path, "/sys/fs/cgroup/user.slice/cpu.stat");
    ASSERT_TRUE(l.memory_limit_bytes);
    EXPECT_DOUBLE_EQ(*l.memory_limit_bytes, 1073741824.0);
    // memory.high below memory.max (systemd's MemoryHigh=): allocations past it are
    // throttled, so it is the footprint the group holds at speed.
    m.file("/sys/fs/cgroup/user.slice/job.scope/memory.high", "536870912\n");
    const auto high = read_cgroup_limits(m.root());
    ASSERT_TRUE(high.memory_limit_bytes);
    EXPECT_DOUBLE_EQ(*high.memory_limit_bytes, 536870912.0);
    EXPECT_EQ(high.memory_group, "/user.slice/job.scope");
}

TEST(CgroupLimits, InAContainerTheMountsRootIsItsOwnGroup) {
    // Docker without a cgroup namespace: the path names the group from the host's root, and
    // the container sees that group at the mount point, nothing above it.
    FakeMachine m;
    m.file("/proc/self/mountinfo",
           "40 39 0:29 /docker/abc /sys/fs/cgroup/cpu ro - cgroup cgroup rw,cpu,cpuacct\n")
        .file("/proc/self/cgroup", "3:cpu,cpuacct:/docker/abc\n")
        .file("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "400000\n")
        .file("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
    const auto l = read_cgroup_limits(m.root());
    ASSERT_TRUE(l.cpu);
    EXPECT_DOUBLE_EQ(l.cpu->cpus, 4.0);
    EXPECT_EQ(l.cpu->group, "/docker/abc");
    EXPECT_FALSE(l.memory_limit_bytes) << "no memory controller mounted: unknown, not zero";
}

TEST(CgroupLimits, NoQuotaAndNothingReadableAreAbsent) {
    FakeMachine m;
    m.file("/proc/self/mountinfo", hybrid_mounts)
        .file("/proc/self/cgroup", "1:cpu:/\n")
        .file("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n")
        .file("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
    EXPECT_FALSE(read_cgroup_limits(m.root()).cpu);
    FakeMachine empty;
    const auto l = read_cgroup_limits(empty.root());
    EXPECT_FALSE(l.cpu);
    EXPECT_FALSE(l.memory_limit_bytes);
}

TEST(CpuThrottling, ParsesBothFormatsAndDifferences) {
    const auto v1 = parse_cpu_stat(
        "nr_periods 44\nnr_throttled 43\nthrottled_time 4187281594\nnr_bursts 0\n", 1);
    ASSERT_TRUE(v1);
    EXPECT_EQ(v1->periods, 44);
    EXPECT_EQ(v1->throttled_periods, 43);
    EXPECT_NEAR(v1->throttled_s, 4.187281594, 1e-12);
    const auto v2 = parse_cpu_stat(
        "usage_usec 900\nuser_usec 800\nsystem_usec 100\nnr_periods 10\nnr_throttled 4\n"
        "throttled_usec 250000\n",
        2);
    ASSERT_TRUE(v2);
    EXPECT_NEAR(v2->throttled_s, 0.25, 1e-12);
    EXPECT_FALSE(parse_cpu_stat("usage_usec 900\n", 2)) << "a group without the cpu controller";
    const auto d = throttling_delta(*v2, *v1);
    EXPECT_EQ(d.periods, 34);
    EXPECT_EQ(d.throttled_periods, 39);
    EXPECT_EQ(throttling_delta(*v1, *v2).periods, 0) << "never below zero";
}

TEST(CpuThrottling, ReadsTheQuotaGroupsStat) {
    FakeMachine m;
    m.file("/proc/self/mountinfo", hybrid_mounts)
        .file("/proc/self/cgroup", "1:cpu:/a\n")
        .file("/sys/fs/cgroup/cpu/a/cpu.cfs_quota_us", "50000\n")
        .file("/sys/fs/cgroup/cpu/a/cpu.cfs_period_us", "100000\n")
        .file("/sys/fs/cgroup/cpu/a/cpu.stat",
              "nr_periods 5\nnr_throttled 2\nthrottled_time 1000\n");
    const auto l = read_cgroup_limits(m.root());
    ASSERT_TRUE(l.cpu);
    EXPECT_DOUBLE_EQ(l.cpu->cpus, 0.5);
    const auto t = read_cpu_throttling(m.root(), *l.cpu);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->throttled_periods, 2);
}

}  // namespace
}  // namespace ceiling::collectors
