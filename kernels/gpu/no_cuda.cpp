// Builds without CUDA: the GPU kernels are listed but say why they cannot run.
#include "kernels/gpu/gpu_kernels.hpp"

namespace ceiling::kernels::gpu {
namespace {
constexpr const char* not_built = "not built with CUDA (no nvcc found at configure time, or CEILING_WITH_CUDA=OFF)";
}

bool built_with_cuda() { return false; }
GpuAvailability gpu_availability() { return {false, not_built, {}}; }
GpuRoofResult run_gpu_roof(const GpuRoofSpec&, int, const TimingPlan&) { throw GpuError(not_built); }
GpuCaseRun run_gpu_case(const GpuCase&, int, const TimingPlan&) { throw GpuError(not_built); }
Verification run_gpu_case_once(const GpuCase&, int) { throw GpuError(not_built); }
void launch_marker(int, int) { throw GpuError(not_built); }

}  // namespace ceiling::kernels::gpu
