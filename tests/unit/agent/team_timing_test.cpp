// How a team of threads is timed. Work on something the threads share (DRAM) counts only
// what they do together: threads that ran one after another (a vCPU the hypervisor held back)
// must not be counted as if they had run at once.
#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "agent/machine/repeat.hpp"
#include "collectors/clock.hpp"
#include "kernels/parallel.hpp"

namespace ceiling::measure {
namespace {

void spin_for(double s) {
    const double end = collectors::now_s() + s;
    while (collectors::now_s() < end) {
    }
}

TEST(TeamTiming, WallTimeCountsThreadsThatRanOneAfterAnother) {
    if (kernels::available_cpus() < 2) GTEST_SKIP() << "needs 2 CPUs";
    // Thread 1 works only after thread 0 is done, sleeping meanwhile: 2 x 30 ms of work in
    // sequence. Each thread's CPU time is ~30 ms; the team needed ~60 ms.
    std::atomic<bool> first_done{false};
    auto sequential = [&](int t) {
        if (t == 0) {
            spin_for(0.03);
            first_done = true;
        } else {
            while (!first_done) std::this_thread::sleep_for(std::chrono::microseconds(100));
            spin_for(0.03);
        }
    };
    const double wall = team_wall_seconds(2, [&](int t) { sequential(t); });
    EXPECT_GE(wall, 0.058);
    EXPECT_LT(wall, 1.0);
}

// Spins until this thread has used `s` seconds of CPU: the same CPU time however busy the
// machine is.
void spin_cpu_for(double s) {
    const std::int64_t end = collectors::thread_cpu_ns() + static_cast<std::int64_t>(s * 1e9);
    while (collectors::thread_cpu_ns() < end) {
    }
}

TEST(TeamTiming, CpuTimeAddsTheThreadsRatesNotTheSlowestOnes) {
    if (kernels::available_cpus() < 2) GTEST_SKIP() << "needs 2 CPUs";
    // The same work on two cores, one of them twice as slow (20 and 40 ms of CPU): the team
    // did 2 works at 1/20 + 1/40 per ms, so its time is 2 / (1/20 + 1/40) = 26.7 ms. The
    // slowest thread's 40 ms would call the fast core as slow as the other.
    const double s = team_cpu_seconds(2, [](int t) { spin_cpu_for(t == 0 ? 0.02 : 0.04); });
    EXPECT_NEAR(s, 2 / (1 / 0.02 + 1 / 0.04), 0.004);
}

TEST(TeamTiming, OneThreadIsItsOwnDuration) {
    const double wall = team_wall_seconds(1, [](int) { spin_for(0.02); });
    EXPECT_GE(wall, 0.0199);
    EXPECT_LT(wall, 1.0);
}

}  // namespace
}  // namespace ceiling::measure
