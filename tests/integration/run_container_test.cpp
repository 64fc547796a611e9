// `ceiling run` inside a control group with a CPU quota, as a container's: the run is judged
// CPU-quota bound with the periods it ran out in, and the CPU line names the quota. The test
// makes its own group, so it needs root and a cgroup hierarchy with the cpu controller it can
// write (v1's cpu mount, or v2 with cpu enabled for children); skipped with the reason
// elsewhere. And under a narrower affinity mask (taskset), the record has the CPUs allowed.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <unistd.h>

#include "diagnosis/machine_profile.hpp"
#include "tests/integration/run_support.hpp"

namespace ceiling::testing {
namespace {

namespace fs = std::filesystem;

// A fresh group with a quota of `cpus`, removed (once empty) at the end.
class QuotaGroup {
  public:
    explicit QuotaGroup(double cpus) : why_(make(cpus)) { ok_ = why_.empty(); }
    ~QuotaGroup() {
        if (dir_.empty()) return;
        // A group is removed with rmdir once its processes exited (remove() uses rmdir).
        std::error_code ec;
        fs::remove(dir_, ec);
    }
    bool ok() const { return ok_; }
    const std::string& why() const { return why_; }
    const fs::path& dir() const { return dir_; }

  private:
    static std::string slurp_or_empty(const fs::path& p) {
        std::error_code ec;
        return fs::exists(p, ec) ? slurp(p) : std::string();
    }
    // Empty when the group is ready, else why not.
    std::string make(double cpus) {
        const std::string name = "ceiling-test-" + std::to_string(::getpid());
        const auto quota = static_cast<long>(cpus * 100000);
        std::error_code ec;
        if (fs::exists("/sys/fs/cgroup/cpu/cpu.cfs_quota_us")) {
            dir_ = fs::path("/sys/fs/cgroup/cpu") / name;
            if (!fs::create_directory(dir_, ec) || ec) return "cannot create " + dir_.string();
            std::ofstream(dir_ / "cpu.cfs_period_us") << 100000;
            if (!(std::ofstream(dir_ / "cpu.cfs_quota_us") << quota)) return "cannot set the quota";
        } else if (slurp_or_empty("/sys/fs/cgroup/cgroup.subtree_control").find("cpu") !=
                   std::string::npos) {
            dir_ = fs::path("/sys/fs/cgroup") / name;
            if (!fs::create_directory(dir_, ec) || ec) return "cannot create " + dir_.string();
            if (!(std::ofstream(dir_ / "cpu.max") << quota << " 100000"))
                return "cannot set the quota";
        } else {
            return "no writable cgroup hierarchy with the cpu controller";
        }
        return fs::exists(dir_ / "cgroup.procs") ? "" : "the new group has no cgroup.procs";
    }
    fs::path dir_;
    std::string why_;
    bool ok_ = false;
};

TEST(RunInAContainer, AProgramHeldByItsCpuQuotaIsJudgedQuotaBound) {
    CEILING_NEED_NVTX();
    if (::geteuid() != 0) GTEST_SKIP() << "making a control group needs root";
    QuotaGroup group(0.5);
    if (!group.ok()) GTEST_SKIP() << group.why();
    TempDir dir;
    // One thread busy for 20 x 45 ms of wall time on half a CPU's quota: it runs out in
    // nearly every period.
    // 77: the shell could not move itself into the group (a container may refuse it).
    const std::string command = "echo $$ > " + (group.dir() / "cgroup.procs").string() +
                                " || exit 77; exec " + CEILING_BINARY + " run --detail --output " +
                                (dir / "r.json").string() + " -- " + nvtx_target + " preprocess 20";
    const auto r = run_process({"/bin/sh", "-c", command});
    if (r.exit_code == 77) GTEST_SKIP() << "cannot move a process into the new group: " << r.err;
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("a CPU quota of 0.50"), std::string::npos) << r.err;
    const RunRecord rec = read_record(dir / "r.json");
    ASSERT_TRUE(rec.diagnosis && rec.diagnosis->bound) << r.err;
    EXPECT_EQ(*rec.diagnosis->bound, Bound::not_the_model);
    EXPECT_EQ(rec.diagnosis->diagnosis, "not the model (CPU quota bound)");
    const auto& s = rec.diagnosis->system;
    const auto quota = std::find_if(s.begin(), s.end(), [](const SystemSignal& x) {
        return x.name == "cpu_quota_throttled_share";
    });
    ASSERT_NE(quota, s.end());
    ASSERT_TRUE(quota->value);
    EXPECT_GT(*quota->value, 0.5);
    EXPECT_TRUE(quota->fired);
    const auto& f = rec.diagnosis->findings;
    EXPECT_NE(std::find_if(f.begin(), f.end(),
                           [](const Finding& x) {
                               return x.detail.find("CPU quota of its control group: 0.5 CPUs") !=
                                      std::string::npos;
                           }),
              f.end());
}

// The same program outside any quota: not judged by one (the row needs a quota's periods).
TEST(RunInAContainer, WithoutAQuotaNoQuotaRowHolds) {
    CEILING_NEED_NVTX();
    TempDir dir;
    const auto r = ceiling_run(dir / "r.json", {"-q"}, {nvtx_target, "preprocess", "4"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const RunRecord rec = read_record(dir / "r.json");
    ASSERT_TRUE(rec.diagnosis);
    EXPECT_NE(rec.diagnosis->diagnosis, "not the model (CPU quota bound)");
}

// `machine` under a quota smaller than its threads says its wall-clock roofs read low, in
// its warning and in the profile's method (where it once was written before the method was
// filled, and lost).
TEST(RunInAContainer, MachineUnderAQuotaSaysItsWallClockRoofsReadLow) {
    if (::geteuid() != 0) GTEST_SKIP() << "making a control group needs root";
    if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one CPU: no team to throttle";
    QuotaGroup group(1.0);
    if (!group.ok()) GTEST_SKIP() << group.why();
    TempDir dir;
    const std::string command =
        "echo $$ > " + (group.dir() / "cgroup.procs").string() + " || exit 77; exec " +
        CEILING_BINARY + " machine --quick --no-storage --output " + (dir / "p.json").string();
    const auto r = run_process({"/bin/sh", "-c", command});
    if (r.exit_code == 77) GTEST_SKIP() << "cannot move a process into the new group: " << r.err;
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("measured under a CPU quota of 1.00 CPUs"), std::string::npos) << r.err;
    const MachineProfile p = parse_machine_profile(slurp(dir / "p.json"));
    ASSERT_TRUE(p.method.count("cpu_quota"));
    EXPECT_NE(p.method.at("cpu_quota").find("read low"), std::string::npos);
}

TEST(RunInAContainer, TheAffinityMaskItStartsWithIsRecorded) {
    if (::access("/usr/bin/taskset", X_OK) != 0) GTEST_SKIP() << "no taskset (util-linux)";
    TempDir dir;
    const auto r =
        run_process({"/usr/bin/taskset", "-c", "0", CEILING_BINARY, "run", "-q", "--output",
                     (dir / "r.json").string(), "--", run_target, "print", "x"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const RunRecord rec = read_record(dir / "r.json");
    double allowed = 0;
    for (const auto& c : rec.executions.at(0).counters)
        if (c.name == "affinity_cpus") allowed = c.value;
    EXPECT_EQ(allowed, 1);
}

}  // namespace
}  // namespace ceiling::testing
