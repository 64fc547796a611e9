#pragma once
// Describes this host for the machine profile: topology and caches from hwloc, CPU
// identity and ISA features from CPUID (kernels/cpu_features), OS from uname.

#include <string>
#include <vector>

#include "diagnosis/machine_profile.hpp"

namespace ceiling::measure {

// threads_used is left 0 for the caller to fill in.
HostInfo describe_host();

// other_machine (diagnosis/machine_profile.hpp) of a profile's host against this one. Cheap
// enough for every `run`: CPUID is read once per process, and hwloc (~5 ms to load the
// topology) only where the logical CPUs this process may use differ from the profile's count.
std::string other_machine_than_this(const HostInfo& measured);

// Physical cores among these logical CPUs (hwloc): SMT siblings share a core's ports, so a
// theoretical peak counts cores, not threads. Falls back to the CPU count when the
// topology does not say.
int physical_cores_of(const std::vector<int>& cpus);

}  // namespace ceiling::measure
