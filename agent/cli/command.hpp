#pragma once
// What every subcommand shares: how it registers with the command line, the documented
// exit statuses, and the errors that map onto them.

#include <functional>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>

namespace ceiling::cli {

// Exit statuses of every command but `run` (which returns the wrapped program's).
inline constexpr int exit_ok = 0;
inline constexpr int exit_failed = 1;  // a measurement or an output failed
inline constexpr int exit_usage = 2;   // bad usage or bad input
// `run --fail-on-budget`: the program succeeded but missed a budget (its own failure wins).
inline constexpr int exit_budget_missed = 3;
// `diff --fail-on-regression`: a region or the whole run got slower beyond the noise.
inline constexpr int exit_regression = 4;

// Thrown to end a command with a one-line message and a documented exit status.
struct Failure : std::runtime_error {
    Failure(int status, const std::string& message) : std::runtime_error(message), exit_status(status) {}
    int exit_status;
};
struct UsageError : Failure {
    explicit UsageError(const std::string& m) : Failure(exit_usage, m) {}
};
struct MeasurementError : Failure {
    explicit MeasurementError(const std::string& m) : Failure(exit_failed, m) {}
};

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
