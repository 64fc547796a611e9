// The GPU roofs and reference cases as data: names, what runs, and the analytic work of each
// case at its standard shape. Compiled with or without CUDA (the suite lists the cases and
// says why they cannot run).

#include <array>
#include <string>

#include "kernels/gpu/gpu_kernels.hpp"
#include "kernels/gpu/reference_cpu.hpp"

namespace ceiling::kernels::gpu {
namespace {

using P = WorkPrecision;
using E = WorkEngine;

constexpr std::array<GpuRoofSpec, 21> roofs = {{
    {"fp32_fma", RoofKind::compute, P::fp32, E::vector, "", "", false,
     "our kernel: 8 independent FFMA chains per thread, all SMs"},
    {"fp64_fma", RoofKind::compute, P::fp64, E::vector, "", "", false,
     "our kernel: 8 independent DFMA chains per thread, all SMs"},
    {"bf16_mma", RoofKind::compute, P::bf16, E::matrix, "", "", false,
     "our kernel: mma.sync m16n8k16 bf16->fp32 from registers (HMMA; Hopper's wgmma is faster)"},
    {"bf16_wgmma", RoofKind::compute, P::bf16, E::matrix, "", "", false,
     "our kernel: wgmma m64n256k16 bf16->fp32, A from registers, B from shared memory (Hopper, "
     "sm_90a)"},
    {"fp16_mma", RoofKind::compute, P::fp16, E::matrix, "", "", false,
     "our kernel: mma.sync m16n8k16 fp16->fp32 from registers (HMMA; Hopper's wgmma is faster)"},
    {"fp16_wgmma", RoofKind::compute, P::fp16, E::matrix, "", "", false,
     "our kernel: wgmma m64n256k16 fp16->fp32, A from registers, B from shared memory (Hopper, "
     "sm_90a)"},
    {"tf32_mma", RoofKind::compute, P::tf32, E::matrix, "", "", false,
     "our kernel: mma.sync m16n8k8 tf32->fp32 from registers (HMMA)"},
    {"bf16_cublas", RoofKind::compute, P::bf16, E::matrix, "", "", true,
     "library roof: cuBLAS cublasGemmEx 8192^3, bf16 in, fp32 accumulate and out"},
    {"fp16_cublas", RoofKind::compute, P::fp16, E::matrix, "", "", true,
     "library roof: cuBLAS cublasGemmEx 8192^3, fp16 in, fp32 accumulate and out"},
    {"tf32_cublas", RoofKind::compute, P::tf32, E::matrix, "", "", true,
     "library roof: cuBLAS cublasGemmEx 8192^3, fp32 in, TF32 tensor-core compute"},
    {"hbm_read", RoofKind::bandwidth, P::fp32, E::vector, "HBM", "read", false,
     "our kernel: 16-byte loads, grid-stride, 2 GiB buffer (bytes read)"},
    {"hbm_write", RoofKind::bandwidth, P::fp32, E::vector, "HBM", "write", false,
     "our kernel: 16-byte stores, grid-stride, 2 GiB buffer (bytes written)"},
    {"hbm_copy", RoofKind::bandwidth, P::fp32, E::vector, "HBM", "copy", false,
     "our kernel: 16-byte loads and stores, 1 GiB to 1 GiB (bytes read + written)"},
    {"hbm_copy_memcpy", RoofKind::bandwidth, P::fp32, E::vector, "HBM", "copy", true,
     "library: cudaMemcpy device to device, 1 GiB (bytes read + written)"},
    {"l2_read", RoofKind::bandwidth, P::fp32, E::vector, "L2", "read", false,
     "our kernel: 16-byte loads over a buffer of a quarter of the L2, re-read 64 times"},
    {"pcie_h2d_pinned", RoofKind::bandwidth, P::fp32, E::vector, "PCIe", "h2d_pinned", true,
     "cudaMemcpy host to device, 256 MiB, pinned (cudaMallocHost) host memory"},
    {"pcie_d2h_pinned", RoofKind::bandwidth, P::fp32, E::vector, "PCIe", "d2h_pinned", true,
     "cudaMemcpy device to host, 256 MiB, pinned host memory"},
    {"pcie_h2d_pageable", RoofKind::bandwidth, P::fp32, E::vector, "PCIe", "h2d_pageable", true,
     "cudaMemcpy host to device, 256 MiB, pageable (malloc) host memory"},
    {"pcie_d2h_pageable", RoofKind::bandwidth, P::fp32, E::vector, "PCIe", "d2h_pageable", true,
     "cudaMemcpy device to host, 256 MiB, pageable host memory"},
    {"launch", RoofKind::latency, P::fp32, E::vector, "launch", "", false,
     "host time per launch of an empty kernel, 1000 launches back to back"},
    {"launch_sync", RoofKind::latency, P::fp32, E::vector, "sync", "", false,
     "launch of an empty kernel plus cudaStreamSynchronize, round trip"},
}};

KernelWork work(P p, E e, double ops, double bytes) {
    KernelWork w;
    w.precision = p;
    w.engine = e;
    w.device = WorkDevice::gpu;
    w.ops = ops;
    w.compulsory_bytes = bytes;
    w.working_set_bytes = bytes;
    return w;
}

GpuCase gemm_case(Variant v, int size, bool bf16, std::string implementation) {
    const double m = size, n = size, k = size;
    const double in_bytes = bf16 ? 2 : 4;
    // Same as the CPU GEMM cases: 2mnk operations; A and B read once, C (fp32) written once.
    const auto w = work(bf16 ? P::bf16 : P::fp32, bf16 ? E::matrix : E::vector, 2 * m * n * k,
                        in_bytes * (m * k + k * n) + 4 * m * n);
    const auto s = std::to_string(size);
    return {"gemm", bf16 ? "bf16" : "fp32", v, s + "x" + s + "x" + s, std::move(implementation), w, ""};
}

GpuCase gemv_case(WeightType t, const char* problem, double weight_bytes, std::string implementation) {
    const double m = 16384, k = 8192;
    // Decode step of a linear layer: every weight read once, x read once, y written once
    // (int8: plus one fp32 scale per row). 2 operations per weight, done in fp32 whatever the
    // weights' storage (weight-only quantisation: each weight is widened, then an FFMA), so
    // judged against the fp32 roof; ncu counts them as FFMA too.
    const double bytes = weight_bytes * m * k + 4 * k + 4 * m + (t == WeightType::int8 ? 4 * m : 0);
    return {"gemv",
            problem,
            Variant::optimized,
            "16384x8192",
            std::move(implementation),
            work(P::fp32, E::vector, 2 * m * k, bytes),
            ""};
}

}  // namespace

std::span<const GpuRoofSpec> gpu_roofs() { return roofs; }

const GpuRoofSpec* find_gpu_roof(std::string_view name) {
    for (const auto& r : roofs)
        if (r.name == name) return &r;
    return nullptr;
}

std::string GpuCase::name() const {
    return kernel + "/" + problem + "/" + std::string(to_string(variant)) + "/" + shape;
}

std::vector<GpuCase> gpu_cases() {
    std::vector<GpuCase> c;
    c.push_back(gemm_case(Variant::naive, 4096, false, "one thread per output, dot product from global memory"));
    c.push_back(gemm_case(Variant::optimized, 4096, false,
                          "shared-memory tiles 128x128x8, 8x8 outputs per thread in registers"));
    c.push_back(gemm_case(Variant::library, 4096, false, "cuBLAS cublasSgemm (fp32 math, no TF32)"));
    c.push_back(gemm_case(Variant::library, 8192, true, "cuBLAS cublasGemmEx bf16 in, fp32 accumulate and out"));
    c.push_back(gemv_case(
        WeightType::fp32, "fp32", 4,
        "one warp per 4 rows (x read once for them), 16-byte loads (4 fp32), warp-shuffle sum"));
    c.push_back(gemv_case(
        WeightType::bf16, "bf16", 2,
        "one warp per 4 rows (x read once for them), 16-byte loads (8 bf16), warp-shuffle sum"));
    c.push_back(gemv_case(WeightType::int8, "int8", 1,
                          "one warp per 4 rows (x read once for them), 16-byte loads (16 int8), "
                          "per-row fp32 scale, warp-shuffle sum"));
    {
        const double n = 8, ch = 256, h = 112, w = 112;
        // 9 multiply-adds per output; input read once, output written once, 3x3 filter per channel.
        c.push_back({"conv", "depthwise", Variant::optimized, "8x256x112x112-3x3",
                     "one thread per output, 3x3 window from the read-only cache",
                     work(P::fp32, E::vector, 2 * 9 * n * ch * h * w, 4 * (2 * n * ch * h * w + 9 * ch)), ""});
    }
    {
        const double n = 8192;
        // Every pair's IoU compared once (about 12 fp32 operations each); boxes in, keep flags out.
        c.push_back({"nms", "bitmask", Variant::optimized, "8192",
                     "IoU bitmask of 64-box blocks in parallel, then one block reduces the mask greedily",
                     work(P::fp32, E::vector, 12 * n * (n - 1) / 2, 16 * n + n), ""});
    }
    {
        const double planes = 4 * 3, in = 1080.0 * 1920, out = 2160.0 * 3840;
        // bilinear_ops_per_output per output (registry.hpp); input read once, output written once.
        c.push_back({"resize", "bilinear", Variant::optimized, "4x3x1080x1920-2160x3840",
                     "one thread per output, half-pixel centres, clamped edges",
                     work(P::fp32, E::vector, bilinear_ops_per_output * planes * out, 4 * planes * (in + out)), ""});
    }
    if (!built_with_cuda())
        for (auto& x : c) x.unavailable = "not built with CUDA";
    return c;
}

const GpuCase* find_gpu_case(const std::vector<GpuCase>& cases, std::string_view name) {
    for (const auto& c : cases)
        if (c.name() == name) return &c;
    return nullptr;
}

}  // namespace ceiling::kernels::gpu
