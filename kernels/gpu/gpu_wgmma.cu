// Hopper's tensor-core roofs, bf16 and fp16: wgmma (warpgroup MMA, sm_90a), the instruction
// cuBLAS and CUTLASS use on Hopper. mma.sync (gpu_roofs.cu) reaches only about 60 % of Hopper's
// bf16 rate, so a library GEMM ran "above the roof" against it (first device run, 2026-12-04:
// cuBLAS 8192^3 772 TFLOP/s against mma.sync's 643). Built for sm_90a only (its own object
// library): other GPUs say why they have no such roof instead of running it.

#include <cmath>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/gpu/gpu_common.cuh"
#include "kernels/gpu/gpu_wgmma.hpp"

namespace ceiling::kernels::gpu {

namespace {

// One warpgroup (128 threads) per block: each wgmma is m64n256k16 (bf16 or fp16 in, fp32
// accumulate): A (64x16) from registers, B (16x256) from shared memory through a matrix
// descriptor. The two input types share the fragment and shared-memory layouts (16-bit
// elements), so only the instruction's type names differ.
constexpr int wg_threads = 128, wg_blocks_per_sm = 2;
constexpr int wgmma_per_group = 8;  // issued back to back on one accumulator, then waited for
constexpr int n_dim = 256, k_dim = 16;
constexpr double ops_per_wgmma = 2.0 * 64 * n_dim * k_dim;
// B in shared memory, K-major without swizzle: core matrices of 8 (n) rows x 16 bytes (8 k),
// 128 bytes each; the 32 along n for k 0..7 first, then the 32 for k 8..15.
constexpr unsigned core_bytes = 128, k_half_bytes = n_dim / 8 * core_bytes;  // 4096
constexpr unsigned b_smem_bytes = 2 * k_half_bytes;

// Matrix descriptor (PTX ISA, "Matrix Descriptor Format"): start address, leading byte
// offset (between the two k halves of a K-major operand), stride byte offset (between
// 8-row groups), all >> 4; swizzle mode 0 (none).
__device__ std::uint64_t b_descriptor(const void* smem) {
    const auto addr = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));
    return (static_cast<std::uint64_t>((addr & 0x3FFFF) >> 4)) |
           (static_cast<std::uint64_t>(k_half_bytes >> 4) << 16) |
           (static_cast<std::uint64_t>(core_bytes >> 4) << 32);
}

// One wgmma on TYPE ("bf16" or "f16") inputs into the 128 accumulators d.
#define CEILING_WGMMA(TYPE)                                                                       \
    asm volatile(                                                                                 \
        "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"                                             \
        "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE                              \
        " "                                                                                       \
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, "       \
        "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, "        \
        "%34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, "        \
        "%50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, "        \
        "%66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, "        \
        "%82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, "        \
        "%98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "      \
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, "          \
        "%125, %126, %127}, {%128, %129, %130, %131}, %132, p, 1, 1, 0;\n}\n"                     \
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),     \
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), \
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),           \
          "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]),           \
          "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),           \
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]),           \
          "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),           \
          "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),           \
          "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),           \
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]),           \
          "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]),           \
          "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]),           \
          "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),           \
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]),           \
          "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]),           \
          "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),           \
          "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),       \
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),     \
          "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),     \
          "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),     \
          "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])      \
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(desc), "r"(1))

template <bool half>
__global__ void __launch_bounds__(wg_threads)
    wgmma_roof_kernel(const std::uint32_t* a_frag, const std::uint32_t* b_rows, float* out,
                      int iterations) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ __align__(128) std::uint32_t b[b_smem_bytes / 4];
    // b_rows: the 16 bytes of one n row for k 0..7, then for k 8..15 (every n row alike).
    for (unsigned i = threadIdx.x; i < b_smem_bytes / 4; i += wg_threads)
        b[i] = b_rows[(i / (k_half_bytes / 4)) * 4 + i % 4];
    const int lane = static_cast<int>(threadIdx.x % 32);
    const std::uint32_t a0 = a_frag[lane * 4], a1 = a_frag[lane * 4 + 1], a2 = a_frag[lane * 4 + 2],
                        a3 = a_frag[lane * 4 + 3];
    // Make the shared-memory writes visible to the tensor cores' (async proxy) reads.
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    const std::uint64_t desc = b_descriptor(b);
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] = 0;
    for (int it = 0; it < iterations; ++it) {
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int g = 0; g < wgmma_per_group; ++g)
            if constexpr (half)
                CEILING_WGMMA("f16");
            else
                CEILING_WGMMA("bf16");
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    }
    // Every accumulator should hold the same value: keep the smallest and the largest.
    float lo = d[0], hi = d[0];
