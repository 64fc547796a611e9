#pragma once
// GPU side of `ceiling run`: the environment that loads the CUDA injection library into the
// wrapped program, and what to do with the files it leaves: the GPU timeline (a track per
// stream), per-kernel measurements, and the "not the model" evidence (GPU idle time, host
// waits on the GPU, host<->device copies).
//
// Seam for `run` (agent/cli/run.cpp, being written beside this):
//   1. before launching:  for (auto& [k, v] : cuda_injection_environment(dir, metrics).variables)
//   setenv(k, v)
//   2. after each execution:  auto gpu = read_gpu_run(dir, {start_ns, end_ns});
//      apply_gpu_accounting(gpu, accounting);   // ProcessAccounting.device_wait_s / device_copy_s
//      record.whole.counters += gpu_counters(gpu); record.notes += gpu.notes;
//      trace["traceEvents"] += gpu_trace_events(gpu, t0_ns);  // pid per device, tid per stream
//      kernels as regions: gpu_kernel_measurements(gpu)
// The CUDA_INJECTION64_PATH variable and CEILING_NVTX_DIR (the NVTX library) coexist.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/inject/cuda_activity_file.hpp"
#include "collectors/cupti/gpu_activity.hpp"
#include "diagnosis/measurement.hpp"
#include "diagnosis/regions.hpp"

namespace ceiling::measure {

struct CudaInjection {
    std::map<std::string, std::string> variables;  // to set in the child's environment
    std::string unavailable;  // why GPU activity will not be collected; empty when it will
};

// `library`: the injection library; default: libceiling_inject_cuda.so beside the running
// ceiling binary. metrics: also per-kernel counters (kernel replay: slower; use an extra
// execution, not a timed one).
CudaInjection cuda_injection_environment(
    const std::filesystem::path& dir, bool metrics,
    std::optional<std::filesystem::path> library = std::nullopt);
std::filesystem::path default_cuda_inject_library();

struct GpuRun {
    collectors::gpu::ActivityLog log;
    collectors::gpu::GpuTimeline timeline;
    std::vector<inject::KernelMetrics> metrics;
    std::vector<std::string> notes;  // errors the library reported, dropped records, crashes
    std::size_t processes = 0;       // files read
};

// Reads every file of the directory; `window` (the execution's start and end, monotonic ns)
// makes idle time before the first and after the last GPU operation count.
GpuRun read_gpu_run(const std::filesystem::path& dir,
                    std::optional<collectors::gpu::Interval> window = std::nullopt);

// device_wait_s: host time blocked in synchronisation; device_copy_s: host<->device copy
// time (union over the device timeline). Fields stay absent when no GPU activity was seen.
void apply_gpu_accounting(const GpuRun& gpu, ProcessAccounting& accounting);

// Totals as counters (source cupti): gpu_busy_s, gpu_idle_s, gpu_kernel_s, h2d_bytes,
// d2h_bytes, d2d_bytes, pageable_copy_bytes, host_sync_wait_s, gpu_kernels.
std::vector<CounterValue> gpu_counters(const GpuRun& gpu);

// One Measurement per kernel name: durations from activity; measured ops and bytes per launch
// from the metrics (mean over the profiled launches of that name) when they were counted.
std::vector<Measurement> gpu_kernel_measurements(const GpuRun& gpu);

// Chrome trace events (complete events, microseconds relative to t0_ns): pid "GPU <device>",
// one tid per (context, stream), kernels, copies and memsets; host waits on a "host waits on
// GPU" track. Metadata events name the processes and threads.
nlohmann::json gpu_trace_events(const GpuRun& gpu, std::int64_t t0_ns);

}  // namespace ceiling::measure
