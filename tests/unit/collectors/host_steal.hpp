#pragma once
// Time the hypervisor gave to other guests, for tests that compare perf's task-clock with
// the kernel's CPU-time accounting. Inside a VM, task-clock counts a task's time on a CPU as
// the guest's clock sees it, time stolen by the host included, while rusage and the CPU
// clocks (sum_exec_runtime) leave steal out: on a host that steals, task-clock reads more
// than they do. Seen here: task-clock 18-23 % above them in full test runs on a VM whose
// steal rose meanwhile, while with the guest's own CPUs oversubscribed and no steal the two
// agreed within 0.1 %. A comparison allows for the steal measured over its interval.

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <unistd.h>

#include "collectors/process_accounting.hpp"

namespace ceiling::collectors::testing {

// Steal so far, summed over this guest's CPUs, in seconds (0 when /proc/stat has none).
inline double host_steal_s() {
    std::ifstream f("/proc/stat");
    std::stringstream text;
    text << f.rdbuf();
    const auto ticks = parse_host_cpu_ticks(text.str());
    return ticks ? ticks->steal / static_cast<double>(sysconf(_SC_CLK_TCK)) : 0.0;
}

// task-clock against a CPU time the kernel accounts: within `slack` below, and above by at
// most the slack plus the host's steal over the same interval.
inline void expect_task_clock_matches(double task_clock, double cpu, double slack, double steal) {
    EXPECT_GE(task_clock, cpu - slack) << "cpu " << cpu;
    EXPECT_LE(task_clock, cpu + slack + steal) << "cpu " << cpu << ", host steal " << steal << " s";
}

}  // namespace ceiling::collectors::testing
