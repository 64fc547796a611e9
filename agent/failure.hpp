#pragma once
// The documented exit statuses, and the errors that end a command with a one-line message
// and one of them. Every room of the agent may throw these; only main() catches them.

#include <stdexcept>
#include <string>

namespace ceiling {

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

}  // namespace ceiling
