#pragma once
// Terminal rendering of the GPU section of a MachineProfile (renders only).

#include <ostream>

#include "diagnosis/machine_profile.hpp"

namespace ceiling::output {

void render_gpu_profiles(const MachineProfile& p, std::ostream& out);

}  // namespace ceiling::output
