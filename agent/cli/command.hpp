#pragma once
// What every subcommand shares: how it registers with the command line. The exit statuses
// and the errors that map onto them are agent/failure.hpp.

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "agent/failure.hpp"

namespace ceiling::cli {

// Options every command sees (parsed before the subcommand runs).
struct GlobalOptions {
    int verbosity = 0;  // -v: debug, -vv: trace
    bool quiet = false;  // -q: warnings and errors only, no progress
};

// A registered subcommand: its CLI11 node and what to run when it was chosen. Options
// are parsed into a typed struct owned by the closure.
struct Command {
    CLI::App* app = nullptr;
    std::function<int()> run;
};

// One registration function per subcommand (one file each under agent/cli/).
using Registrar = Command (*)(CLI::App& root, const GlobalOptions& global);

Command add_doctor(CLI::App& root, const GlobalOptions& global);
Command add_machine(CLI::App& root, const GlobalOptions& global);
Command add_suite(CLI::App& root, const GlobalOptions& global);
Command add_run(CLI::App& root, const GlobalOptions& global);
Command add_report(CLI::App& root, const GlobalOptions& global);
Command add_diff(CLI::App& root, const GlobalOptions& global);
Command add_bound(CLI::App& root, const GlobalOptions& global);

}  // namespace ceiling::cli
