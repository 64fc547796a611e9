#pragma once
// Options several subcommands share, parsed the same way everywhere: which machine profile
// to judge against (measured quickly when none is saved) and the diagnosis thresholds.

#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "agent/cli/command.hpp"
#include "diagnosis/budget.hpp"
#include "diagnosis/machine_profile.hpp"
#include "diagnosis/run_record.hpp"
#include "diagnosis/thresholds.hpp"

namespace ceiling::cli {

struct LoadedProfile {
    MachineProfile profile;
    std::filesystem::path path;
};

// `--profile FILE` on `app`.
void add_profile_option(CLI::App* app, std::string& path);

// A loaded profile measured on another CPU than this host's (other_machine). `chosen`: the user
// named it (`--profile`, or $CEILING_PROFILE), so it is used and said; otherwise it is the
// per-host cache file, which is not trusted (a VM keeps its hostname when its instance type
// changes). `said` begins the line that tells the user; each caller adds what it does.
struct OtherCpuProfile {
    bool chosen = false;
    std::string said;
};
std::optional<OtherCpuProfile> other_cpu_profile(const MachineProfile& profile,
                                                 const std::filesystem::path& path,
                                                 bool explicit_path);

// The profile at `explicit_path` if given (UsageError naming it when unreadable), else the
// saved one; with neither, or a saved one of another CPU (other_machine), a quick measurement
// saved where later commands look for it, and a warning saying so. A chosen profile (the path,
// or $CEILING_PROFILE) of another CPU is used, with a warning when the command `judges_here`
// (measures on this host; `bound` only computes with a profile's roofs). `command` names the
// caller in progress output.
LoadedProfile obtain_profile(const std::string& explicit_path, const GlobalOptions& global,
                             std::string_view command, bool judges_here = true);

struct ThresholdArgs {
    std::string file;
    std::vector<std::string> assignments;  // NAME=VALUE
};

// `--thresholds FILE` and `--threshold NAME=VALUE` (repeatable) on `app`.
void add_threshold_options(CLI::App* app, ThresholdArgs& args);

// `base` (the defaults, or a record's own for `report`), then the file, then the
// assignments; validated. UsageError (exit 2) naming the file or the field at fault.
Thresholds thresholds_of(const ThresholdArgs& args, Thresholds base = {});

// Budgets from a budget file (diagnosis/budget.hpp); UsageError naming the file when it
// cannot be read or is not a budget file.
Budgets read_budget_file(const std::string& path);

// A whole text file; UsageError "cannot read WHAT FILE: reason" when it cannot be read.
std::string read_text(const std::filesystem::path& path, std::string_view what);

// Checks, before any measuring, that each non-empty path can take an output file: a path
// that exists and is not a regular file is bad input (UsageError, exit 2: ceiling would
// replace a device, a FIFO or a directory); an unwritable place is a failed output
// (MeasurementError, exit 1).
void check_output_paths(std::initializer_list<std::filesystem::path> paths);

// Refuses an empty value (`--latency-budget "$UNSET"`): a gate whose budget vanished with an
// unset variable would always pass. For the options whose value is a quantity or a file.
extern const CLI::Validator non_empty;

// A file a command names, and what it is to that command ("the run record", "--profile").
struct NamedPath {
    std::filesystem::path path;  // empty: not given (skipped)
    std::string role;
};
// No output may replace an input, the profile in use, the program being run or another
// output of the same command: UsageError (exit 2) naming both, before anything runs. The
// same file is the same inode where both exist (a link to an input is that input), else the
// same path once made absolute and normal.
void check_outputs_apart(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

// `record` as a text output shows it: itself, or where a name in it holds a control character
// (ESC, NUL, a newline), a copy in `escaped` with those names escaped and judged again
// (output/printable_names.hpp).
const RunRecord& shown_as_text(const RunRecord& record, std::optional<RunRecord>& escaped);

// What `report` writes, known by its first kilobyte: it begins with `start` and holds `mark`.
struct OwnOutput {
    std::string_view start, mark, what;  // `what` names it: "an HTML report"
};
// `report` replaces only what it wrote itself: an existing `out.path` that is not `own` (a
// record taken for --html's value, a user's file, a link) is refused (UsageError, exit 2)
// unless `force`.
void check_replaceable(const NamedPath& out, const OwnOutput& own, bool force);

}  // namespace ceiling::cli
