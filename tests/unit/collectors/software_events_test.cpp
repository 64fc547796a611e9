// perf_event software events give real values in this VM: task-clock follows the CPU time
// of the counted threads, page faults grow with newly touched memory.

#include "collectors/software_events.hpp"

#include <atomic>
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

namespace ceiling::collectors {
namespace {

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

TEST(SoftwareEvents, AreAvailableOnThisMachine) {
    skip_without_software_events();
    EXPECT_TRUE(probe_software_events().available);
}

struct TwoThreadRun {
    std::optional<double> task_clock;
    double threads_cpu = 0;  // what the two threads' own CPU clocks say
    double process_cpu = 0;  // rusage of this process over the same interval
    double others = 0;       // CPU time every other task on the machine used meanwhile
    double wall = 0;
    Readings readings;
};

TwoThreadRun run_two_busy_threads() {
    TwoThreadRun run;
    SoftwareEventCollector c(CountTarget::this_process());
    const double cpu_before = process_cpu_s();
    const double machine_before = machine_busy_s();
    c.start();
    // Threads created after start(): counted through inheritance.
    const std::int64_t t0 = now_ns();
    std::vector<double> burnt(2);
    std::vector<std::thread> team;
    for (int i = 0; i < 2; ++i) team.emplace_back([&burnt, i] { burnt[i] = burn_cpu(0.4); });
    for (auto& t : team) t.join();
    run.wall = static_cast<double>(now_ns() - t0) * 1e-9;
    run.readings = c.stop();
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
        // with rusage over the same interval (both within scheduling-tick slack).
        EXPECT_NEAR(*run.task_clock, run.threads_cpu, 0.05 * run.threads_cpu + 0.02);
        EXPECT_NEAR(*run.task_clock, run.process_cpu, 0.1 * run.process_cpu + 0.03);
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
    EXPECT_GE(small, 2048 * 0.95);
    EXPECT_GE(large, 8192 * 0.95);
    // Four times the memory, about four times the faults (plus a few unrelated ones).
    EXPECT_NEAR(large / small, 4.0, 0.5);
}

}  // namespace
}  // namespace ceiling::collectors
