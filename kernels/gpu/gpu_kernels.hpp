#pragma once
// GPU ceilings and reference kernels (CUDA), behind an interface free of CUDA headers so the
// agent and tests build everywhere. In a build without CUDA the same functions report "not
// built with CUDA" (no_cuda.cpp).
//
// The reference kernels are a parallel registry to kernels/registry.hpp: same vocabulary
// (kernel / problem / variant / shape, KernelWork, Verification), but timed with CUDA events
// around each launch rather than by the host clock around run(), which would time the launch,
// not the kernel. Every case is checked against a CPU reference on random data (hash-generated
// on the device, regenerated on the host: random_hash.hpp) before it is timed; inputs of the
// memory-bound cases are several times the L2 so a rerun finds nothing in cache.

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/registry.hpp"

namespace ceiling::kernels::gpu {

// A CUDA failure or a device that cannot run the request. One line, naming the call.
class GpuError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct DeviceProperties {
    int index = 0;
    std::string name;
    std::string pci_bus_id;  // "0000:19:00.0"
    int compute_capability_major = 0;
    int compute_capability_minor = 0;
    int multiprocessors = 0;
    std::uint64_t memory_bytes = 0;
    std::uint64_t l2_bytes = 0;
    std::optional<double> sm_clock_hz;      // peak (boost) clock the driver reports
    std::optional<double> memory_clock_hz;  // peak memory clock
    std::optional<int> memory_bus_bits;
    int runtime_version = 0;  // 13000 = CUDA 13.0
    int driver_version = 0;
};

// Devices this build can use, or why none: "not built with CUDA", "no NVIDIA driver", ...
struct GpuAvailability {
    bool built_with_cuda = false;
    std::string reason;  // empty when devices is non-empty
    std::vector<DeviceProperties> devices;
};
GpuAvailability gpu_availability();
bool built_with_cuda();

struct TimingPlan {
    int warmup = 2;    // untimed launches first (module load, clocks ramping up)
    int repeats = 10;  // timed launches, each between its own pair of CUDA events
};

// ---- ceilings ---------------------------------------------------------------------------

enum class RoofKind { compute, bandwidth, latency };

struct GpuRoofSpec {
    std::string_view name;   // "fp32_fma", "bf16_mma", "bf16_cublas", "hbm_copy", "pcie_h2d_pinned", ...
    RoofKind kind;
    WorkPrecision precision;  // compute roofs
    WorkEngine engine;        // vector: CUDA cores; matrix: tensor cores
    std::string_view level;   // bandwidth: "HBM", "L2", "PCIe"; latency: "launch", "sync"
    std::string_view pattern;  // bandwidth: "read", "write", "copy", "h2d_pinned", ...
    bool library;             // measured through a library (cuBLAS, cudaMemcpy), not our kernel
    std::string_view method;  // what runs, in words (printed beside the value)
};
std::span<const GpuRoofSpec> gpu_roofs();
const GpuRoofSpec* find_gpu_roof(std::string_view name);

struct GpuRoofResult {
    // One value per timed repeat: ops/s (compute), bytes/s (bandwidth) or seconds (latency).
    std::vector<double> values;
    std::uint64_t working_set_bytes = 0;
    std::string detail;  // shape, bytes moved per repeat, ...
};
// Runs one roof on a device after checking its result. Throws GpuError (a wrong result is
// an error: a roof that computes the wrong thing measures nothing).
GpuRoofResult run_gpu_roof(const GpuRoofSpec& roof, int device, const TimingPlan& plan);

// ---- reference kernels ----------------------------------------------------------------------

struct GpuCase {
    std::string kernel;   // "gemm", "gemv", "conv", "nms", "resize"
    std::string problem;  // "fp32", "bf16", "int8", "depthwise", "bitmask", "bilinear"
    Variant variant = Variant::naive;
    std::string shape;
    std::string implementation;  // what runs, e.g. "shared-memory tiles 128x128x8, 8x8 per thread"
    KernelWork work;             // device = gpu
    std::string unavailable;     // why it cannot run here; empty when it can (build-wise)

    std::string name() const;  // "gemm/fp32/optimized/4096x4096x4096" (suite naming)
};

// Every GPU case at its standard shape, in suite order.
std::vector<GpuCase> gpu_cases();
const GpuCase* find_gpu_case(const std::vector<GpuCase>& cases, std::string_view name);

struct GpuCaseRun {
    std::vector<double> seconds;  // one per timed launch (CUDA events)
    Verification verification;    // of the first (untimed) launch
    int launches_per_run = 1;     // CUDA kernels one run launches (NMS: 2)
};
// Sets up, verifies on random data, warms up and times. Throws GpuError for CUDA failures
// and when the verification fails (nothing is timed then).
GpuCaseRun run_gpu_case(const GpuCase& c, int device, const TimingPlan& plan);

// Sets up, runs once and verifies; no warm-up, no timing. For profilers (ncu, the range
// profiler) that want each kernel exactly once.
Verification run_gpu_case_once(const GpuCase& c, int device);

// An empty kernel named ceiling_marker_kernel, launched with `id` as its argument: profiling
// drivers launch it between cases so a trace can be split per case.
void launch_marker(int device, int id);
// Writes back and evicts what the L2 holds (a read of twice its size), so the next kernel's
// DRAM traffic is its own: not the fills' dirty lines, not their data as hits.
void flush_l2(int device);

}  // namespace ceiling::kernels::gpu
