#pragma once
// GPU side of `ceiling run`: the environment that loads the CUDA injection library into the
// wrapped program, and what to do with the files it leaves: the GPU timeline, the "not the
// model" evidence (host waits on the GPU, host<->device copies) as counters, and each
// kernel, copy and memset placed under the NVTX range whose thread launched it (for the
// record's regions, gpu_regions.*, and the trace's GPU tracks).
//
// run_program (run_program.cpp) per execution: cuda_injection_environment -> launch ->
// read_gpu_run -> gpu_counters into the execution's counters, place_gpu_operations against
// the execution's NVTX capture. The CUDA_INJECTION64_PATH library and the NVTX library
// (NVTX_INJECTION64_PATH) coexist; both write to the execution's capture directory.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/inject/cuda_activity_file.hpp"
#include "agent/run/region.hpp"
#include "agent/store/chrome_trace.hpp"
#include "collectors/cupti/gpu_activity.hpp"
#include "diagnosis/measurement.hpp"

namespace ceiling::measure {

struct CudaInjection {
    std::map<std::string, std::string> variables;  // to set in the child's environment
    std::string unavailable;  // why GPU activity will not be collected; empty when it will
};

// Where the injection library lives: $CEILING_INJECT_CUDA, else beside the ceiling binary
// (build tree), else ../lib/ceiling/ (installed); nullopt when none exists.
std::optional<std::filesystem::path> find_cuda_inject_library();

// `library`: the injection library (default: find_cuda_inject_library()). metrics: also
// per-kernel counters (kernel replay: durations are not real; use an extra execution, not a
// timed one). Without metrics CEILING_CUDA_METRICS is set to 0, so a value inherited from
// the user's environment cannot slow the timed executions down.
CudaInjection cuda_injection_environment(
    const std::filesystem::path& dir, bool metrics,
    std::optional<std::filesystem::path> library = std::nullopt);

// What one process image of the program did on the GPU (one activity file). Correlation
// ids are per process, so launch calls are matched within it.
struct GpuProcess {
    int pid = 0;
    collectors::gpu::ActivityLog log;
    std::vector<inject::KernelMetrics> metrics;  // per kernel, when counters were on
};

struct GpuRun {
    std::vector<GpuProcess> processes;      // by load time
    collectors::gpu::GpuTimeline timeline;  // over every process
    std::vector<std::string> notes;  // errors the library reported, dropped records, crashes

    // No device activity and no host waits in any process.
    bool empty() const;
};

// Reads every file of the directory; `window` (the execution's start and end, monotonic ns)
// makes idle time before the first and after the last GPU operation count. A file that
// cannot be read becomes a note.
GpuRun read_gpu_run(const std::filesystem::path& dir,
                    std::optional<collectors::gpu::Interval> window = std::nullopt);

// Totals as counters (source cupti), absent when no GPU activity was seen: gpu_busy_s,
// gpu_idle_s, gpu_kernel_s, gpu_copy_s (union of copies on each device's timeline),
// host_sync_wait_s (host blocked in synchronisation), gpu_kernels, h2d_bytes, d2h_bytes,
// d2d_bytes, ..., pageable_copy_bytes. host_sync_wait_s and gpu_copy_s are the engine's
// device wait and copy time (ProcessAccounting::device_wait_s / device_copy_s).
std::vector<CounterValue> gpu_counters(const GpuRun& gpu);

enum class GpuOpKind { kernel, copy, memset };

// What the GPU counters counted for one kernel (cuda_injection_environment with metrics):
// its operations (all kinds) and the kind of the largest count, and its DRAM bytes read and
// written. Each absent when no counter of it was offered.
struct KernelCount {
    std::optional<double> ops;
    Precision precision = Precision::fp32;
    Engine engine = Engine::vector;
    std::optional<double> dram_bytes;
};

// One kernel, copy or memset of an execution, with the host side that launched it.
struct GpuOperation {
    GpuOpKind kind = GpuOpKind::kernel;
    int pid = 0;       // the process whose activity file it came from
    std::string name;  // kernel: demangled name; copy: "copy h2d"; memset: "memset"
    std::uint32_t device = 0;
    std::uint32_t context = 0;
    std::uint32_t stream = 0;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::uint64_t bytes = 0;  // copies and memsets
    std::uint32_t correlation = 0;  // CUPTI's id of the launch, per process
    nlohmann::json args;      // facts for the trace: grid, block, registers; memory kinds
    std::optional<KernelCount> counted;  // kernels of a counting execution
    // The launching API call's process and thread; absent when it was not recorded.
    std::optional<std::pair<int, int>> launched_by;
    // The innermost push/pop NVTX range open on that thread when the call was made: its
    // index in the capture's instances; absent when none was open (or the call is unknown).
    std::optional<std::size_t> range;
};

// Every operation of the run, in start order per process, placed under the capture's ranges.
std::vector<GpuOperation> place_gpu_operations(const GpuRun& gpu, const NvtxCapture& capture);

// Gives each kernel of `ops` its counts from the run's metrics lines (a counting execution).
// Returns notes for the processes whose counts could not be paired with their kernels.
std::vector<std::string> attach_kernel_counts(const GpuRun& gpu, std::vector<GpuOperation>& ops);

// The GPU tracks of one execution in the run's trace: a process per device (pid `pid_base` +
// device, named "GPU <device> (<label>)", sorted from `sort_index` on), a track per
// (context, stream) with its kernels, copies and memsets (args: the launching range's path,
// grid, block, bytes), and the host's waits on the GPU as a track of `host_pid`.
void add_gpu_tracks(store::ChromeTrace& trace, const GpuRun& gpu,
                    const std::vector<GpuOperation>& ops, const NvtxCapture& capture, int pid_base,
                    const std::string& label, int host_pid, int& sort_index);

}  // namespace ceiling::measure
