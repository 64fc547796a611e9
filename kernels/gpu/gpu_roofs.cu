// GPU ceilings: FMA and tensor-core compute roofs (our kernels and cuBLAS as the library
// roof), HBM and L2 bandwidth, host<->device copies, launch and synchronisation latency.
// Each roof checks what it computed before it is timed.

#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>

#include "kernels/gpu/cublas_loader.hpp"
#include "kernels/gpu/gpu_common.cuh"
#include "kernels/gpu/gpu_wgmma.hpp"
#include "kernels/gpu/reference_cpu.hpp"

namespace ceiling::kernels::gpu {

namespace {

// ---- FMA roofs ---------------------------------------------------------------------------

constexpr int fma_chains = 8;
constexpr int fma_threads = 256, fma_blocks_per_sm = 8;

template <typename T>
__host__ __device__ T chain_start(int thread, int chain) {
    return static_cast<T>(thread % 1024 + chain) * static_cast<T>(1e-3);
}

template <typename T>
__global__ void fma_roof_kernel(T* out, T b, T c, int iterations) {
    T acc[fma_chains];
#pragma unroll
    for (int i = 0; i < fma_chains; ++i) acc[i] = chain_start<T>(static_cast<int>(threadIdx.x), i);
    for (int it = 0; it < iterations; ++it) {
#pragma unroll
        for (int i = 0; i < fma_chains; ++i) acc[i] = fma(acc[i], b, c);
    }
    T sum = 0;
#pragma unroll
    for (int i = 0; i < fma_chains; ++i) sum += acc[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

template <typename T>
GpuRoofResult fma_roof(int device, const TimingPlan& plan) {
    const int blocks = full_grid(device, fma_blocks_per_sm);
    const int iterations = 1 << 17;
    const T b = static_cast<T>(0.999), c = static_cast<T>(0.001);  // converges to 1: stays finite
    DeviceArray<T> out(static_cast<std::size_t>(blocks) * fma_threads);
    auto launch = [&] {
        fma_roof_kernel<T><<<blocks, fma_threads>>>(out.get(), b, c, iterations);
        CEILING_CUDA_LAUNCHED();
    };
    launch();
    const auto got = out.to_host();
    // The host repeats a few threads' chains with the same correctly rounded fma.
    for (int t : {0, 1, 255}) {
        T sum = 0;
        for (int i = 0; i < fma_chains; ++i) {
            T acc = chain_start<T>(t, i);
            for (int it = 0; it < iterations; ++it) acc = std::fma(acc, b, c);
            sum += acc;
        }
        if (got[static_cast<std::size_t>(t)] != sum)
            throw GpuError("FMA roof kernel computed " + std::to_string(got[static_cast<std::size_t>(t)]) +
                           " for thread " + std::to_string(t) + ", the host " + std::to_string(sum));
    }
    const double ops = 2.0 * fma_chains * iterations * blocks * fma_threads;
    GpuRoofResult r;
    for (double s : time_launches(launch, plan)) r.values.push_back(ops / s);
    r.detail = std::to_string(blocks) + " blocks x " + std::to_string(fma_threads) + " threads, " +
               std::to_string(iterations) + " iterations";
    return r;
}

// ---- tensor-core roofs (mma.sync from registers) -------------------------------------------

enum class MmaType { bf16, fp16, tf32 };
constexpr int mma_chains = 4;
constexpr int mma_threads = 256, mma_blocks_per_sm = 8;

template <MmaType type>
__device__ __forceinline__ void mma(float (&c)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
    if constexpr (type == MmaType::bf16)
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else if constexpr (type == MmaType::fp16)
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else
        asm volatile(
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <MmaType type>
__global__ void mma_roof_kernel(const std::uint32_t* a_frag, const std::uint32_t* b_frag, float* out, int iterations) {
    const int lane = static_cast<int>(threadIdx.x % 32);
    std::uint32_t a[4], b[2];
#pragma unroll
    for (int i = 0; i < 4; ++i) a[i] = a_frag[lane * 4 + i];
    b[0] = b_frag[lane * 2];
    b[1] = b_frag[lane * 2 + 1];
    float c[mma_chains][4] = {};
    for (int it = 0; it < iterations; ++it) {
#pragma unroll
        for (int ch = 0; ch < mma_chains; ++ch) mma<type>(c[ch], a, b);
    }
    float* o = out + (blockIdx.x * blockDim.x + threadIdx.x) * 4;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        float s = 0;
#pragma unroll
        for (int ch = 0; ch < mma_chains; ++ch) s += c[ch][j];
        o[j] = s;
    }
}

template <MmaType type>
GpuRoofResult mma_roof(int device, const TimingPlan& plan) {
    constexpr int k_dim = type == MmaType::tf32 ? 8 : 16;
    constexpr double ops_per_mma = 2.0 * 16 * 8 * k_dim;
    const ExactDotOperands o = exact_dot_operands(k_dim, 100);
    const float* alpha = o.alpha;
    const float* beta = o.beta;
    const double dot = o.dot, abs_dot = o.abs_dot;
    auto bits16 = [](float f) -> std::uint32_t {
        return type == MmaType::fp16 ? exact_half_bits(f) : to_bf16_bits(f);
    };
    std::vector<std::uint32_t> a(32 * 4), b(32 * 2);
    for (int lane = 0; lane < 32; ++lane) {
        const int t = lane % 4;
        if constexpr (type == MmaType::tf32) {
            // m16n8k8: a0/a1 hold column t, a2/a3 column t+4; b0 row t, b1 row t+4.
            a[lane * 4 + 0] = a[lane * 4 + 1] = float_bits(alpha[t]);
            a[lane * 4 + 2] = a[lane * 4 + 3] = float_bits(alpha[t + 4]);
            b[lane * 2 + 0] = float_bits(beta[t]);
            b[lane * 2 + 1] = float_bits(beta[t + 4]);
        } else {
            // m16n8k16: a0/a1 columns 2t, 2t+1; a2/a3 columns 2t+8, 2t+9 (low half first);
            // b0 rows 2t, 2t+1; b1 rows 2t+8, 2t+9.
            auto pack = [&](const float* v, int k) { return bits16(v[k]) | (bits16(v[k + 1]) << 16); };
            a[lane * 4 + 0] = a[lane * 4 + 1] = pack(alpha, 2 * t);
            a[lane * 4 + 2] = a[lane * 4 + 3] = pack(alpha, 2 * t + 8);
            b[lane * 2 + 0] = pack(beta, 2 * t);
            b[lane * 2 + 1] = pack(beta, 2 * t + 8);
        }
    }
    DeviceArray<std::uint32_t> da(a.size()), db(b.size());
    CEILING_CUDA(cudaMemcpy(da.get(), a.data(), da.bytes(), cudaMemcpyHostToDevice));
    CEILING_CUDA(cudaMemcpy(db.get(), b.data(), db.bytes(), cudaMemcpyHostToDevice));
    const int blocks = full_grid(device, mma_blocks_per_sm);
    const int iterations = type == MmaType::tf32 ? 1 << 14 : 1 << 15;
    DeviceArray<float> out(static_cast<std::size_t>(blocks) * mma_threads * 4);
    auto launch = [&] {
        mma_roof_kernel<type><<<blocks, mma_threads>>>(da.get(), db.get(), out.get(), iterations);
        CEILING_CUDA_LAUNCHED();
    };
    launch();
    const auto got = out.to_host();
    ErrorTracker err;
    const double expected = static_cast<double>(mma_chains) * iterations * dot;
    const double scale = static_cast<double>(mma_chains) * iterations * abs_dot;
    for (std::size_t i = 0; i < got.size(); i += got.size() / 4096 + 1) err.add(got[i], expected, scale);
    err.add(got.back(), expected, scale);
    require(err.result(1e-2, "|c - chains x iterations x sum_k a_k b_k| / the same with |a_k b_k|"), "mma roof");
    const double ops = ops_per_mma * mma_chains * iterations * (static_cast<double>(blocks) * mma_threads / 32);
    GpuRoofResult r;
    for (double s : time_launches(launch, plan)) r.values.push_back(ops / s);
    r.detail = std::to_string(blocks) + " blocks x " + std::to_string(mma_threads / 32) + " warps, " +
               std::to_string(mma_chains) + " accumulators, " + std::to_string(iterations) + " iterations";
    return r;
}

// ---- cuBLAS library roofs -------------------------------------------------------------------

GpuRoofResult cublas_roof(WorkPrecision p, const TimingPlan& plan) {
    const int n = 8192;
    const std::size_t count = static_cast<std::size_t>(n) * n;
    const bool fp32_inputs = p == WorkPrecision::tf32;
    DeviceArray<float> a32, b32;
    DeviceArray<std::uint16_t> a16, b16;
    if (fp32_inputs) {
        a32 = DeviceArray<float>(count);
        b32 = DeviceArray<float>(count);
        fill_uniform(a32.get(), count, seed_a);
        fill_uniform(b32.get(), count, seed_b);
    } else {
        a16 = DeviceArray<std::uint16_t>(count);
        b16 = DeviceArray<std::uint16_t>(count);
        if (p == WorkPrecision::bf16) {
            fill_uniform_bf16(a16.get(), count, seed_a);
            fill_uniform_bf16(b16.get(), count, seed_b);
        } else {
            fill_uniform_half(a16.get(), count, seed_a);
            fill_uniform_half(b16.get(), count, seed_b);
        }
    }
    DeviceArray<float> c(count);
    cublasHandle_t handle;
    const Cublas& api = cublas();
    cublas_check(api.create(&handle), "cublasCreate");
    std::unique_ptr<cublasContext, cublasStatus_t (*)(cublasHandle_t)> guard(handle, api.destroy);
    const float alpha = 1, beta = 0;
    const cudaDataType_t in_type = fp32_inputs ? CUDA_R_32F : p == WorkPrecision::bf16 ? CUDA_R_16BF : CUDA_R_16F;
    const cublasComputeType_t compute = fp32_inputs ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    const void* a = fp32_inputs ? static_cast<const void*>(a32.get()) : a16.get();
    const void* b = fp32_inputs ? static_cast<const void*>(b32.get()) : b16.get();
    auto launch = [&] {
        cublas_check(api.gemm_ex(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, b, in_type, n, a, in_type, n, &beta,
                                  c.get(), CUDA_R_32F, n, compute, CUBLAS_GEMM_DEFAULT),
                     "cublasGemmEx");
    };
    launch();
    CEILING_CUDA(cudaDeviceSynchronize());
    const auto got = c.to_host();
    if (p == WorkPrecision::bf16) {
        // Row-major C = A B through the column-major library (B and A swapped): check samples.
        const GemmShape s{n, n, n, true};
        ErrorTracker err;
        for (auto idx : sample_indices(count, 64, 5)) {
            double abs = 0;
            const double ref = gemm_reference(s, static_cast<int>(idx / n), static_cast<int>(idx % n), &abs);
            err.add(got[idx], ref, abs);
        }
        require(err.result(1e-3, "|c - ref| / sum|a b| over 64 samples"), "cuBLAS bf16 roof");
    } else {
        for (std::size_t i = 0; i < got.size(); i += got.size() / 1024)
            if (!std::isfinite(got[i])) throw GpuError("cuBLAS roof produced a non-finite value");
    }
    const double ops = 2.0 * n * n * static_cast<double>(n);
    GpuRoofResult r;
    for (double s : time_launches(launch, plan)) r.values.push_back(ops / s);
    r.detail = "8192x8192x8192, random inputs";
    r.working_set_bytes = a32.bytes() + b32.bytes() + a16.bytes() + b16.bytes() + c.bytes();
    return r;
}

// ---- bandwidth -------------------------------------------------------------------------------

constexpr int bw_threads = 512, bw_blocks_per_sm = 4;

// Element i holds (i % 1024) / 1024 in each lane: not zeros, and the sum is known in closed form.
__global__ void pattern_kernel(float4* p, std::size_t n) {
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
        const float v = static_cast<float>(i % 1024) / 1024.0f;
        p[i] = make_float4(v, v, v, v);
    }
}

__global__ void read_kernel(const float4* __restrict__ p, std::size_t n, float* sums) {
    float s = 0;
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
        const float4 v = p[i];
        s += (v.x + v.y) + (v.z + v.w);
    }
    sums[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__global__ void l2_read_kernel(const float4* __restrict__ p, std::size_t n, int repeats, float* sums) {
    float s = 0;
    for (int r = 0; r < repeats; ++r)
        for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
             i += std::size_t{gridDim.x} * blockDim.x) {
            const float4 v = __ldcg(p + i);  // cached in L2 only, so L1 does not serve the re-reads
            s += (v.x + v.y) + (v.z + v.w);
        }
    sums[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__global__ void write_kernel(float4* p, std::size_t n, float v) {
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
        p[i] = make_float4(v, v + 1, v + 2, v + 3);
}

__global__ void copy_kernel(const float4* __restrict__ src, float4* __restrict__ dst, std::size_t n) {
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
        dst[i] = src[i];
}

// Sum of pattern_kernel's values over `n` float4s, each read `repeats` times.
double pattern_sum(std::size_t n, int repeats) {
    const double full = static_cast<double>(n / 1024) * (1023.0 * 1024.0 / 2.0) / 1024.0;
    double partial = 0;
    for (std::size_t i = 0; i < n % 1024; ++i) partial += static_cast<double>(i) / 1024.0;
    return 4.0 * (full + partial) * repeats;
}

void check_sums(const DeviceArray<float>& sums, double expected, const char* what) {
    const auto h = sums.to_host();
    const double got = std::accumulate(h.begin(), h.end(), 0.0);
    if (std::fabs(got - expected) > 1e-4 * expected)
        throw GpuError(std::string(what) + " read kernel summed " + std::to_string(got) + ", expected " +
                       std::to_string(expected));
}

GpuRoofResult bandwidth_roof(std::string_view pattern, int device, const TimingPlan& plan) {
    const int blocks = full_grid(device, bw_blocks_per_sm);
    DeviceArray<float> sums(static_cast<std::size_t>(blocks) * bw_threads);
    GpuRoofResult r;
    std::vector<double> seconds;
    double bytes = 0;
    if (pattern == "read") {
        const std::size_t n = (std::size_t{2} << 30) / sizeof(float4);
        DeviceArray<float4> buf(n);
        pattern_kernel<<<blocks, bw_threads>>>(buf.get(), n);
        CEILING_CUDA_LAUNCHED();
        auto launch = [&] {
            read_kernel<<<blocks, bw_threads>>>(buf.get(), n, sums.get());
            CEILING_CUDA_LAUNCHED();
        };
        launch();
        check_sums(sums, pattern_sum(n, 1), "HBM");
        seconds = time_launches(launch, plan);
        bytes = static_cast<double>(buf.bytes());
        r.working_set_bytes = buf.bytes();
    } else if (pattern == "write") {
        const std::size_t n = (std::size_t{2} << 30) / sizeof(float4);
        DeviceArray<float4> buf(n);
        poison(buf.get(), buf.bytes());
        auto launch = [&] {
            write_kernel<<<blocks, bw_threads>>>(buf.get(), n, 1.5f);
            CEILING_CUDA_LAUNCHED();
        };
        launch();
        float4 last{};
        CEILING_CUDA(cudaMemcpy(&last, buf.get() + n - 1, sizeof last, cudaMemcpyDeviceToHost));
        if (last.x != 1.5f || last.w != 4.5f) throw GpuError("HBM write kernel left the buffer unwritten");
        seconds = time_launches(launch, plan);
        bytes = static_cast<double>(buf.bytes());
        r.working_set_bytes = buf.bytes();
    } else if (pattern == "copy" || pattern == "copy_memcpy") {
        const std::size_t n = (std::size_t{1} << 30) / sizeof(float4);
        DeviceArray<float4> src(n), dst(n);
        pattern_kernel<<<blocks, bw_threads>>>(src.get(), n);
        CEILING_CUDA_LAUNCHED();
        poison(dst.get(), dst.bytes());
        const bool library = pattern == "copy_memcpy";
        auto launch = [&] {
            if (library) {
                CEILING_CUDA(cudaMemcpyAsync(dst.get(), src.get(), src.bytes(), cudaMemcpyDeviceToDevice));
            } else {
                copy_kernel<<<blocks, bw_threads>>>(src.get(), dst.get(), n);
                CEILING_CUDA_LAUNCHED();
            }
        };
        launch();
        read_kernel<<<blocks, bw_threads>>>(dst.get(), n, sums.get());
        CEILING_CUDA_LAUNCHED();
        check_sums(sums, pattern_sum(n, 1), "HBM copy");
        seconds = time_launches(launch, plan);
        bytes = 2.0 * static_cast<double>(src.bytes());  // read + written
        r.working_set_bytes = 2 * src.bytes();
    } else if (pattern == "l2_read") {
        int l2 = 0;
        CEILING_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
        const std::size_t n = static_cast<std::size_t>(l2) / 4 / sizeof(float4);
        const int repeats = static_cast<int>(std::max<std::size_t>(1, (std::size_t{16} << 30) / (n * sizeof(float4))));
        DeviceArray<float4> buf(n);
        pattern_kernel<<<blocks, bw_threads>>>(buf.get(), n);
        CEILING_CUDA_LAUNCHED();
        auto launch = [&] {
            l2_read_kernel<<<blocks, bw_threads>>>(buf.get(), n, repeats, sums.get());
            CEILING_CUDA_LAUNCHED();
        };
        launch();
        check_sums(sums, pattern_sum(n, repeats), "L2");
        seconds = time_launches(launch, plan);
        bytes = static_cast<double>(buf.bytes()) * repeats;
        r.working_set_bytes = buf.bytes();
        r.detail = std::to_string(repeats) + " passes";
    } else {
        throw GpuError("unknown bandwidth pattern " + std::string(pattern));
    }
    for (double s : seconds) r.values.push_back(bytes / s);
    return r;
}

struct PinnedFree {
    void operator()(void* p) const { cudaFreeHost(p); }
};

GpuRoofResult pcie_roof(std::string_view pattern, const TimingPlan& plan) {
    const std::size_t bytes = std::size_t{256} << 20;
    const bool pinned = pattern.find("pinned") != std::string_view::npos;  // CUDA code is C++17
    const bool h2d = pattern.substr(0, 3) == "h2d";
    std::unique_ptr<void, PinnedFree> pinned_buf;
    std::vector<unsigned char> pageable;
    void* host = nullptr;
    if (pinned) {
        CEILING_CUDA(cudaMallocHost(&host, bytes));
        pinned_buf.reset(host);
    } else {
        pageable.resize(bytes);
        host = pageable.data();
    }
    for (std::size_t i = 0; i < bytes; i += 4096) static_cast<unsigned char*>(host)[i] = static_cast<unsigned char>(i >> 12);
    DeviceArray<unsigned char> dev(bytes);
    auto launch = [&] {
        if (h2d)
            CEILING_CUDA(cudaMemcpy(dev.get(), host, bytes, cudaMemcpyHostToDevice));
        else
            CEILING_CUDA(cudaMemcpy(host, dev.get(), bytes, cudaMemcpyDeviceToHost));
    };
    GpuRoofResult r;
    for (double s : time_launches(launch, plan)) r.values.push_back(static_cast<double>(bytes) / s);
    r.working_set_bytes = bytes;
    return r;
}

// ---- latency ---------------------------------------------------------------------------------

__global__ void empty_kernel() {}

GpuRoofResult latency_roof(std::string_view level, const TimingPlan& plan) {
    using clock = std::chrono::steady_clock;
    const int launches = level == "launch" ? 1000 : 100;
    auto batch = [&] {
        const auto t0 = clock::now();
        for (int i = 0; i < launches; ++i) {
            empty_kernel<<<1, 1>>>();
            if (level == "sync") CEILING_CUDA(cudaStreamSynchronize(nullptr));
        }
        const auto t1 = clock::now();
        CEILING_CUDA(cudaDeviceSynchronize());
        CEILING_CUDA_LAUNCHED();
        return std::chrono::duration<double>(t1 - t0).count() / launches;
    };
    for (int i = 0; i < plan.warmup; ++i) batch();
    GpuRoofResult r;
    for (int i = 0; i < plan.repeats; ++i) r.values.push_back(batch());
    r.detail = std::to_string(launches) + " launches per sample";
    return r;
}

}  // namespace

namespace {

using RoofRunner = GpuRoofResult (*)(const GpuRoofSpec&, int, const TimingPlan&);
constexpr std::pair<std::string_view, RoofRunner> runners[] = {
    {"fp32_fma",
     [](const GpuRoofSpec&, int d, const TimingPlan& p) { return fma_roof<float>(d, p); }},
    {"fp64_fma",
     [](const GpuRoofSpec&, int d, const TimingPlan& p) { return fma_roof<double>(d, p); }},
    {"bf16_mma",
     [](const GpuRoofSpec&, int d, const TimingPlan& p) { return mma_roof<MmaType::bf16>(d, p); }},
    {"bf16_wgmma",
     [](const GpuRoofSpec&, int d, const TimingPlan& p) { return wgmma_roof(d, p, false); }},
    {"fp16_wgmma",
     [](const GpuRoofSpec&, int d, const TimingPlan& p) { return wgmma_roof(d, p, true); }},
    {"fp16_mma",
     [](const GpuRoofSpec&, int d, const TimingPlan& p) { return mma_roof<MmaType::fp16>(d, p); }},
    {"tf32_mma",
     [](const GpuRoofSpec&, int d, const TimingPlan& p) { return mma_roof<MmaType::tf32>(d, p); }},
    {"bf16_cublas",
     [](const GpuRoofSpec& r, int, const TimingPlan& p) { return cublas_roof(r.precision, p); }},
    {"fp16_cublas",
     [](const GpuRoofSpec& r, int, const TimingPlan& p) { return cublas_roof(r.precision, p); }},
    {"tf32_cublas",
     [](const GpuRoofSpec& r, int, const TimingPlan& p) { return cublas_roof(r.precision, p); }},
    {"hbm_read",
     [](const GpuRoofSpec&, int d, const TimingPlan& p) { return bandwidth_roof("read", d, p); }},
    {"hbm_write",
     [](const GpuRoofSpec&, int d, const TimingPlan& p) { return bandwidth_roof("write", d, p); }},
    {"hbm_copy",
     [](const GpuRoofSpec&, int d, const TimingPlan& p) { return bandwidth_roof("copy", d, p); }},
    {"hbm_copy_memcpy", [](const GpuRoofSpec&, int d,
                           const TimingPlan& p) { return bandwidth_roof("copy_memcpy", d, p); }},
    {"l2_read", [](const GpuRoofSpec&, int d,
                   const TimingPlan& p) { return bandwidth_roof("l2_read", d, p); }},
    {"pcie_h2d_pinned",
     [](const GpuRoofSpec& r, int, const TimingPlan& p) { return pcie_roof(r.pattern, p); }},
    {"pcie_d2h_pinned",
     [](const GpuRoofSpec& r, int, const TimingPlan& p) { return pcie_roof(r.pattern, p); }},
    {"pcie_h2d_pageable",
     [](const GpuRoofSpec& r, int, const TimingPlan& p) { return pcie_roof(r.pattern, p); }},
    {"pcie_d2h_pageable",
     [](const GpuRoofSpec& r, int, const TimingPlan& p) { return pcie_roof(r.pattern, p); }},
    {"launch",
     [](const GpuRoofSpec& r, int, const TimingPlan& p) { return latency_roof(r.level, p); }},
    {"launch_sync",
     [](const GpuRoofSpec& r, int, const TimingPlan& p) { return latency_roof(r.level, p); }},
};

}  // namespace

GpuRoofResult run_gpu_roof(const GpuRoofSpec& roof, int device, const TimingPlan& plan) {
    use_device(device);
    for (const auto& [name, run] : runners)
        if (name == roof.name) return run(roof, device, plan);
    throw GpuError("no GPU roof named " + std::string(roof.name));
}

}  // namespace ceiling::kernels::gpu
