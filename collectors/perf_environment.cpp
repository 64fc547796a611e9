#include "collectors/perf_environment.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "collectors/process_accounting.hpp"

namespace ceiling::collectors {

namespace {

// Capability bits (linux/capability.h).
constexpr int cap_sys_admin_bit = 21;
constexpr int cap_perfmon_bit = 38;

// Names under /sys/bus/event_source/devices that are a core PMU: "cpu" on Intel and AMD,
// "cpu_core"/"cpu_atom" on hybrid Intel parts.
constexpr std::string_view core_pmu_names[] = {"cpu", "cpu_core", "cpu_atom"};

struct ParanoidRow {
    int level;
    std::string_view meaning;
};
constexpr ParanoidRow paranoid_rows[] = {
    {-1, "every user may count everything: per-process and CPU-wide events, kernel and user mode"},
    {0,
     "every user may count per-process and CPU-wide events (uncore, RAPL), kernel and user "
     "mode"},
    {1,
     "unprivileged users may count per-process events in kernel and user mode; CPU-wide "
     "events (uncore, RAPL) need CAP_PERFMON"},
    {2,
     "unprivileged users may count per-process events in user mode only; CPU-wide events "
     "(uncore, RAPL) need CAP_PERFMON"},
    {3, "unprivileged users may not use perf_event_open at all (Debian/Ubuntu kernel patch)"},
};

enum class When { always, vm, bare_metal, paranoid_above_2 };

struct ErrorRow {
    int error;
    std::optional<EventScope> scope;  // nullopt: any scope
    When when;
    std::string_view
        reason;  // "{p}" -> paranoid value, "{vm}" -> " (hypervisor)", "{e}" -> strerror
    std::string_view fix;
};

// First matching row wins, so specific rows come before general ones.
constexpr ErrorRow error_rows[] = {
    {ENOENT, EventScope::hardware, When::vm, "no CPU PMU exposed in this VM{vm}",
     "enable the virtual PMU in the hypervisor (QEMU/KVM: -cpu host,pmu=on; libvirt: <pmu "
     "state='on'/>; cloud: an instance type that passes the PMU through, e.g. bare metal)"},
    {EOPNOTSUPP, EventScope::hardware, When::vm, "no CPU PMU exposed in this VM{vm}",
     "enable the virtual PMU in the hypervisor (QEMU/KVM: -cpu host,pmu=on; libvirt: <pmu "
     "state='on'/>; cloud: an instance type that passes the PMU through, e.g. bare metal)"},
    {ENODEV, EventScope::hardware, When::vm, "no CPU PMU exposed in this VM{vm}",
     "enable the virtual PMU in the hypervisor (QEMU/KVM: -cpu host,pmu=on; libvirt: <pmu "
     "state='on'/>; cloud: an instance type that passes the PMU through, e.g. bare metal)"},
    {ENOENT, EventScope::hardware, When::bare_metal,
     "the kernel has no PMU driver for this CPU (no hardware events)",
     "use a kernel recent enough to support this CPU's PMU"},
    {EOPNOTSUPP, EventScope::hardware, When::bare_metal,
     "the kernel has no PMU driver for this CPU (no hardware events)",
     "use a kernel recent enough to support this CPU's PMU"},
    {ENODEV, EventScope::hardware, When::bare_metal,
     "the kernel has no PMU driver for this CPU (no hardware events)",
     "use a kernel recent enough to support this CPU's PMU"},
    {ENOENT, EventScope::system_wide, When::always, "this PMU or event does not exist here", ""},
    {EACCES, std::nullopt, When::paranoid_above_2,
     "perf_event_paranoid={p} forbids perf_event_open for unprivileged users",
     "sudo sysctl kernel.perf_event_paranoid=1 (or grant CAP_PERFMON: sudo setcap cap_perfmon+ep "
     "<path to ceiling>)"},
    {EPERM, std::nullopt, When::paranoid_above_2,
     "perf_event_paranoid={p} forbids perf_event_open for unprivileged users",
     "sudo sysctl kernel.perf_event_paranoid=1 (or grant CAP_PERFMON: sudo setcap cap_perfmon+ep "
     "<path to ceiling>)"},
    {EACCES, EventScope::system_wide, When::always,
     "CPU-wide events need perf_event_paranoid<=0 or CAP_PERFMON (perf_event_paranoid={p})",
     "sudo sysctl kernel.perf_event_paranoid=0 (or sudo setcap cap_perfmon+ep <path to ceiling>)"},
    {EPERM, EventScope::system_wide, When::always,
     "CPU-wide events need perf_event_paranoid<=0 or CAP_PERFMON (perf_event_paranoid={p})",
     "sudo sysctl kernel.perf_event_paranoid=0 (or sudo setcap cap_perfmon+ep <path to ceiling>)"},
    {EACCES, std::nullopt, When::always,
     "perf_event_open was refused (perf_event_paranoid={p}); in a container, seccomp or a "
     "missing CAP_PERFMON blocks it",
     "docker/podman: --cap-add PERFMON (or --security-opt seccomp=unconfined); otherwise sudo "
     "sysctl kernel.perf_event_paranoid=1"},
    {EPERM, std::nullopt, When::always,
     "perf_event_open was refused (perf_event_paranoid={p}); in a container, seccomp or a "
     "missing CAP_PERFMON blocks it",
     "docker/podman: --cap-add PERFMON (or --security-opt seccomp=unconfined); otherwise sudo "
     "sysctl kernel.perf_event_paranoid=1"},
    {ENOSYS, std::nullopt, When::always,
     "perf_event_open is not available (kernel without CONFIG_PERF_EVENTS, or a sandbox such as "
     "gVisor)",
     "run on a kernel with CONFIG_PERF_EVENTS=y, outside the sandbox"},
    {EBUSY, std::nullopt, When::always,
     "the PMU is in use by another tool, or the NMI watchdog holds a counter",
     "stop other profilers; sudo sysctl kernel.nmi_watchdog=0 frees a counter"},
    {EMFILE, std::nullopt, When::always, "too many open files for one counter per thread",
     "raise the limit: ulimit -n 65536"},
    {E2BIG, std::nullopt, When::always,
     "the kernel is older than the perf_event_attr this build uses", "use a newer kernel"},
    {EINVAL, EventScope::hardware, When::vm,
     "the event is not supported by this VM's virtual PMU{vm}",
     "expose the full host PMU to the guest (QEMU/KVM: -cpu host,pmu=on)"},
};

bool applies(const ErrorRow& row, int error, EventScope scope, const PerfEnvironment& env) {
    if (row.error != error) return false;
    if (row.scope && *row.scope != scope) return false;
    switch (row.when) {
        case When::always:
            return true;
        case When::vm:
            return env.virtual_machine;
        case When::bare_metal:
            return !env.virtual_machine;
        case When::paranoid_above_2:
            return !env.privileged() && env.paranoid && *env.paranoid > 2;
    }
    return false;
}

std::string substitute(std::string_view text, int error, const PerfEnvironment& env) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text.compare(i, 3, "{p}") == 0) {
            out += env.paranoid ? std::to_string(*env.paranoid) : std::string("unknown");
            i += 2;
        } else if (text.compare(i, 4, "{vm}") == 0) {
            if (!env.hypervisor.empty()) out += " (" + env.hypervisor + ")";
            i += 3;
        } else if (text.compare(i, 3, "{e}") == 0) {
            out += std::strerror(error);
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

// "key\t: value" lines of the first processor in /proc/cpuinfo.
std::optional<std::string> cpuinfo_field(std::string_view text, std::string_view key) {
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        if (line.empty()) break;  // end of the first processor's block
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        if (trim(line.substr(0, colon)) == key) return std::string(trim(line.substr(colon + 1)));
    }
    return std::nullopt;
}

}  // namespace

