// Event sets over a fake perf_event seam: multiplexing scaled and flagged, too many events
// multiplexed with a warning (never dropped), the user-space-only fallback under
// perf_event_paranoid=2, failures explained.

#include "collectors/perf_events.hpp"

#include <gtest/gtest.h>

#include "tests/unit/collectors/fake_perf_event_api.hpp"

namespace ceiling::collectors {
namespace {

using testing::FakePerfEventApi;

CounterSpec hardware_spec(const std::string& name, std::uint64_t config) {
    CounterSpec s;
    s.name = name;
    s.encoding = {PERF_TYPE_RAW, config, 0, 0};
    s.source = ReadingSource::pmu;
    s.scope = EventScope::hardware;
    return s;
}

PerfEnvironment vm_environment() {
    PerfEnvironment env;
    env.paranoid = 2;
    env.virtual_machine = true;
    env.hypervisor = "QEMU";
    return env;
}

TEST(CounterScaling, ScalesByEnabledOverRunningTime) {
    // Counted 250 ns of 1000 ns enabled: 4000 counted -> 4000 x 1000 / 250 = 16000.
    const auto s = scale_count({4000, 1000, 250});
    ASSERT_TRUE(s.value);
    EXPECT_DOUBLE_EQ(*s.value, 16000);
    ASSERT_TRUE(s.running_fraction);
    EXPECT_DOUBLE_EQ(*s.running_fraction, 0.25);
    EXPECT_TRUE(s.low_confidence) << "25% < the 50% default threshold";

    // 600 of 1000 ns: 3000 x 1000 / 600 = 5000, above the threshold.
    const auto ok = scale_count({3000, 1000, 600});
    EXPECT_DOUBLE_EQ(*ok.value, 5000);
    EXPECT_FALSE(ok.low_confidence);

    // Not multiplexed: the raw count, no running fraction.
    const auto exact = scale_count({1234, 500, 500});
    EXPECT_DOUBLE_EQ(*exact.value, 1234);
    EXPECT_FALSE(exact.running_fraction);
}

TEST(CounterScaling, NeverRunningOrNeverEnabledIsAbsentNotZero) {
    EXPECT_FALSE(scale_count({0, 1000, 0}).value) << "multiplexed out the whole time";
    EXPECT_FALSE(scale_count({0, 0, 0}).value) << "never enabled";
    EXPECT_FALSE(scale_count({0, 0, 0}).note.empty());
    // A counter that ran and counted nothing is a real zero.
    const auto zero = scale_count({0, 1000, 1000});
    ASSERT_TRUE(zero.value);
    EXPECT_EQ(*zero.value, 0);
}

TEST(CounterScaling, SumsPerThreadCountersEachScaledByItsOwnTimes) {
    // Thread A: 100 counted in 50 of 100 ns -> 200. Thread B: 300 in 100 of 100 -> 300.
    // Total 500; ran 150 of 200 ns -> running fraction 0.75.
    const RawCount raws[] = {{100, 100, 50}, {300, 100, 100}};
    const auto s = scale_and_sum(raws);
    EXPECT_DOUBLE_EQ(*s.value, 500);
    EXPECT_DOUBLE_EQ(*s.running_fraction, 0.75);
}

TEST(PerfEventSet, TooManyEventsAreMultiplexedWithAWarningNeverDropped) {
    FakePerfEventApi api;
    // The kernel gives each of 12 events half the time on 8 counters... as the fake says.
    api.count = [](const perf_event_attr& a) { return RawCount{a.config * 10, 1000, 600}; };
    std::vector<CounterSpec> specs;
    for (std::uint64_t i = 1; i <= 12; ++i)
        specs.push_back(hardware_spec("e" + std::to_string(i), i));
    PerfEventSetOptions opts;
    opts.hardware_counters = 8;
    const PerfEnvironment env = vm_environment();
    opts.environment = &env;
    auto set = PerfEventSet::open(CountTarget::calling_thread(), specs, api, opts);
    EXPECT_EQ(set.opened(), 12u);
    set.enable();
    const Readings r = set.read();
    ASSERT_EQ(r.values.size(), 12u) << "an event was dropped";
    // e3: 30 counted in 600 of 1000 ns -> 30 x 1000 / 600 = 50.
    ASSERT_TRUE(r.find("e3"));
    EXPECT_DOUBLE_EQ(r.find("e3")->value, 50);
    EXPECT_DOUBLE_EQ(*r.find("e3")->running_fraction, 0.6);
    bool warned_before = false, warned_after = false;
    for (const auto& w : r.warnings) {
        warned_before |= w.find("12 hardware events for 8 counters") != std::string::npos;
        warned_after |= w.find("multiplexed") != std::string::npos;
    }
    EXPECT_TRUE(warned_before);
    EXPECT_TRUE(warned_after);
}

TEST(PerfEventSet, FallsBackToUserSpaceOnlyUnderParanoid2) {
    FakePerfEventApi api;
    // An unprivileged process under perf_event_paranoid=2: kernel-mode counting refused.
    api.open_result = [](const perf_event_attr& a, pid_t, int) {
        return a.exclude_kernel ? 0 : -EACCES;
    };
    const PerfEnvironment env = vm_environment();
    PerfEventSetOptions opts;
    opts.environment = &env;
    auto set = PerfEventSet::open(
        CountTarget::calling_thread(),
        {hardware_spec("cycles", 0x3c), hardware_spec("instructions", 0xc0)}, api, opts);
    EXPECT_EQ(set.opened(), 2u);
    EXPECT_TRUE(set.user_space_only());
    EXPECT_TRUE(set.failures().empty());
    for (const auto& o : api.opened) EXPECT_TRUE(o.attr.exclude_kernel);
    const Readings r = set.read();
    ASSERT_TRUE(r.find("cycles"));
    EXPECT_NE(r.find("cycles")->note.find("user space only"), std::string::npos);
}

TEST(PerfEventSet, UnopenableEventIsAbsentWithTheReasonAndTheRestCount) {
    FakePerfEventApi api;
    // No PMU in this VM: hardware events fail with ENOENT, software ones open.
    api.open_result = [](const perf_event_attr& a, pid_t, int) {
        return a.type == PERF_TYPE_SOFTWARE ? 0 : -ENOENT;
    };
    CounterSpec sw;
    sw.name = "task_clock_s";
    sw.encoding = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 0, 0};
    sw.scale = 1e-9;
    sw.unit = "s";
    const PerfEnvironment env = vm_environment();
    PerfEventSetOptions opts;
    opts.environment = &env;
    auto set = PerfEventSet::open(CountTarget::calling_thread(),
                                  {hardware_spec("cycles", 0x3c), sw}, api, opts);
    ASSERT_EQ(set.failures().size(), 1u);
    EXPECT_EQ(set.failures()[0].counter, "cycles");
    EXPECT_EQ(set.failures()[0].explanation.reason, "no CPU PMU exposed in this VM (QEMU)");
    EXPECT_NE(set.failures()[0].explanation.fix.find("virtual PMU"), std::string::npos);
    const Readings r = set.read();
    EXPECT_FALSE(r.find("cycles")) << "an unmeasurable value must be absent, never 0";
    ASSERT_TRUE(r.find("task_clock_s"));
    EXPECT_DOUBLE_EQ(r.find("task_clock_s")->value, 1000 * 1e-9);
    ASSERT_FALSE(r.warnings.empty());
    EXPECT_NE(r.warnings[0].find("cannot count cycles"), std::string::npos);
}

TEST(PerfEventSet, ExecChildCountersAreArmedForExecAndInherited) {
    FakePerfEventApi api;
    auto set =
        PerfEventSet::open(CountTarget::exec_child(4242), {hardware_spec("cycles", 0x3c)}, api);
    ASSERT_EQ(api.opened.size(), 1u);
    const auto& a = api.opened[0].attr;
    EXPECT_EQ(api.opened[0].pid, 4242);
    EXPECT_EQ(api.opened[0].cpu, -1);
    EXPECT_TRUE(a.disabled);
    EXPECT_TRUE(a.enable_on_exec);
    EXPECT_TRUE(a.inherit);
    EXPECT_EQ(a.read_format, PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING);
}

TEST(PerfEventSet, CpuWideCountersOpenOnePerCpuAndSum) {
    FakePerfEventApi api;
    api.count = [](const perf_event_attr&) { return RawCount{100, 10, 10}; };
    CounterSpec cas = hardware_spec("cas", 0xcf05);
    cas.scope = EventScope::system_wide;
    auto set = PerfEventSet::open(CountTarget::cpu_wide({0, 56}), {cas}, api);
    ASSERT_EQ(api.opened.size(), 2u);
    EXPECT_EQ(api.opened[0].pid, -1);
    EXPECT_EQ(api.opened[1].cpu, 56);
    EXPECT_DOUBLE_EQ(set.read().find("cas")->value, 200);
}

TEST(PerfEventSet, ClosesEveryCounterAndSurvivesAMove) {
    FakePerfEventApi api;
    {
        auto set = PerfEventSet::open(CountTarget::calling_thread(),
                                      {hardware_spec("a", 1), hardware_spec("b", 2)}, api);
        PerfEventSet moved = std::move(set);
        moved.enable();
        EXPECT_EQ(api.open_count(), 2u);
        EXPECT_TRUE(api.opened[0].enabled);
    }
    EXPECT_EQ(api.open_count(), 0u);
}

}  // namespace
}  // namespace ceiling::collectors
