// perf_event software events give real values in this VM: task-clock follows the CPU time
// of the counted threads, each newly touched page is one page fault, and the probe agrees with
// what opening the events does. Refusals (through the fake seam) say why and how to fix, and
// never read as zeros.

#include "collectors/software_events.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "collectors/clock.hpp"
#include "tests/unit/collectors/fake_perf_event_api.hpp"
#include "tests/unit/collectors/host_steal.hpp"

namespace ceiling::collectors {
namespace {

using testing::expect_task_clock_matches;
using testing::host_steal_s;

double thread_cpu_s() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Spins until this thread has had `seconds` of CPU time; returns what it measured.
double burn_cpu(double seconds) {
    const double start = thread_cpu_s();
    volatile double x = 1;
    while (thread_cpu_s() - start < seconds)
        for (int i = 0; i < 10000; ++i) x = x * 1.0000001 + 1e-9;
    return thread_cpu_s() - start;
}

// CPU time every task on the machine spent busy (user, nice, system, irq, softirq,
// steal), from the first line of /proc/stat.
double machine_busy_s() {
    std::FILE* f = std::fopen("/proc/stat", "r");
    if (!f) return 0;
    unsigned long long v[8] = {};
    const int n = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                              &v[3], &v[4], &v[5], &v[6], &v[7]);
    std::fclose(f);
    if (n < 8) return 0;
    const double busy = static_cast<double>(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]);
    return busy / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double process_cpu_s() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    auto s = [](const timeval& tv) {
        return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6;
    };
    return s(ru.ru_utime) + s(ru.ru_stime);
}

void skip_without_software_events() {
    if (const Capability c = probe_software_events(); !c.available)
        GTEST_SKIP() << "perf_event software events unavailable here: " << c.reason;
}

TEST(SoftwareEvents, TableIsConsistent) {
    for (const auto& e : software_events()) {
        EXPECT_EQ(find_software_event(e.name), &e);
        EXPECT_EQ(find_software_event(e.perf_name), &e);
        EXPECT_GT(e.scale, 0);
    }
    EXPECT_EQ(find_software_event("cycles"), nullptr);
}

// ---- refusals, through the fake seam ------------------------------------------------------

PerfEnvironment environment_with_paranoid(int level) {
    PerfEnvironment env;
    env.paranoid = level;
    env.virtual_machine = true;
    return env;
}

TEST(SoftwareEvents, RefusedSaysWhyAndHowToFix) {
    // Debian's perf_event_paranoid=3: every open refused with EACCES.
    testing::FakePerfEventApi api;
    api.open_result = [](const perf_event_attr&, pid_t, int) { return -EACCES; };
    const PerfEnvironment env = environment_with_paranoid(3);
    const Capability c = probe_software_events(api, &env);
    EXPECT_FALSE(c.available);
    EXPECT_NE(c.reason.find("perf_event_paranoid=3"), std::string::npos) << c.reason;
    EXPECT_FALSE(c.fix.empty());
    EXPECT_EQ(api.open_count(), 0u);

    // A kernel without perf_event_open (gVisor, CONFIG_PERF_EVENTS=n).
    testing::FakePerfEventApi none;
    none.open_result = [](const perf_event_attr&, pid_t, int) { return -ENOSYS; };
    const Capability n = probe_software_events(none, &env);
    EXPECT_FALSE(n.available);
    EXPECT_NE(n.reason.find("not available"), std::string::npos) << n.reason;
}

TEST(SoftwareEvents, ACollectorThatCannotOpenThrowsTheReasonInsteadOfReadingZeros) {
    testing::FakePerfEventApi api;
    api.open_result = [](const perf_event_attr&, pid_t, int) { return -EPERM; };
    SoftwareEventCollector c(CountTarget::calling_thread(), api);
    EXPECT_FALSE(c.probe().available);
    EXPECT_FALSE(c.probe().reason.empty());
    try {
        c.start();
        FAIL() << "start() counted nothing and did not say so";
    } catch (const CollectorError& e) {
        EXPECT_FALSE(e.capability.available);
        EXPECT_FALSE(e.capability.reason.empty());
        EXPECT_NE(std::string(e.what()).find(e.capability.reason), std::string::npos) << e.what();
    }
    EXPECT_TRUE(c.stop().values.empty());  // never started: nothing, not zeros
}

TEST(SoftwareEvents, KernelModeRefusedFallsBackToUserSpaceAndSaysSo) {
    // perf_event_paranoid=2 without CAP_PERFMON: kernel-mode counting refused, user space allowed.
    testing::FakePerfEventApi api;
    api.open_result = [](const perf_event_attr& a, pid_t, int) {
        return a.exclude_kernel ? 0 : -EACCES;
    };
    const PerfEnvironment env = environment_with_paranoid(2);
    const Capability c = probe_software_events(api, &env);
    EXPECT_TRUE(c.available) << c.reason;
    EXPECT_NE(c.reason.find("kernel-mode work excluded"), std::string::npos) << c.reason;
}

