#pragma once
// The GPU operations of a run as regions of its record: one region per (launching range,
// operation name, device), nested under the NVTX range whose thread launched it, with the
// durations measured on the device. A kernel's work comes from the launching range when
// that range declared GPU work and launched exactly one kernel per instance: then the
// kernel did that work, and judge_record places it on the GPU roofline; else its counted
// work, when `ceiling run --gpu-counters` counted it. Copies and memsets
// carry the bytes they moved (a "bytes" counter, source cupti, total over the timed
// executions) but no work: the profile has no host<->device roof to judge them against.

#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "agent/run/gpu_run.hpp"
#include "agent/run/region.hpp"
#include "diagnosis/run_record.hpp"

namespace ceiling::measure {

// One timed execution's operations and the capture they were placed against.
struct GpuExecution {
    const std::vector<GpuOperation>* ops = nullptr;
    const NvtxCapture* capture = nullptr;
};

struct GpuRegions {
    std::vector<RecordedRegion> regions;  // kind kernel, labels device/operation (and copy)
    std::vector<std::string> notes;       // work that could not be given to a kernel, and why
};

// `range_paths`: the record's range regions, so a GPU region never takes an existing path
// (it gets " [gpu]" appended). `model` marks the regions whose name or path it matches.
// `counting`: the execution whose kernels the GPU counters counted (attach_kernel_counts;
// not timed: kernel replay): a kernel region without declared work gets the mean counted
// operations and DRAM bytes of its kernels there as measured work (source cupti), so
// undeclared kernels are judged too.
GpuRegions aggregate_gpu_regions(const std::vector<GpuExecution>& executions,
                                 const std::optional<std::regex>& model,
                                 const std::set<std::string>& range_paths,
                                 std::size_t durations_limit = 10000,
                                 std::optional<GpuExecution> counting = std::nullopt);

}  // namespace ceiling::measure
