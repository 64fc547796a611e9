// Counting a program from exec: a wrapped child that spawns threads and a grandchild
// process is fully counted; exit statuses follow the shell's conventions; a child is never
// run before it is released, and never left behind unreaped.

#include "collectors/counted_process.hpp"

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collectors/clock.hpp"
#include "collectors/software_events.hpp"
#include "tests/unit/collectors/fake_perf_event_api.hpp"
#include "tests/unit/collectors/host_steal.hpp"

namespace ceiling::collectors {
namespace {

void skip_without_software_events() {
    if (const Capability c = probe_software_events(); !c.available)
        GTEST_SKIP() << "perf_event software events unavailable here: " << c.reason;
}

TEST(CountedProcess, CountsThreadsAndAGrandchildProcess) {
    skip_without_software_events();
    // 2 threads x 0.3 s of CPU in the child, 0.4 s in a grandchild (fork + exec) that also
    // touches 16 MiB (4096 pages) of fresh memory: 1.0 s of CPU time in all.
    LaunchOptions opts;
    opts.argv = {CEILING_SPAWN_TREE, "tree", "2", "300", "400", "16"};
    const double steal_before = testing::host_steal_s();
    CountedProcess p = CountedProcess::launch(opts);
    const CountedProcess::Result r = p.wait();
    const double steal = testing::host_steal_s() - steal_before;
    ASSERT_EQ(r.exit.exit_status, 0);

    const auto task_clock = r.readings.value("task_clock_s");
    ASSERT_TRUE(task_clock);
    // Every thread and process counted: at least the 1.0 s burnt, plus start-up slack (and
    // the host's steal, which task-clock counts: host_steal.hpp).
    EXPECT_GE(*task_clock, 0.97);
    EXPECT_LE(*task_clock, 1.25 + steal) << "host steal " << steal << " s";
    // The kernel's accounting of the same tree agrees (wait4 covers waited-for children),
    // but for steal.
    const double cpu = r.exit.usage.user_s.value_or(0) + r.exit.usage.system_s.value_or(0);
    testing::expect_task_clock_matches(*task_clock, cpu, 0.1 * cpu + 0.03, steal);
    const auto faults = r.readings.value("page_faults");
    ASSERT_TRUE(faults);
    EXPECT_GE(*faults, 4096 * 0.95) << "the grandchild's page faults were not inherited";
    ASSERT_TRUE(r.readings.value("wall_s"));
    EXPECT_GT(*r.readings.value("wall_s"), 0.3);
    EXPECT_TRUE(r.readings.value("max_rss_bytes"));
}

TEST(CountedProcess, CountsNothingBeforeExec) {
    skip_without_software_events();
    // `true` does next to nothing: counting started at exec, not at fork, and what the
    // parent did between fork and release is not in it.
    LaunchOptions opts;
    opts.argv = {"true"};
    CountedProcess p = CountedProcess::launch(opts);
    const auto r = p.wait();
    EXPECT_EQ(r.exit.exit_status, 0);
    ASSERT_TRUE(r.readings.value("task_clock_s"));
    EXPECT_LT(*r.readings.value("task_clock_s"), 0.05);
}

TEST(CountedProcess, ReadsWhileRunningForSampling) {
    skip_without_software_events();
    LaunchOptions opts;
    opts.argv = {CEILING_SPAWN_TREE, "burn", "300", "0"};
    CountedProcess p = CountedProcess::launch(opts);
    const Readings early = p.read();
    const auto r = p.wait();
    ASSERT_TRUE(r.readings.value("task_clock_s"));
    EXPECT_GE(*r.readings.value("task_clock_s"), 0.29);
    EXPECT_LE(early.value("task_clock_s").value_or(0), *r.readings.value("task_clock_s"));
}

TEST(CountedProcess, NotFoundIs127AndNotExecutableIs126) {
    LaunchOptions missing;
    missing.argv = {"/no/such/program-ceiling"};
    try {
        CountedProcess::launch(missing);
        FAIL() << "launched a missing program";
    } catch (const LaunchError& e) {
        EXPECT_EQ(e.exit_status, 127);
        EXPECT_NE(std::string(e.what()).find("/no/such/program-ceiling"), std::string::npos);
    }
    LaunchOptions not_executable;
    not_executable.argv = {CEILING_TEST_DATA "/fakeroot-spr/proc/cpuinfo"};
    try {
        CountedProcess::launch(not_executable);
        FAIL() << "launched a data file";
    } catch (const LaunchError& e) {
        EXPECT_EQ(e.exit_status, 126);
    }
}

TEST(CountedProcess, KilledBySignalIs128PlusSignal) {
    LaunchOptions opts;
    opts.argv = {"sh", "-c", "kill -9 $$"};
    CountedProcess p = CountedProcess::launch(opts);
    const auto r = p.wait();
    EXPECT_EQ(r.exit.exit_status, 128 + 9);
    ASSERT_TRUE(r.exit.signal);
    EXPECT_EQ(*r.exit.signal, 9);
}

TEST(CountedProcess, PassesEnvironmentOverrides) {
    LaunchOptions opts;
    opts.argv = {"sh", "-c", "test \"$CEILING_TEST_VALUE\" = 42"};
    opts.env_overrides = {"CEILING_TEST_VALUE=42"};
    EXPECT_EQ(CountedProcess::launch(opts).wait().exit.exit_status, 0);
}

// A file the child would create if it ran; removed again by the test.
std::filesystem::path marker(const std::string& what) {
    return std::filesystem::temp_directory_path() /
           ("ceiling-counted-process-" + std::to_string(::getpid()) + "-" + what);
}

// True when `pid` is no longer a child of ours: it was reaped (waitpid says ECHILD).
bool reaped(pid_t pid) {
    int status = 0;
    return waitpid(pid, &status, WNOHANG) < 0 && errno == ECHILD;
}

TEST(GatedChild, NeverReleasedChildRunsNothingAndIsReaped) {
    const auto file = marker("never");
    std::filesystem::remove(file);
    pid_t pid = -1;
    {
        GatedChild child = GatedChild::fork({"sh", "-c", "touch '" + file.string() + "'"});
        pid = child.pid();
        ASSERT_GT(pid, 0);
        EXPECT_FALSE(reaped(pid)) << "the child is already gone before the gate closed";
    }
    EXPECT_TRUE(reaped(pid)) << "the destructor left a zombie or a running child";
    EXPECT_FALSE(std::filesystem::exists(file)) << "the child ran without being released";
}

TEST(GatedChild, ReleasedChildRunsItsProgram) {
    // The counterpart of the test above: the same child, released, does run.
    const auto file = marker("released");
    std::filesystem::remove(file);
    GatedChild child = GatedChild::fork({"sh", "-c", "touch '" + file.string() + "'"});
    EXPECT_EQ(child.release(), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child.pid(), &status, 0), child.pid());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_TRUE(std::filesystem::exists(file));
    std::filesystem::remove(file);
}

TEST(GatedChild, ReleaseReturnsTheErrnoOfAFailedExec) {
    GatedChild child = GatedChild::fork({"/no/such/program-ceiling"});
    EXPECT_EQ(child.release(), ENOENT);
    int status = 0;
    ASSERT_EQ(waitpid(child.pid(), &status, 0), child.pid());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 127);
}

