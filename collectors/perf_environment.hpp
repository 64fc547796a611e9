#pragma once
// What the kernel lets this process count, read from /proc and /sys (through FsRoot):
// perf_event_paranoid, CAP_PERFMON / CAP_SYS_ADMIN, whether a CPU PMU is registered,
// whether this is a VM. And the table that turns a perf_event_open errno into a reason
// and a fix the user can act on.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/capability.hpp"
#include "collectors/fs_root.hpp"

namespace ceiling::collectors {

struct PerfEnvironment {
    std::optional<int> paranoid;  // /proc/sys/kernel/perf_event_paranoid; absent: no perf_events
    bool cap_perfmon = false;     // CAP_PERFMON (Linux 5.8+) or CAP_SYS_ADMIN bypass paranoid
    bool cap_sys_admin = false;
    bool virtual_machine = false;            // the "hypervisor" CPUID flag in /proc/cpuinfo
    std::string hypervisor;                  // e.g. "QEMU", "Amazon EC2", "Xen"; empty when unknown
    std::vector<std::string> event_sources;  // /sys/bus/event_source/devices
    std::vector<std::string> cpu_pmus;       // those of them that are core PMUs ("cpu", ...)
    std::string cpu_vendor;                  // "GenuineIntel", "AuthenticAMD"
    std::optional<int> cpu_family, cpu_model;
    std::string cpu_model_name;

    bool privileged() const { return cap_perfmon || cap_sys_admin; }
    // Per-process events that also count kernel mode (paranoid <= 1).
    bool kernel_counting_allowed() const { return privileged() || (paranoid && *paranoid <= 1); }
    // CPU-wide events: uncore memory controllers, RAPL (paranoid <= 0).
    bool system_wide_allowed() const { return privileged() || (paranoid && *paranoid <= 0); }
    bool has_cpu_pmu() const { return !cpu_pmus.empty(); }
};

PerfEnvironment read_perf_environment(const FsRoot& root = FsRoot::system());

// What each perf_event_paranoid level lets an unprivileged process do.
std::string_view paranoid_meaning(int level);

// What kind of event an open failed for: the same errno means different things.
enum class EventScope { software, hardware, system_wide };

// Turns a failed perf_event_open (errno, positive) into a reason and a fix.
Capability explain_open_error(int error, EventScope scope, const PerfEnvironment& env);

}  // namespace ceiling::collectors
