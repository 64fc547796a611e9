#pragma once
// The CPU and memory limits of a process's control group (a container's, a Kubernetes pod's,
// a systemd slice's) and how often the CPU limit held it back. A container on a 64-CPU host
// with a 4-CPU quota sees 64 CPUs (sched_getaffinity, hwloc); its threads run on many of them
// at once until the quota of the period (100 ms by default) is spent, then all wait for the
// next period: throughput is at most the quota, and every period may end in a stall.
//
// cgroup v2: cpu.max ("QUOTA PERIOD" or "max PERIOD"), cpu.stat (nr_periods, nr_throttled,
// throttled_usec), memory.max and memory.high (the lower). cgroup v1: the cpu controller's
// cpu.cfs_quota_us (-1: none) and cpu.cfs_period_us, cpu.stat (throttled_time in ns), the memory
// controller's memory.limit_in_bytes. A limit is the tightest over the group and the ancestors
// visible in its mount. Where a v1 controller is mounted it is read; otherwise the v2 hierarchy
// (hybrid hosts mount both). Everything is read through an FsRoot.

#include <optional>
#include <string>
#include <string_view>

#include "collectors/fs_root.hpp"

namespace ceiling::collectors {

struct CpuQuota {
    double cpus = 0;        // quota / period: the CPUs' worth of time per period
    double period_s = 0;    // the period the quota renews at
    std::string group;      // the group that sets it, as /proc/PID/cgroup names it
    std::string stat_path;  // its cpu.stat (a path on the described machine)
    int version = 0;        // 1 or 2
};

struct CgroupLimits {
    std::optional<CpuQuota> cpu;  // absent: no quota (or no cgroup readable)
    std::optional<double> memory_limit_bytes;
    std::string memory_group;
};

// The limits of `pid`'s groups ("self" for the caller).
CgroupLimits read_cgroup_limits(const FsRoot& root, std::string_view pid = "self");

// Periods in which the group was runnable, those in which it ran out of quota, and the time
// it was held off the CPUs (summed over its CPUs' run queues, not wall time).
struct CpuThrottling {
    double periods = 0;
    double throttled_periods = 0;
    double throttled_s = 0;
};
std::optional<CpuThrottling> parse_cpu_stat(std::string_view text, int version);
std::optional<CpuThrottling> read_cpu_throttling(const FsRoot& root, const CpuQuota& quota);
// after - before, each field at least 0.
CpuThrottling throttling_delta(const CpuThrottling& before, const CpuThrottling& after);

}  // namespace ceiling::collectors