TEST(SoftwareEvents, ReadingsAreTheTableEventsInTheirUnits) {
    // The fake counts task-clock in nanoseconds like the kernel: 1.5e9 ns is 1.5 s.
    testing::FakePerfEventApi api;
    api.count = [](const perf_event_attr& a) {
        const std::uint64_t v = a.config == PERF_COUNT_SW_TASK_CLOCK    ? 1'500'000'000
                                : a.config == PERF_COUNT_SW_PAGE_FAULTS ? 4096
                                                                        : 7;
        return RawCount{v, 1000, 1000};
    };
    SoftwareEventCollector c(CountTarget::calling_thread(), api);
    c.start();
    ASSERT_EQ(api.opened.size(), software_events().size());
    for (const auto& o : api.opened) {
        EXPECT_EQ(o.attr.type, PERF_TYPE_SOFTWARE);
        EXPECT_TRUE(o.enabled);
    }
    const Readings r = c.stop();
    EXPECT_EQ(r.value("task_clock_s"), 1.5);
    EXPECT_EQ(r.value("page_faults"), 4096);
    EXPECT_EQ(r.value("context_switches"), 7);
    EXPECT_EQ(r.value("cpu_migrations"), 7);
    EXPECT_EQ(api.open_count(), 0u) << "stop() leaves counters open";
}

// ---- this machine ----------------------------------------------------------------------------

TEST(SoftwareEvents, ProbeAgreesWithWhatTheKernelDoes) {
    // Whatever the probe says must be what opening the events really does: available means the
    // collector counts, unavailable means the kernel refused, for a reason that is said.
    const Capability c = probe_software_events();
    SoftwareEventCollector collector(CountTarget::calling_thread());
    if (c.available) {
        ASSERT_NO_THROW(collector.start());
        burn_cpu(0.01);
        const Readings r = collector.stop();
        ASSERT_TRUE(r.value("task_clock_s")) << "probe said available, nothing was counted";
        EXPECT_GT(*r.value("task_clock_s"), 0.005);
        return;
    }
    EXPECT_FALSE(c.reason.empty());
    EXPECT_THROW(collector.start(), CollectorError);
    // The refusal is the environment's (permission, no perf_event), never EINVAL: an
    // attribute the kernel rejects is our bug, not a machine without software events.
    const auto set = PerfEventSet::open(CountTarget::calling_thread(), software_counter_specs());
    ASSERT_FALSE(set.failures().empty());
    const int err = set.failures().front().error;
    EXPECT_TRUE(err == EACCES || err == EPERM || err == ENOSYS || err == ENOENT)
        << "perf_event_open: " << std::strerror(err) << "; probe said: " << c.reason;
}

struct TwoThreadRun {
    std::optional<double> task_clock;
    double threads_cpu = 0;  // what the two threads' own CPU clocks say
    double process_cpu = 0;  // rusage of this process over the same interval
    double others = 0;       // CPU time every other task on the machine used meanwhile
    double steal = 0;        // CPU time the host gave other guests meanwhile
    double wall = 0;
    Readings readings;
};

TwoThreadRun run_two_busy_threads() {
    TwoThreadRun run;
    SoftwareEventCollector c(CountTarget::this_process());
    const double cpu_before = process_cpu_s();
    const double machine_before = machine_busy_s();
    const double steal_before = host_steal_s();
    c.start();
    // Threads created after start(): counted through inheritance.
    const std::int64_t t0 = now_ns();
    std::vector<double> burnt(2);
    std::vector<std::thread> team;
    for (int i = 0; i < 2; ++i) team.emplace_back([&burnt, i] { burnt[i] = burn_cpu(0.4); });
    for (auto& t : team) t.join();
    run.wall = static_cast<double>(now_ns() - t0) * 1e-9;
    run.readings = c.stop();
    run.steal = host_steal_s() - steal_before;
    run.process_cpu = process_cpu_s() - cpu_before;
    run.others = machine_busy_s() - machine_before - run.process_cpu;
    run.task_clock = run.readings.value("task_clock_s");
    run.threads_cpu = burnt[0] + burnt[1];
    return run;
}