#pragma unroll
    for (int i = 1; i < 128; ++i) {
        lo = fminf(lo, d[i]);
        hi = fmaxf(hi, d[i]);
    }
    const std::size_t t = static_cast<std::size_t>(blockIdx.x) * wg_threads + threadIdx.x;
    out[2 * t] = lo;
    out[2 * t + 1] = hi;
#else
    __trap();  // built for sm_90a only; wgmma_roof checks the device before it launches
#endif
}

}  // namespace

GpuRoofResult wgmma_roof(int device, const TimingPlan& plan, bool half) {
    cudaDeviceProp prop{};
    CEILING_CUDA(cudaGetDeviceProperties(&prop, device));
    if (prop.major != 9 || prop.minor != 0)
        throw GpuError(
            "no wgmma roof: wgmma needs a compute capability 9.0 GPU (Hopper), this one is " +
            std::to_string(prop.major) + "." + std::to_string(prop.minor) + " (" + prop.name + ")");
    // Every output is iterations x group x sum_k alpha_k beta_k; a wrong k pairing in the
    // fragment or the descriptor changes it (exact_dot_operands).
    const ExactDotOperands o = exact_dot_operands(k_dim, 300);
    const float* alpha = o.alpha;
    const float* beta = o.beta;
    const double dot = o.dot, abs_dot = o.abs_dot;
    const auto bits = [half](float f) { return half ? exact_half_bits(f) : to_bf16_bits(f); };
    auto pack = [&](const float* v, int k) {
        return static_cast<std::uint32_t>(bits(v[k])) |
               (static_cast<std::uint32_t>(bits(v[k + 1])) << 16);
    };
    // A fragment of each warp (16 rows of the 64): as mma.sync m16n8k16's, a0/a1 hold columns
    // 2t, 2t+1 and a2/a3 columns 2t+8, 2t+9 (t = lane % 4).
    std::vector<std::uint32_t> a(32 * 4), b(8);
    for (int lane = 0; lane < 32; ++lane) {
        const int t = lane % 4;
        a[lane * 4 + 0] = a[lane * 4 + 1] = pack(alpha, 2 * t);
        a[lane * 4 + 2] = a[lane * 4 + 3] = pack(alpha, 2 * t + 8);
    }
    for (int w = 0; w < 4; ++w) {
        b[w] = pack(beta, 2 * w);          // k 0..7 of an n row
        b[4 + w] = pack(beta, 8 + 2 * w);  // k 8..15
    }
    DeviceArray<std::uint32_t> da(a.size()), db(b.size());
    CEILING_CUDA(cudaMemcpy(da.get(), a.data(), da.bytes(), cudaMemcpyHostToDevice));
    CEILING_CUDA(cudaMemcpy(db.get(), b.data(), db.bytes(), cudaMemcpyHostToDevice));
    const int blocks = full_grid(device, wg_blocks_per_sm);
    const int iterations = 1 << 12;
    DeviceArray<float> out(static_cast<std::size_t>(blocks) * wg_threads * 2);
    auto launch = [&] {
        if (half)
            wgmma_roof_kernel<true>
                <<<blocks, wg_threads>>>(da.get(), db.get(), out.get(), iterations);
        else
            wgmma_roof_kernel<false>
                <<<blocks, wg_threads>>>(da.get(), db.get(), out.get(), iterations);
        CEILING_CUDA_LAUNCHED();
    };
    launch();
    const auto got = out.to_host();
    ErrorTracker err;
    const double expected = static_cast<double>(wgmma_per_group) * iterations * dot;
    const double scale = static_cast<double>(wgmma_per_group) * iterations * abs_dot;
    for (float v : got) err.add(v, expected, scale);
    require(
        err.result(1e-2,
                   "smallest and largest accumulator of every thread against group x iterations x "
                   "sum_k a_k b_k, relative to the same with |a_k b_k|"),
        half ? "fp16 wgmma roof" : "bf16 wgmma roof");
    const double ops = ops_per_wgmma * wgmma_per_group * iterations * static_cast<double>(blocks);
    GpuRoofResult r;
    for (double s : time_launches(launch, plan)) r.values.push_back(ops / s);
    r.detail = std::to_string(blocks) + " warpgroups, " + std::to_string(wgmma_per_group) +
               " wgmma per commit group, " + std::to_string(iterations) + " iterations";
    return r;
}

}  // namespace ceiling::kernels::gpu
