#pragma once
// Describes this host for the machine profile: topology and caches from hwloc, CPU
// identity and ISA features from CPUID (kernels/cpu_features), OS from uname.

#include "diagnosis/machine_profile.hpp"

namespace ceiling::measure {

// threads_used is left 0 for the caller to fill in.
HostInfo describe_host();

}  // namespace ceiling::measure
