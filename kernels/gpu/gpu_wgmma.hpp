#pragma once
// Hopper's wgmma tensor-core roof (gpu_wgmma.cu, built for sm_90a only).

#include "kernels/gpu/gpu_kernels.hpp"

namespace ceiling::kernels::gpu {

// bf16 (or fp16 with `half`) in, fp32 accumulate, m64n256k16 from registers and shared memory
// on every SM; checked before it is timed. Throws GpuError (saying why) on a GPU other than
// compute capability 9.0.
GpuRoofResult wgmma_roof(int device, const TimingPlan& plan, bool half);

}  // namespace ceiling::kernels::gpu
