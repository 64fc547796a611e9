// perf_event software events give real values in this VM: task-clock follows the CPU time
// of the counted threads, page faults grow with newly touched memory.

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/resource.h>

#include <atomic>
#include <cstring>
#include <ctime>
#include <thread>
#include <vector>

#include "collectors/clock.hpp"
#include "collectors/software_events.hpp"

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

TEST(SoftwareEvents, TaskClockOfTwoBusyThreadsIsAboutTwiceTheWallTime) {
    skip_without_software_events();
    SoftwareEventCollector c(CountTarget::this_process());
    const double cpu_before = process_cpu_s();
    c.start();
    // Threads created after start(): counted through inheritance.
    const std::int64_t t0 = now_ns();
    std::vector<double> burnt(2);
    std::vector<std::thread> team;
    for (int i = 0; i < 2; ++i) team.emplace_back([&burnt, i] { burnt[i] = burn_cpu(0.4); });
    for (auto& t : team) t.join();
    const double wall = static_cast<double>(now_ns() - t0) * 1e-9;
    const Readings r = c.stop();
    const double cpu = process_cpu_s() - cpu_before;

    const auto task_clock = r.value("task_clock_s");
    ASSERT_TRUE(task_clock) << "task-clock absent";
    const double threads_cpu = burnt[0] + burnt[1];
    // Task-clock is the counted threads' CPU time: it agrees with their own clocks and
    // with rusage over the same interval (both within scheduling-tick slack).
    EXPECT_NEAR(*task_clock, threads_cpu, 0.05 * threads_cpu + 0.02);
    EXPECT_NEAR(*task_clock, cpu, 0.1 * cpu + 0.03);
    // Two threads busy at once: about 2 CPU-seconds per second of wall time. The lower
    // bound is generous because the two shared cores may be busy with other work.
    const unsigned cpus = std::thread::hardware_concurrency();
    if (cpus >= 2) {
        EXPECT_GT(*task_clock / wall, 1.3) << "task-clock " << *task_clock << " s, wall " << wall << " s";
        EXPECT_LT(*task_clock / wall, 2.1) << "task-clock " << *task_clock << " s, wall " << wall << " s";
    }
    EXPECT_TRUE(r.find("context_switches"));
    EXPECT_TRUE(r.find("cpu_migrations"));
    EXPECT_EQ(r.find("task_clock_s")->unit, "s");
    EXPECT_FALSE(r.find("task_clock_s")->running_fraction) << "software events never multiplex";
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
