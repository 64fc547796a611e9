#pragma once
// Terminal rendering of a MachineProfile (renders only; measures nothing).

#include <ostream>

#include "diagnosis/machine_profile.hpp"

namespace ceiling::output {

void render_machine_profile(const MachineProfile& p, std::ostream& out);

}  // namespace ceiling::output
