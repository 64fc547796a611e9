#include "agent/machine/pmu_survey.hpp"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "agent/machine/pmu_self_validation.hpp"
#include "collectors/cgroup.hpp"
#include "collectors/cupti/gpu_probe.hpp"
#include "collectors/energy.hpp"
#include "collectors/papi_api.hpp"
#include "collectors/pfm_api.hpp"
#include "collectors/pmu_collector.hpp"
#include "collectors/software_events.hpp"
#include "kernels/cpu_features.hpp"

namespace ceiling::measure {

namespace {

using collectors::Capability;

struct HypervisorSignature {
    std::string_view signature;  // CPUID leaf 0x40000000, EBX:ECX:EDX
    std::string_view name;
};
constexpr HypervisorSignature hypervisors[] = {
    {"KVMKVMKVM", "KVM"},
    {"Microsoft Hv", "Hyper-V"},
    {"VMwareVMware", "VMware"},
    {"XenVMMXenVMM", "Xen"},
    {"TCGTCGTCGTCG", "QEMU TCG"},
    {"VBoxVBoxVBox", "VirtualBox"},
    {"ACRNACRNACRN", "ACRN"},
    {"bhyve bhyve ", "bhyve"},
    {" lrpepyh  vr", "Parallels"},
    {"QNXQVMBSQG", "QNX"},
    {"Linux KVM Hv", "KVM (Hyper-V enlightenments)"},
};

DoctorItem item(std::string id, std::string title, const Capability& c) {
    DoctorItem i;
    i.id = std::move(id);
    i.title = std::move(title);
    i.available = c.available;
    i.detail = c.reason;
    i.fix = c.fix;
    return i;
}

DoctorItem paranoid_item(const collectors::PerfEnvironment& env) {
    DoctorItem i;
    i.id = "perf_event_paranoid";
    i.title = "perf_event_paranoid";
    if (!env.paranoid) {
        i.available = false;
        i.detail = "/proc/sys/kernel/perf_event_paranoid absent: this kernel has no perf_events";
        i.fix = "use a kernel built with CONFIG_PERF_EVENTS=y";
        return i;
    }
    const int p = *env.paranoid;
    i.facts["value"] = p;
    i.facts["privileged"] = env.privileged();
    i.detail = std::to_string(p) + ": " + std::string(collectors::paranoid_meaning(p));
    if (env.privileged()) {
        i.available = true;
        i.detail += "; this process has CAP_PERFMON/CAP_SYS_ADMIN, so it is not restricted";
        return i;
    }
    i.available = p <= 2;
    if (p > 1)
        i.fix =
            "sudo sysctl kernel.perf_event_paranoid=1 to count kernel-mode work too, =0 for "
            "uncore and RAPL (or sudo setcap cap_perfmon+ep <path to ceiling>)";
    return i;
}

DoctorItem libpfm_item(const collectors::PfmApi& pfm, const Capability& cpu_pmu) {
    DoctorItem i;
    i.id = "libpfm4";
    i.title = "libpfm4 event encoding";
    const Capability s = pfm.status();
    if (!s.available) return item("libpfm4", "libpfm4 event encoding", s);
    i.facts["version"] = pfm.version();
    const auto model = pfm.host_pmu();
    if (!model) {
        i.available = false;
        i.detail = "libpfm4 " + pfm.version() + " detects no PMU model on this CPU";
        i.fix = cpu_pmu.available ? "a newer libpfm4 may know this CPU" : cpu_pmu.fix;
        i.facts["pmu_model"] = nullptr;
        return i;
    }
    i.facts["pmu_model"] = *model;
    const collectors::UarchEvents* t = collectors::find_uarch_events(*model);
    i.available = true;
    i.detail = "libpfm4 " + pfm.version() + ", PMU model " + *model +
               (t ? " (" + std::string(t->name) + ": FLOP and DRAM-byte events known)"
                  : " (no FLOP/byte event table: cycles and instructions only)");
    i.facts["event_table"] = t ? nlohmann::json(std::string(t->name)) : nlohmann::json(nullptr);
    return i;
}

// PAPI counts the counters of the CPU model it detects, not those the kernel lets it open:
// in a VM without a virtual PMU it reported 6 beside "CPU PMU: no". Usable only when both are.
DoctorItem papi_item(collectors::PapiApi& papi, const Capability& cpu_pmu) {
    collectors::PapiStatus s = papi.status();
    s.vm_vendor = hypervisor_name(s.vm_vendor);
    Capability cap = collectors::papi_capability(s);
    if (cap.available && !cpu_pmu.available)
        cap = Capability::no("PAPI " + s.version + " lists " + std::to_string(s.hardware_counters) +
                               " hardware counters for this CPU model, but none can be opened: " +
                               cpu_pmu.reason,
                           cpu_pmu.fix);
    DoctorItem i = item("papi", "PAPI presets", cap);
    i.facts["version"] = s.version;
    i.facts["hardware_counters"] = s.hardware_counters;
    nlohmann::json components = nlohmann::json::array();
    for (const auto& c : s.components)
        components.push_back({{"name", c.name},
                              {"enabled", !c.disabled},
                              {"disabled_reason", c.disabled ? nlohmann::json(c.disabled_reason)
                                                             : nlohmann::json(nullptr)}});
    i.facts["components"] = std::move(components);
    return i;
}

DoctorItem amx_item() {
    const auto& cpu = kernels::cpu_features();
    DoctorItem i;
    i.id = "amx";
    i.title = "AMX tile permission";
    i.facts["cpu_has_amx"] = cpu.amx_tile;
    if (!cpu.amx_tile) {
        i.available = false;
        i.detail = "this CPU (or the OS's XSAVE setup) has no AMX tiles";
        return i;
    }
    const std::string refused = kernels::request_amx_permission();
    i.available = refused.empty();
    i.detail =
        refused.empty() ? "tile data permission granted (arch_prctl ARCH_REQ_XCOMP_PERM)" : refused;
    if (!refused.empty()) i.fix = "Linux 5.16 or later grants AMX tile data to processes that ask";
    return i;
}

// A container's CPU quota and memory limit: what `run` judges a program at where they are
// tighter than the host's CPUs and memory.
DoctorItem cgroup_item() {
    DoctorItem i;
    i.id = "cgroup_limits";
    i.title = "Control-group limits (container)";
    const auto& root = collectors::FsRoot::system();
    i.available = root.exists("/proc/self/cgroup");
    if (!i.available) {
        i.detail =
            "/proc/self/cgroup unreadable: a container's CPU quota and memory limit are "
            "unknown to ceiling";
        return i;
    }
    const collectors::CgroupLimits l = collectors::read_cgroup_limits(root);
    i.facts["cpu_quota_cpus"] = l.cpu ? nlohmann::json(l.cpu->cpus) : nlohmann::json(nullptr);
    i.facts["memory_limit_bytes"] =
        l.memory_limit_bytes ? nlohmann::json(*l.memory_limit_bytes) : nlohmann::json(nullptr);
    // fmt, not a fixed buffer: a Kubernetes pod's group path alone can pass 150 characters.
    if (l.cpu)
        i.detail = fmt::format(
            "CPU quota {:.2f} CPUs per {:.0f} ms period (group {}, cgroup v{}): `run` judges at "
            "most that many cores and counts the periods it ran out in",
            l.cpu->cpus, l.cpu->period_s * 1e3, l.cpu->group, l.cpu->version);
    else
        i.detail = "no CPU quota: the host's CPUs";
    if (l.memory_limit_bytes) {
        i.detail +=
            fmt::format("; memory limit {:.3g} GiB (group {}): the capacity `run` judges against",
                        *l.memory_limit_bytes / (1024.0 * 1024 * 1024), l.memory_group);
    } else {
        i.detail += "; no memory limit: the host's memory";
    }
    return i;
}

void add_gpu_items(DoctorReport& r) {
    const collectors::gpu::GpuProbe g = collectors::gpu::probe_gpu();
    DoctorItem driver = item("cuda_driver", "CUDA driver", g.driver);
    driver.facts["cuda_version"] =
        g.driver_cuda_version ? nlohmann::json(*g.driver_cuda_version) : nlohmann::json(nullptr);
    driver.facts["driver_version"] =
        g.driver_version.empty() ? nlohmann::json(nullptr) : nlohmann::json(g.driver_version);
    r.items.push_back(std::move(driver));
    DoctorItem gpus = item("gpus", "NVIDIA GPUs", g.devices);
    gpus.facts["count"] = g.device_list.size();
    nlohmann::json list = nlohmann::json::array();
    for (const auto& d : g.device_list)
        list.push_back({{"index", d.index},
                        {"name", d.name},
                        {"compute_capability", std::to_string(d.compute_capability_major) + "." +
                                                   std::to_string(d.compute_capability_minor)},
                        {"memory_bytes", d.memory_bytes}});
    gpus.facts["devices"] = std::move(list);
    r.items.push_back(std::move(gpus));
    DoctorItem cupti = item("cupti", "CUPTI", g.cupti);
    cupti.facts["api_version"] =
        g.cupti_version ? nlohmann::json(*g.cupti_version) : nlohmann::json(nullptr);
    r.items.push_back(std::move(cupti));
    r.items.push_back(item("gpu_counters", "GPU performance counters", g.counters));
}

DoctorItem self_validation_item(const Capability& cpu_pmu, bool wanted) {
    DoctorItem i;
    i.id = "pmu_self_validation";
    i.title = "PMU self-validation";
    if (!cpu_pmu.available) {
        i.available = false;
        i.detail = "not run: the CPU PMU is unavailable; diagnoses use analytic counts and timing";
        i.fix = cpu_pmu.fix;
        i.facts["verdict"] = nullptr;
        return i;
    }
    if (!wanted) {
        i.available = false;
        i.detail = "skipped (--no-self-test)";
        return i;
    }
    const PmuSelfValidation v = run_pmu_self_validation();
    if (!v.ran) {
        i.available = false;
        i.detail = "not run: " + v.not_run_reason;
        return i;
    }
    i.available = v.trusted();
    i.facts["kernel"] = v.kernel;
    std::string detail;
    for (const auto& [key, check] : {std::pair{"flops", &v.flops}, std::pair{"bytes", &v.bytes}}) {
        if (!*check) continue;
        const collectors::Validation& c = **check;
        i.facts[key] = validation_json(c);
        detail += (detail.empty() ? "" : "; ") + c.explanation;
    }
    if (detail.empty()) detail = "no FLOP or byte events to check on this CPU model";
    i.detail = v.kernel + ": " + detail;
    if (!i.available)
        i.fix = "PMU-measured FLOPs and bytes are not used; ceiling falls back to analytic counts";
    return i;
}

}  // namespace

std::string hypervisor_name(std::string_view signature) {
    for (const auto& h : hypervisors)
        if (h.signature == signature) return std::string(h.name);
    return std::string(collectors::trim(signature));
}

DoctorReport survey_measurement(const SurveyOptions& options) {
    DoctorReport r;
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    r.host = host;
    utsname u{};
    if (uname(&u) == 0) r.kernel = u.release;
    const auto& cpu = kernels::cpu_features();
    r.cpu = cpu.brand.empty() ? cpu.vendor : cpu.brand;

    collectors::PerfEnvironment env = collectors::read_perf_environment();
    // CPUID is the surest sign of a VM and names the hypervisor where DMI does not.
    if (cpu.hypervisor) {
        env.virtual_machine = true;
        if (env.hypervisor.empty()) env.hypervisor = hypervisor_name(cpu.hypervisor_vendor);
    }
    r.virtual_machine = env.virtual_machine;
    r.hypervisor = env.hypervisor;
    r.perf_event_paranoid = env.paranoid;

    auto& perf = collectors::system_perf_event_api();
    const Capability cpu_pmu = collectors::probe_cpu_pmu(perf, env);
    DoctorItem pmu = item("cpu_pmu", "CPU PMU (hardware counters)", cpu_pmu);
    pmu.facts["core_pmus"] = env.cpu_pmus;
    pmu.facts["virtual_machine"] = env.virtual_machine;
    r.items.push_back(std::move(pmu));
    r.items.push_back(paranoid_item(env));
    r.items.push_back(item("software_events", "perf_event software events",
                           collectors::probe_software_events(perf, &env)));
    {
        const auto pfm = collectors::make_pfm_api();
        r.items.push_back(libpfm_item(*pfm, cpu_pmu));
    }
    {
        const auto papi = collectors::make_papi_api();
        r.items.push_back(papi_item(*papi, cpu_pmu));
    }
    r.items.push_back(
        item("uncore", "Memory-controller (uncore) counters",
             collectors::probe_memory_controller(collectors::FsRoot::system(), perf, env)));
    {
        collectors::EnergyCollector energy(collectors::FsRoot::system(), perf, &env);
        const Capability c = options.energy_check ? energy.verify() : energy.probe();
        DoctorItem e = item("energy", "RAPL energy", c);
        e.facts["interface"] = energy.interface().empty()
                                   ? nlohmann::json(nullptr)
                                   : nlohmann::json(std::string(energy.interface()));
        r.items.push_back(std::move(e));
    }
    add_gpu_items(r);
    r.items.push_back(amx_item());
    r.items.push_back(cgroup_item());
    r.items.push_back(self_validation_item(cpu_pmu, options.self_validation));
    return r;
}

}  // namespace ceiling::measure