PerfEnvironment read_perf_environment(const FsRoot& root) {
    PerfEnvironment env;
    if (auto p = root.read_int("/proc/sys/kernel/perf_event_paranoid"))
        env.paranoid = static_cast<int>(*p);
    if (auto status = root.read_text("/proc/self/status")) {
        const auto st = parse_proc_status(*status);
        if (st.cap_effective) {
            env.cap_sys_admin = (*st.cap_effective >> cap_sys_admin_bit) & 1U;
            env.cap_perfmon = (*st.cap_effective >> cap_perfmon_bit) & 1U;
        }
    }
    env.event_sources = root.list("/sys/bus/event_source/devices");
    for (const auto& name : env.event_sources)
        if (std::find(std::begin(core_pmu_names), std::end(core_pmu_names), name) !=
            std::end(core_pmu_names))
            env.cpu_pmus.push_back(name);
    if (auto cpuinfo = root.read_text("/proc/cpuinfo")) {
        if (auto flags = cpuinfo_field(*cpuinfo, "flags"))
            env.virtual_machine = (" " + *flags + " ").find(" hypervisor ") != std::string::npos;
        env.cpu_vendor = cpuinfo_field(*cpuinfo, "vendor_id").value_or("");
        env.cpu_model_name = cpuinfo_field(*cpuinfo, "model name").value_or("");
        if (auto f = cpuinfo_field(*cpuinfo, "cpu family"))
            if (auto v = parse_int(*f)) env.cpu_family = static_cast<int>(*v);
        if (auto m = cpuinfo_field(*cpuinfo, "model"))
            if (auto v = parse_int(*m)) env.cpu_model = static_cast<int>(*v);
    }
    // The hypervisor's name, where the guest can see it (DMI on KVM/EC2/GCE, sysfs on Xen).
    if (auto xen = root.read_line("/sys/hypervisor/type"); xen && !xen->empty())
        env.hypervisor = *xen;
    else if (auto vendor = root.read_line("/sys/devices/virtual/dmi/id/sys_vendor");
             vendor && env.virtual_machine)
        env.hypervisor = *vendor;
    return env;
}

std::string_view paranoid_meaning(int level) {
    const int clamped = std::clamp(level, -1, 3);
    for (const auto& row : paranoid_rows)
        if (row.level == clamped) return row.meaning;
    return {};
}

Capability explain_open_error(int error, EventScope scope, const PerfEnvironment& env) {
    for (const auto& row : error_rows)
        if (applies(row, error, scope, env))
            return Capability::no(substitute(row.reason, error, env),
                                  substitute(row.fix, error, env));
    return Capability::no("perf_event_open failed: " + std::string(std::strerror(error)));
}

}  // namespace ceiling::collectors
