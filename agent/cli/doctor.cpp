// `ceiling doctor`: placeholder until the collectors' capability probes land.
#include "agent/cli/command.hpp"

namespace ceiling::cli {
Command add_doctor(CLI::App& root, const GlobalOptions&) {
    auto* app = root.add_subcommand("doctor", "What this machine lets ceiling measure, and how to enable the rest");
    return {app, [] () -> int { throw MeasurementError("doctor: not implemented yet"); }};
}
}  // namespace ceiling::cli
