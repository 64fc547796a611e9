#pragma once
// The measuring loop of `ceiling run`: launch the program once per execution (warm-ups
// first) with the software counters, the /proc sampler, the NVTX library and the CUDA
// injection library attached, keep what each execution left, then turn that into the
// measured part of a run record. The CLI (agent/cli/run.cpp) only parses, fills the
// record's header, calls these and prints.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "agent/run/gpu_run.hpp"
#include "agent/run/region.hpp"
#include "agent/run/sampler.hpp"
#include "diagnosis/run_record.hpp"

namespace ceiling::measure {

struct RunPlan {
    std::vector<std::string> command;  // argv as given; command[0] names the program
    std::filesystem::path executable;  // resolved (resolve_program)
    int repeat = 1;                    // timed executions
    int warmup = 0;                    // executions before them, kept out of the statistics
    double interval_s = 0;             // /proc sampling period; 0: no sampling
    std::optional<std::regex> model;   // --model-regions
    // Keep a record small for programs with millions of range instances; summaries still
    // cover every instance.
    std::size_t durations_kept = 10000;
    std::size_t series_points_kept = 20000;
    // One more execution after the timed ones with per-kernel GPU counters (kernel replay),
    // so kernels that declare no work are judged from their counted operations and bytes.
    bool gpu_counters = false;
    // Called after each execution (warm-ups included) with its 1-based index: progress.
    std::function<void(int)> on_execution;
};

// What one execution left: its record entry, its NVTX capture and its GPU activity with
// each operation placed under the range that launched it (for regions and trace).
struct ExecutionData {
    Execution execution;
    NvtxCapture capture;
    GpuRun gpu;
    std::vector<GpuOperation> gpu_ops;
    std::vector<SeenProcess> processes;  // the tree's processes, as the sampler saw them
    std::int64_t start_ns = 0;  // CLOCK_MONOTONIC
    std::int64_t end_ns = 0;
};

struct ProgramRun {
    std::vector<ExecutionData> executions;  // warm-ups included, in launch order
    ProcessEnd end;  // how the run ended: the last execution's end (not_started: none ran)
    std::vector<std::string> notes;  // what could not be measured, in the order found
    bool partial = false;            // interrupted, or stopped after a failing execution
    std::string partial_reason;
    std::optional<int> interrupted_by;  // the signal (SIGINT, SIGTERM, SIGHUP) that stopped it
};

// Runs the plan. Stops after a failing execution and on SIGINT/SIGTERM/SIGHUP (forwarded to
// the program). Throws LaunchFailure (126/127) when the program cannot be executed, and
// std::runtime_error when no temporary directory can be made for the captures.
ProgramRun run_program(const RunPlan& plan);

// The measured part of the record: notes (appended), partial, end, executions, whole (timed
// executions only), regions (NVTX ranges, then the GPU operations of gpu_regions.hpp) and
// the per-execution region and model times (host time covered by NVTX ranges).
void add_to_record(const ProgramRun& run, const RunPlan& plan, RunRecord& record);

// The program's name for people and file names: the last part of command[0].
std::string program_name(const RunPlan& plan);

}  // namespace ceiling::measure
