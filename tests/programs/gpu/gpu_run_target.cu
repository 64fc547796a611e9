// A small CUDA program for `ceiling run` on a GPU (scripts/gpu-check): NVTX ranges around a
// host-to-device copy, a tiled fp32 GEMM kernel that declares its work, and a copy back,
// repeated a few times, then one element checked against the CPU. What gpu-check expects in
// the record: the kernel nested under "step/gemm ...", judged against the GPU roofs, the
// copies under "step/upload" and "step/download", and device wait and copy shares.
//
//   gpu_run_target [N=2048] [STEPS=3]
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr int tile = 16;

// C = A x B, row-major N x N, one tile of C per block through shared memory.
__global__ void gemm_tiled(const float* a, const float* b, float* c, int n) {
    __shared__ float as[tile][tile];
    __shared__ float bs[tile][tile];
    const int row = blockIdx.y * tile + threadIdx.y;
    const int col = blockIdx.x * tile + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < n; k0 += tile) {
        as[threadIdx.y][threadIdx.x] = row < n && k0 + threadIdx.x < n ? a[row * n + k0 + threadIdx.x] : 0.0f;
        bs[threadIdx.y][threadIdx.x] = col < n && k0 + threadIdx.y < n ? b[(k0 + threadIdx.y) * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < tile; ++k) acc = fmaf(as[threadIdx.y][k], bs[k][threadIdx.x], acc);
        __syncthreads();
    }
    if (row < n && col < n) c[row * n + col] = acc;
}

bool ok(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return true;
    std::fprintf(stderr, "gpu_run_target: %s: %s\n", what, cudaGetErrorString(e));
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    const int n = argc > 1 ? std::atoi(argv[1]) : 2048;
    const int steps = argc > 2 ? std::atoi(argv[2]) : 3;
    if (n < tile || steps < 1) {
        std::fprintf(stderr, "usage: gpu_run_target [N>=16] [STEPS>=1]\n");
        return 2;
    }
    const std::size_t elems = static_cast<std::size_t>(n) * n, bytes = elems * sizeof(float);
    // Pageable host memory, as most programs have: the copies block the host thread.
    std::vector<float> ha(elems), hb(elems), hc(elems);
    for (std::size_t i = 0; i < elems; ++i) {
        ha[i] = static_cast<float>((i * 7 + 3) % 17) / 17.0f - 0.5f;
        hb[i] = static_cast<float>((i * 5 + 1) % 13) / 13.0f - 0.5f;
    }
    float *da = nullptr, *db = nullptr, *dc = nullptr;
    if (!ok(cudaMalloc(&da, bytes), "cudaMalloc") || !ok(cudaMalloc(&db, bytes), "cudaMalloc") ||
        !ok(cudaMalloc(&dc, bytes), "cudaMalloc"))
        return 1;
    // One FMA counts 2 operations; compulsory bytes: A and B read once, C written once.
    const std::string gemm_range = "gemm " + std::to_string(n) + " {ops=" +
                                   std::to_string(2LL * n * n * n) +
                                   " bytes=" + std::to_string(3 * bytes) +
                                   " precision=fp32 engine=vector device=gpu}";
    const dim3 block(tile, tile), grid((n + tile - 1) / tile, (n + tile - 1) / tile);
    for (int s = 0; s < steps; ++s) {
        nvtxRangePushA("step");
        nvtxRangePushA("upload");
        if (!ok(cudaMemcpy(da, ha.data(), bytes, cudaMemcpyHostToDevice), "copy A") ||
            !ok(cudaMemcpy(db, hb.data(), bytes, cudaMemcpyHostToDevice), "copy B"))
            return 1;
        nvtxRangePop();
        nvtxRangePushA(gemm_range.c_str());
        gemm_tiled<<<grid, block>>>(da, db, dc, n);
        if (!ok(cudaGetLastError(), "launch") || !ok(cudaDeviceSynchronize(), "gemm")) return 1;
        nvtxRangePop();
        nvtxRangePushA("download");
        if (!ok(cudaMemcpy(hc.data(), dc, bytes, cudaMemcpyDeviceToHost), "copy C")) return 1;
        nvtxRangePop();
        nvtxRangePop();
    }
    // A wrong result must not pass for a measurement: one element against the CPU.
    const int r = n / 3, c = n / 2;
    double want = 0;
    for (int k = 0; k < n; ++k) want += static_cast<double>(ha[r * n + k]) * hb[static_cast<std::size_t>(k) * n + c];
    const double got = hc[static_cast<std::size_t>(r) * n + c];
    if (std::fabs(got - want) > 1e-3 * (1 + std::fabs(want))) {
        std::fprintf(stderr, "gpu_run_target: C[%d][%d] = %g, expected %g\n", r, c, got, want);
        return 1;
    }
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    std::printf("gpu_run_target: %d steps of a %d^3 fp32 GEMM, result checked\n", steps, n);
    return 0;
}
