#pragma once
// The file the CUDA injection library (libceiling_inject_cuda.so) leaves for `ceiling run`,
// shared by the writer (cuda_inject.cpp) and the reader (agent/run/gpu_run.cpp).
//
// In the directory named by CEILING_CUDA_DIR, one file per process image:
//   <pid>-<load time ns>.cuda.jsonl
// JSON Lines, appended as CUPTI hands over each activity buffer, so a program that crashes
// leaves everything up to its last completed buffer. Each line is an object with "type":
//   header    {version, pid, load_ns, clock: "CLOCK_MONOTONIC", cupti_version, metrics}
//   kernel    {name, device, context, stream, correlation, start_ns, end_ns, grid, block,
//              registers, shared_bytes, graph}
//   copy      {kind: h2d|d2h|d2d|h2h|p2p|unknown, src, dst (memory kinds), bytes, device,
//              context, stream, correlation, start_ns, end_ns}
//   memset    {bytes, device, context, stream, correlation, start_ns, end_ns}
//   sync      {kind, context, stream, correlation, start_ns, end_ns}   host waited on the GPU
//   launch    {correlation, pid, tid, start_ns, end_ns}   the API call that enqueued the
//             kernel, copy or memset of the same correlation, on thread tid (gettid)
//   overhead  {kind, start_ns, end_ns}                                 CUPTI's own time
//   dropped   {records}                                                CUPTI lost records
//   metrics   {context, index, name, values: {metric: value}}   one per profiled kernel, in
//                                                          launch order per context
//   error     {what, reason, fix}                                     e.g. counters refused
//   end       {t_ns}                                          written at exit; absent: the
//                                                             program died before exit
// Times are CLOCK_MONOTONIC nanoseconds (CUPTI is given that clock), the clock ceiling run
// and the NVTX files use, so GPU and CPU events share one timeline.

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "collectors/cupti/gpu_activity.hpp"
#include "collectors/cupti/metric_table.hpp"

namespace ceiling::inject {

inline constexpr char cuda_dir_env[] = "CEILING_CUDA_DIR";
// "1": also count per-kernel metrics with the range profiler (kernel replay: slows every
// kernel down by the number of passes; durations from such a run are not real ones).
inline constexpr char cuda_metrics_env[] = "CEILING_CUDA_METRICS";
inline constexpr char cuda_inject_env[] = "CUDA_INJECTION64_PATH";
inline constexpr int cuda_file_version = 1;

// Lines, one JSON object each (no trailing newline).
std::string header_line(int pid, std::uint64_t load_ns, std::optional<unsigned> cupti_version, bool metrics);
std::vector<std::string> activity_lines(const collectors::gpu::ActivityLog& log);
std::string metrics_line(std::uint32_t context, std::size_t index, const std::string& name,
                         const collectors::gpu::MetricValues& values);
std::string error_line(const std::string& what, const std::string& reason, const std::string& fix);
std::string end_line(std::int64_t t_ns);

// "_ZN...kernelEPfi" -> "ns::kernel(float*, int)", as ncu shows it; the name itself when it
// is not a mangled one. The kernel records and the metrics lines name kernels alike with it.
std::string demangled(const std::string& symbol);

struct KernelMetrics {
    std::uint32_t context = 0;
    std::size_t index = 0;
    std::string name;
    collectors::gpu::MetricValues values;
};

struct CudaActivityFile {
    std::filesystem::path path;
    int pid = 0;
    std::uint64_t load_ns = 0;
    bool metrics_requested = false;
    bool complete = false;  // the end line was written
    collectors::gpu::ActivityLog log;
    std::vector<KernelMetrics> metrics;
    std::vector<std::string> errors;  // "what: reason (fix: ...)"
    std::size_t malformed_lines = 0;  // e.g. a last line cut off by a crash
};

// Reads one file. Throws std::invalid_argument when it is not a regular file (a FIFO, a link),
// cannot be opened or has no header.
CudaActivityFile read_cuda_activity_file(const std::filesystem::path& path);
// The same from a stream (tests, fuzzing); `path` only names the file in errors.
CudaActivityFile read_cuda_activity_file(std::istream& in, const std::filesystem::path& path);
// Every *.cuda.jsonl of a directory, sorted by load time; empty when there is none.
std::vector<CudaActivityFile> read_cuda_activity_dir(const std::filesystem::path& dir);

}  // namespace ceiling::inject