TEST(SoftwareEvents, TaskClockOfTwoBusyThreadsIsAboutTwiceTheWallTime) {
    skip_without_software_events();
    // Two threads busy at once: about 2 CPU-seconds per second of wall time, when two CPUs
    // are free for them. Other work on the machine (a parallel build on two shared cores)
    // takes CPU time from them, which /proc/stat shows; such attempts are retried, and
    // when every attempt was crowded the ratio is not judged.
    const bool two_cpus = std::thread::hardware_concurrency() >= 2;
    std::string crowded;
    for (int attempt = 0; attempt < 3; ++attempt) {
        const TwoThreadRun run = run_two_busy_threads();
        ASSERT_TRUE(run.task_clock) << "task-clock absent";
        // Task-clock is the counted threads' CPU time: it agrees with their own clocks and
        // with rusage over the same interval, within the same slack (scheduling ticks, and the
        // process's own thread start-up and joins, which its threads' clocks leave out: 12 %
        // was seen with a parallel build beside it).
        expect_task_clock_matches(*run.task_clock, run.threads_cpu, 0.1 * run.threads_cpu + 0.03,
                                  run.steal);
        expect_task_clock_matches(*run.task_clock, run.process_cpu, 0.1 * run.process_cpu + 0.03,
                                  run.steal);
        EXPECT_TRUE(run.readings.find("context_switches"));
        EXPECT_TRUE(run.readings.find("cpu_migrations"));
        EXPECT_EQ(run.readings.find("task_clock_s")->unit, "s");
        EXPECT_FALSE(run.readings.find("task_clock_s")->running_fraction)
            << "software events never multiplex";
        if (!two_cpus) GTEST_SKIP() << "one CPU: two threads cannot run at once";
        const double ratio = *run.task_clock / run.wall;
        if (ratio >= 1.3) {
            EXPECT_LT(ratio, 2.1) << "task-clock " << *run.task_clock << " s, wall " << run.wall
                                  << " s";
            return;
        }
        if (run.others < 0.25 * run.wall) {
            ADD_FAILURE() << "task-clock " << *run.task_clock << " s over " << run.wall
                          << " s wall (ratio " << ratio << ") while the machine was otherwise idle";
            return;
        }
        crowded +=
            " " + std::to_string(ratio) + " (others used " + std::to_string(run.others) + " CPU-s)";
    }
    GTEST_SKIP() << "the machine was busy with other work in every attempt; task-clock/wall:"
                 << crowded;
}

TEST(SoftwareEvents, TaskClockIsTheBusyLoopsCpuTime) {
    skip_without_software_events();
    // The thread's own CPU clock and task-clock read the same scheduler accounting; they differ
    // by what runs between start() and the loop (a few system calls) and, on a crowded
    // machine, by the switching in and out that task-clock counts (6 % seen beside a build).
    // Either way far from the wall time a preempted loop would take.
    SoftwareEventCollector c(CountTarget::calling_thread());
    const double steal_before = host_steal_s();
    c.start();
    const double burnt = burn_cpu(0.3);
    const Readings r = c.stop();
    const double steal = host_steal_s() - steal_before;
    ASSERT_TRUE(r.value("task_clock_s"));
    expect_task_clock_matches(*r.value("task_clock_s"), burnt, 0.1 * burnt + 0.005, steal);
}

TEST(SoftwareEvents, CallingThreadScopeLeavesOtherThreadsOut) {
    skip_without_software_events();
    SoftwareEventCollector c(CountTarget::calling_thread());
    c.start();
    std::thread other([] { burn_cpu(0.2); });
    other.join();
    const Readings r = c.stop();
    ASSERT_TRUE(r.value("task_clock_s"));
    EXPECT_LT(*r.value("task_clock_s"), 0.1) << "the other thread's 0.2 s was counted";
}

#if defined(__SANITIZE_ADDRESS__)
// ASan checks one shadow byte per 8 bytes written: a page of shadow per 8 pages touched.
constexpr double shadow_faults_per_page = 1.0 / 8;
#else
constexpr double shadow_faults_per_page = 0;
#endif

double faults_touching(std::size_t bytes) {
    SoftwareEventCollector c(CountTarget::calling_thread());
    c.start();
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return -1;
    madvise(p, bytes, MADV_NOHUGEPAGE);  // one fault per 4 KiB page
    for (std::size_t i = 0; i < bytes; i += 4096) static_cast<volatile char*>(p)[i] = 1;
    const Readings r = c.stop();
    munmap(p, bytes);
    return r.value("page_faults").value_or(-1);
}

TEST(SoftwareEvents, PageFaultsGrowWithNewlyTouchedMemory) {
    skip_without_software_events();
    const double small = faults_touching(8u << 20);   // 2048 pages
    const double large = faults_touching(32u << 20);  // 8192 pages
    // One fault per fresh page, counted on this thread only: the mmap, madvise and the
    // collector's own calls add a handful, never a page's worth per page.
    EXPECT_GE(small, 2048);
    EXPECT_LE(small, 2048 * (1 + shadow_faults_per_page) + 64);
    EXPECT_GE(large, 8192);
    EXPECT_LE(large, 8192 * (1 + shadow_faults_per_page) + 64);
}

}  // namespace
}  // namespace ceiling::collectors
