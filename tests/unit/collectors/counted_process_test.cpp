// Counting a program from exec: a wrapped child that spawns threads and a grandchild
// process is fully counted; exit statuses follow the shell's conventions.

#include "collectors/counted_process.hpp"

#include <gtest/gtest.h>

#include "collectors/software_events.hpp"

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
    CountedProcess p = CountedProcess::launch(opts);
    const CountedProcess::Result r = p.wait();
    ASSERT_EQ(r.exit.exit_status, 0);

    const auto task_clock = r.readings.value("task_clock_s");
    ASSERT_TRUE(task_clock);
    // Every thread and process counted: at least the 1.0 s burnt, plus start-up slack.
    EXPECT_GE(*task_clock, 0.97);
    EXPECT_LE(*task_clock, 1.25);
    // The kernel's accounting of the same tree agrees (wait4 covers waited-for children).
    const double cpu = r.exit.usage.user_s.value_or(0) + r.exit.usage.system_s.value_or(0);
    EXPECT_NEAR(*task_clock, cpu, 0.1 * cpu + 0.03);
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

TEST(GatedChild, NeverReleasedChildRunsNothing) {
    // Destroying the gate without release: the child exits without exec.
    { GatedChild child = GatedChild::fork({"sh", "-c", "exit 3"}); }
    SUCCEED();
}

}  // namespace
}  // namespace ceiling::collectors