TEST(ProcessExit, FollowsTheShellsConvention) {
    const ProcessExit ok = exit_from_wait_status(W_EXITCODE(3, 0));
    EXPECT_EQ(ok.exit_status, 3);
    EXPECT_FALSE(ok.signal);
    EXPECT_FALSE(ok.core_dumped);
    const ProcessExit segv = exit_from_wait_status(W_EXITCODE(0, SIGSEGV) | WCOREFLAG);
    EXPECT_EQ(segv.exit_status, 128 + SIGSEGV);
    EXPECT_EQ(segv.signal, SIGSEGV);
    EXPECT_TRUE(segv.core_dumped);
    EXPECT_EQ(segv.wait_status, W_EXITCODE(0, SIGSEGV) | WCOREFLAG);
}

TEST(CountedProcess, ANeverWaitedProcessIsKilledAndReaped) {
    LaunchOptions opts;
    opts.argv = {"sleep", "30"};
    pid_t pid = -1;
    const std::int64_t t0 = now_ns();
    {
        CountedProcess p = CountedProcess::launch(opts);
        pid = p.pid();
        EXPECT_FALSE(p.try_wait()) << "sleep 30 ended at once";
    }
    EXPECT_TRUE(reaped(pid));
    EXPECT_LT(static_cast<double>(now_ns() - t0) * 1e-9, 10.0) << "waited for sleep to end";
}

TEST(CountedProcess, TryWaitIsEmptyWhileItRunsThenTheResult) {
    LaunchOptions opts;
    opts.argv = {"sh", "-c", "sleep 0.3; exit 4"};
    CountedProcess p = CountedProcess::launch(opts);
    EXPECT_FALSE(p.try_wait());
    std::optional<CountedProcess::Result> r;
    for (int i = 0; i < 1000 && !r; ++i) {
        r = p.try_wait();
        if (!r) usleep(10'000);
    }
    ASSERT_TRUE(r) << "still running after 10 s";
    EXPECT_EQ(r->exit.exit_status, 4);
    EXPECT_GE(r->exit.wall_s, 0.29);
    EXPECT_THROW(p.try_wait(), std::logic_error);  // reaped once, never twice
}

TEST(CountedProcess, CountersThatCannotOpenLeaveTheProgramRunningAndSayWhy) {
    testing::FakePerfEventApi refused;
    refused.open_result = [](const perf_event_attr&, pid_t, int) { return -EACCES; };
    LaunchOptions opts;
    opts.argv = {"sh", "-c", "exit 5"};
    opts.api = &refused;
    const auto r = CountedProcess::launch(opts).wait();
    EXPECT_EQ(r.exit.exit_status, 5);
    EXPECT_FALSE(r.readings.value("task_clock_s")) << "a refused counter read as a value";
    EXPECT_TRUE(r.readings.value("wall_s"));
    bool said = false;
    for (const auto& w : r.readings.warnings)
        said = said || w.find("task_clock_s") != std::string::npos;
    EXPECT_TRUE(said) << "no warning names the refused counter";
}

TEST(CountedProcess, EnvironmentOverridesReplaceInheritedValuesOnce) {
    ASSERT_EQ(setenv("CEILING_TEST_REPLACED", "old", 1), 0);
    LaunchOptions opts;
    // The environment exactly as execve passed it (a shell would fold duplicates, and getenv
    // returns the first, i.e. the stale, one): a single entry, the new value.
    opts.argv = {"sh", "-c",
                 "test \"$(tr '\\0' '\\n' < /proc/$$/environ | grep '^CEILING_TEST_REPLACED=')\" "
                 "= CEILING_TEST_REPLACED=new"};
    opts.env_overrides = {"CEILING_TEST_REPLACED=new"};
    EXPECT_EQ(CountedProcess::launch(opts).wait().exit.exit_status, 0);
    unsetenv("CEILING_TEST_REPLACED");
}

}  // namespace
}  // namespace ceiling::collectors
