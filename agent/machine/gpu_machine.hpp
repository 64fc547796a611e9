#pragma once
// `ceiling machine` on GPUs: every roof of kernels/gpu on every visible device, each beside
// its theoretical value from the device's properties. Without CUDA or a device the profile
// says why in `absent`, and the CPU part is unaffected.

#include <optional>
#include <string>
#include <vector>

#include "agent/machine/machine.hpp"
#include "diagnosis/machine_profile.hpp"

namespace ceiling::measure {

// Measures every visible GPU; appends what could not be measured (and why) to `absent`.
std::vector<GpuProfile> measure_gpus(const MachineOptions& options, std::vector<Absence>& absent);

}  // namespace ceiling::measure
