#include "agent/machine/host_info.hpp"

#include <map>
#include <memory>
#include <set>

#include <hwloc.h>
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "agent/machine/pmu_survey.hpp"
#include "diagnosis/peak_table.hpp"
#include "kernels/cpu_features.hpp"

namespace ceiling::measure {
namespace {

struct Topology {
    hwloc_topology_t t = nullptr;
    Topology() {
        hwloc_topology_init(&t);
        hwloc_topology_load(t);
    }
    ~Topology() { hwloc_topology_destroy(t); }
    Topology(const Topology&) = delete;
    Topology& operator=(const Topology&) = delete;
};

std::string cache_type(hwloc_obj_cache_type_e t) {
    switch (t) {
        case HWLOC_OBJ_CACHE_DATA:
            return "data";
        case HWLOC_OBJ_CACHE_INSTRUCTION:
            return "instruction";
        default:
            return "unified";
    }
}

// The CPU's identity and instruction sets (CPUID, read once per process).
void describe_cpu(HostInfo& h) {
    const auto& f = kernels::cpu_features();
    h.cpu_vendor = f.vendor;
    h.cpu_model = f.brand;
    h.cpu_family = f.family;
    h.cpu_model_number = f.model;
    h.cpu_stepping = f.stepping;
    // Named as people know it ("KVM", not the CPUID signature "KVMKVMKVM").
    h.hypervisor =
        f.hypervisor ? (f.hypervisor_vendor.empty() ? "unknown" : hypervisor_name(f.hypervisor_vendor)) : "";
    h.isa = f.names();
    if (const auto* ua = find_microarchitecture(f.vendor, f.family, f.model))
        h.microarchitecture = ua->name;
}

int logical_cpus(const Topology& topo) { return hwloc_get_nbobjs_by_type(topo.t, HWLOC_OBJ_PU); }

}  // namespace

int physical_cores_of(const std::vector<int>& cpus) {
    Topology topo;
    std::set<unsigned> cores;
    for (int cpu : cpus) {
        const hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topo.t, static_cast<unsigned>(cpu));
        const hwloc_obj_t core =
            pu ? hwloc_get_ancestor_obj_by_type(topo.t, HWLOC_OBJ_CORE, pu) : nullptr;
        if (!core) return static_cast<int>(std::set<int>(cpus.begin(), cpus.end()).size());
        cores.insert(core->logical_index);
    }
    return static_cast<int>(cores.size());
}

std::string other_machine_than_this(const HostInfo& measured) {
    HostInfo here;
    describe_cpu(here);
    // The CPUs this process may run on: hwloc's count (the profile's) unless a mask or a
    // container's cpuset restricts it, where hwloc says.
    cpu_set_t mask;
    CPU_ZERO(&mask);
    here.logical_cpus = sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : 0;
    if (here.logical_cpus != measured.logical_cpus) here.logical_cpus = logical_cpus(Topology());
    return other_machine(measured, here);
}

HostInfo describe_host() {
    HostInfo h;
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    h.hostname = host;
    utsname u{};
    if (uname(&u) == 0) h.os = std::string(u.sysname) + " " + u.release + " " + u.machine;
    describe_cpu(h);

    Topology topo;
    h.physical_cores = hwloc_get_nbobjs_by_type(topo.t, HWLOC_OBJ_CORE);
    h.logical_cpus = logical_cpus(topo);
    h.numa_nodes = std::max(1, hwloc_get_nbobjs_by_type(topo.t, HWLOC_OBJ_NUMANODE));
    // sysconf, not hwloc's NUMA totals: VMs may report node memory short of what the OS has.
    h.memory_bytes = static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                     static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));

    // One CacheInfo per (level, type), with its instance count.
    std::map<std::pair<int, std::string>, CacheInfo> caches;
    for (int depth = 0; depth < hwloc_topology_get_depth(topo.t); ++depth) {
        for (hwloc_obj_t o = hwloc_get_next_obj_by_depth(topo.t, depth, nullptr); o;
             o = hwloc_get_next_obj_by_depth(topo.t, depth, o)) {
            if (!hwloc_obj_type_is_cache(o->type)) continue;
            const auto& a = o->attr->cache;
            const std::string type = cache_type(a.type);
            auto [it, inserted] = caches.try_emplace({static_cast<int>(a.depth), type});
            CacheInfo& c = it->second;
            if (inserted) {
                c.level = static_cast<int>(a.depth);
                c.type = type;
                c.size_bytes = a.size;
                c.line_bytes = a.linesize;
                c.shared_by_cpus = o->cpuset ? std::max(1, hwloc_bitmap_weight(o->cpuset)) : 1;
                c.instances = 1;
            } else {
                ++c.instances;
            }
        }
    }
    for (auto& [key, c] : caches) h.caches.push_back(c);
    return h;
}

}  // namespace ceiling::measure
