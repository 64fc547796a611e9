// The GPU reference kernels: GEMM (naive, shared-memory tiles, cuBLAS), GEMV decode (fp32,
// bf16, int8 weights, 16-byte loads), depthwise 3x3 convolution, bitmask-parallel NMS and
// bilinear resize. Each is checked against reference_cpu.cpp on random data before timing.


#include <cstdio>
#include <memory>

#include "kernels/gpu/cublas_loader.hpp"
#include "kernels/gpu/gpu_common.cuh"
#include "kernels/gpu/reference_cpu.hpp"

namespace ceiling::kernels::gpu {


namespace {

class Prepared {
public:
    virtual ~Prepared() = default;
    virtual void launch() = 0;  // one run: enqueues its kernel(s) on the default stream
    virtual Verification verify() = 0;
    virtual int launches() const { return 1; }
};

std::vector<int> dims(const std::string& shape) {
    std::vector<int> d;
    int v = 0;
    bool in = false;
    for (char ch : shape) {
        if (ch >= '0' && ch <= '9') {
            v = v * 10 + (ch - '0');
            in = true;
        } else if (in) {
            d.push_back(v);
            v = 0;
            in = false;
        }
    }
    if (in) d.push_back(v);
    return d;
}

// ---- GEMM --------------------------------------------------------------------------------------

__global__ void gemm_naive_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= m || j >= n) return;
    float s = 0;
    for (int p = 0; p < k; ++p) s += a[static_cast<std::size_t>(i) * k + p] * b[static_cast<std::size_t>(p) * n + j];
    c[static_cast<std::size_t>(i) * n + j] = s;
}

constexpr int tile_m = 128, tile_n = 128, tile_k = 8, thread_m = 8, thread_n = 8, tiled_threads = 256;

// 128x128 tile of C per block of 256 threads, each thread an 8x8 block in registers; A and
// B stream through shared memory 8 columns/rows at a time with 16-byte loads. M, N multiples
// of 128 and K of 8 (the standard shapes are).
__global__ void __launch_bounds__(tiled_threads) gemm_tiled_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                                                float* __restrict__ c, int m, int n, int k) {
    __shared__ float as[tile_k][tile_m];  // A tile, transposed
    __shared__ __align__(16) float bs[tile_k][tile_n];
    const int tid = static_cast<int>(threadIdx.x);
    const int row0 = blockIdx.y * tile_m, col0 = blockIdx.x * tile_n;
    const int tr = tid / 16, tc = tid % 16;
    float acc[thread_m][thread_n] = {};
    const int a_row = tid / 2, a_col = (tid % 2) * 4;
    const int b_row = tid / 32, b_col = (tid % 32) * 4;
    for (int k0 = 0; k0 < k; k0 += tile_k) {
        const float4 va = *reinterpret_cast<const float4*>(a + static_cast<std::size_t>(row0 + a_row) * k + k0 + a_col);
        as[a_col + 0][a_row] = va.x;
        as[a_col + 1][a_row] = va.y;
        as[a_col + 2][a_row] = va.z;
        as[a_col + 3][a_row] = va.w;
        *reinterpret_cast<float4*>(&bs[b_row][b_col]) =
            *reinterpret_cast<const float4*>(b + static_cast<std::size_t>(k0 + b_row) * n + col0 + b_col);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < tile_k; ++kk) {
            float ra[thread_m], rb[thread_n];
#pragma unroll
            for (int i = 0; i < thread_m; ++i) ra[i] = as[kk][tr * thread_m + i];
#pragma unroll
            for (int j = 0; j < thread_n; ++j) rb[j] = bs[kk][tc * thread_n + j];
#pragma unroll
            for (int i = 0; i < thread_m; ++i)
#pragma unroll
                for (int j = 0; j < thread_n; ++j) acc[i][j] += ra[i] * rb[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < thread_m; ++i) {
        float* out = c + static_cast<std::size_t>(row0 + tr * thread_m + i) * n + col0 + tc * thread_n;
        *reinterpret_cast<float4*>(out) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        *reinterpret_cast<float4*>(out + 4) = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
    }
}

enum class GemmImpl { naive, tiled, cublas };

class Gemm : public Prepared {
public:
    Gemm(const GpuCase& c, GemmImpl impl) : impl_(impl) {
        const auto d = dims(c.shape);
        s_ = {d.at(0), d.at(1), d.at(2), c.problem == "bf16"};
        if (impl == GemmImpl::tiled && (s_.m % tile_m || s_.n % tile_n || s_.k % tile_k))
            throw GpuError("tiled GEMM needs M, N multiples of 128 and K of 8: " + c.shape);
        const std::size_t mk = static_cast<std::size_t>(s_.m) * s_.k, kn = static_cast<std::size_t>(s_.k) * s_.n;
        if (s_.bf16_inputs) {
            a16_ = DeviceArray<std::uint16_t>(mk);
            b16_ = DeviceArray<std::uint16_t>(kn);
            fill_uniform_bf16(a16_.get(), mk, seed_a);
            fill_uniform_bf16(b16_.get(), kn, seed_b);
        } else {
            a_ = DeviceArray<float>(mk);
            b_ = DeviceArray<float>(kn);
            fill_uniform(a_.get(), mk, seed_a);
            fill_uniform(b_.get(), kn, seed_b);
        }
        c_ = DeviceArray<float>(static_cast<std::size_t>(s_.m) * s_.n);
        poison(c_.get(), c_.bytes());
        if (impl == GemmImpl::cublas) {
            cublas_check(cublas().create(&handle_), "cublasCreate");
            cublas_check(cublas().set_math_mode(handle_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
        }
    }
    ~Gemm() override {
        if (handle_) cublas().destroy(handle_);
    }
    void launch() override {
        switch (impl_) {
            case GemmImpl::naive: {
                const dim3 block(16, 16), grid((s_.n + 15) / 16, (s_.m + 15) / 16);
                gemm_naive_kernel<<<grid, block>>>(a_.get(), b_.get(), c_.get(), s_.m, s_.n, s_.k);
                CEILING_CUDA_LAUNCHED();
                break;
            }
            case GemmImpl::tiled: {
                const dim3 grid(s_.n / tile_n, s_.m / tile_m);
                gemm_tiled_kernel<<<grid, tiled_threads>>>(a_.get(), b_.get(), c_.get(), s_.m, s_.n, s_.k);
                CEILING_CUDA_LAUNCHED();
                break;
            }
            case GemmImpl::cublas: {
                // Row-major C = A B is column-major C^T = B^T A^T: pass B first.
                const float alpha = 1, beta = 0;
                const cudaDataType_t t = s_.bf16_inputs ? CUDA_R_16BF : CUDA_R_32F;
                const void* a = s_.bf16_inputs ? static_cast<const void*>(a16_.get()) : a_.get();
                const void* b = s_.bf16_inputs ? static_cast<const void*>(b16_.get()) : b_.get();
                cublas_check(cublas().gemm_ex(handle_, CUBLAS_OP_N, CUBLAS_OP_N, s_.n, s_.m, s_.k, &alpha, b, t, s_.n, a, t,
                                          s_.k, &beta, c_.get(), CUDA_R_32F, s_.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                             "cublasGemmEx");
                break;
            }
        }
    }
    Verification verify() override {
        CEILING_CUDA(cudaDeviceSynchronize());
        const auto c = c_.to_host();
        ErrorTracker err;
        const std::size_t samples = s_.k > 4096 ? 64 : 256;
        for (auto idx : sample_indices(c.size(), samples, 7)) {
            double abs = 0;
            const double ref = gemm_reference(s_, static_cast<int>(idx / s_.n), static_cast<int>(idx % s_.n), &abs);
            err.add(c[idx], ref, abs);
        }
        return err.result(s_.bf16_inputs ? 1e-3 : 1e-4,
                          "|c - ref| / sum|a b|, " + std::to_string(samples) + " sampled outputs");
    }

private:
    GemmImpl impl_;
    GemmShape s_{};
    DeviceArray<float> a_, b_, c_;
    DeviceArray<std::uint16_t> a16_, b16_;
    cublasHandle_t handle_ = nullptr;
};

// ---- GEMV decode -----------------------------------------------------------------------------

__device__ __forceinline__ float dot4(const float4& x, float w0, float w1, float w2, float w3) {
    return x.x * w0 + x.y * w1 + x.z * w2 + x.w * w3;
}

// One warp per gemv_rows output rows; each lane reads 16 bytes of weights at a time (4 fp32,
// 8 bf16 or 16 int8) from each row, coalesced across the warp, and the matching x once for
// all of them. One row per warp read x as many times as the rows: 4 bytes of x per int8
// weight, and on an H200 the int8 GEMV sat at the L2's bandwidth (38 % of HBM's; x re-read at
// 6.6 TB/s against an L2 roof of 7.5), bf16 at 83 %.
constexpr int gemv_rows = 4;

// Byte j of u (an int8 plus 128) widened to float without I2F, a quarter-rate conversion:
// placed in the low mantissa bits of 2^23 (one PRMT), the float is 2^23 + 128 + b exactly,
// and one FADD leaves b. With x read once per 4 rows the int8 GEMV still ran at 57 % of HBM
// bandwidth on an H200, issuing an I2F per weight; with this, 77 % (2026-12-04).
__device__ __forceinline__ float int8_as_float(unsigned int u, unsigned int j) {
    return __uint_as_float(__byte_perm(u, 0x4B000000u, 0x7440u | j)) - 8388736.0f;
}

// acc += x . (the 16 bytes v of weights, widened to fp32)
template <WeightType type>
__device__ __forceinline__ float dot16(const float4* __restrict__ xv, const uint4& v) {
    if constexpr (type == WeightType::fp32) {
        return dot4(xv[0], __uint_as_float(v.x), __uint_as_float(v.y), __uint_as_float(v.z),
                    __uint_as_float(v.w));
    } else if constexpr (type == WeightType::bf16) {
        const unsigned int words[4] = {v.x, v.y, v.z, v.w};
        float acc = 0;
#pragma unroll
        for (int q = 0; q < 2; ++q)
            acc += dot4(xv[q], __uint_as_float(words[2 * q] << 16),
                        __uint_as_float(words[2 * q] & 0xffff0000u),
                        __uint_as_float(words[2 * q + 1] << 16),
                        __uint_as_float(words[2 * q + 1] & 0xffff0000u));
        return acc;
    } else {
        const unsigned int words[4] = {v.x, v.y, v.z, v.w};
        float acc = 0;
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const unsigned int u = words[q] ^ 0x80808080u;  // each byte b + 128, unsigned
            acc += dot4(xv[q], int8_as_float(u, 0), int8_as_float(u, 1), int8_as_float(u, 2),
                        int8_as_float(u, 3));
        }
        return acc;
    }
}

template <WeightType type>
__global__ void gemv_kernel(const uint4* __restrict__ w, const float4* __restrict__ x, const float* __restrict__ scale,
                            float* __restrict__ y, int m, int k) {
    constexpr int per16 = type == WeightType::fp32 ? 4 : type == WeightType::bf16 ? 8 : 16;
    const int warp = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32);
    const int lane = static_cast<int>(threadIdx.x % 32);
    const int row0 = warp * gemv_rows;
    if (row0 >= m) return;  // m is a multiple of gemv_rows (the setup checks)
    const int chunks = k / per16;
    const uint4* rows = w + static_cast<std::size_t>(row0) * chunks;
    float acc[gemv_rows] = {};
#pragma unroll 2
    for (int ch = lane; ch < chunks; ch += 32) {
        float4 xv[per16 / 4];
#pragma unroll
        for (int q = 0; q < per16 / 4; ++q)
            xv[q] = __ldg(x + static_cast<std::size_t>(ch) * (per16 / 4) + q);
#pragma unroll
        for (int r = 0; r < gemv_rows; ++r)
            acc[r] += dot16<type>(xv, rows[static_cast<std::size_t>(r) * chunks + ch]);
    }
#pragma unroll
    for (int r = 0; r < gemv_rows; ++r) {
#pragma unroll
        for (int off = 16; off > 0; off /= 2) acc[r] += __shfl_down_sync(0xffffffffu, acc[r], off);
        if (lane == 0) y[row0 + r] = type == WeightType::int8 ? acc[r] * scale[row0 + r] : acc[r];
    }
}

__global__ void gemv_scales_kernel(float* scale, int m) {
    // Mirrors gemv_scale() in reference_cpu.cpp.
    for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < m; r += gridDim.x * blockDim.x)
        scale[r] = (0.5f + 0.5f * unit_at(seed_scale, static_cast<std::uint64_t>(r))) / 127.0f;
}

class Gemv : public Prepared {
public:
    explicit Gemv(const GpuCase& c) {
        const auto d = dims(c.shape);
        s_ = {d.at(0), d.at(1),
              c.problem == "fp32" ? WeightType::fp32 : c.problem == "bf16" ? WeightType::bf16 : WeightType::int8};
        if (s_.k % 16) throw GpuError("GEMV needs K a multiple of 16: " + c.shape);
        if (s_.m % gemv_rows)
            throw GpuError("GEMV needs M a multiple of " + std::to_string(gemv_rows) + ": " +
                           c.shape);
        const std::size_t count = static_cast<std::size_t>(s_.m) * s_.k;
        const std::size_t elem = s_.weights == WeightType::fp32 ? 4 : s_.weights == WeightType::bf16 ? 2 : 1;
        w_ = DeviceArray<uint4>(count * elem / 16);
        if (s_.weights == WeightType::fp32) fill_uniform(reinterpret_cast<float*>(w_.get()), count, seed_a);
        if (s_.weights == WeightType::bf16) fill_uniform_bf16(reinterpret_cast<std::uint16_t*>(w_.get()), count, seed_a);
        if (s_.weights == WeightType::int8) fill_int8(reinterpret_cast<std::int8_t*>(w_.get()), count, seed_a);
        x_ = DeviceArray<float>(static_cast<std::size_t>(s_.k));
        fill_uniform(x_.get(), x_.size(), seed_x);
        scale_ = DeviceArray<float>(static_cast<std::size_t>(s_.m));
        gemv_scales_kernel<<<64, 256>>>(scale_.get(), s_.m);
        CEILING_CUDA_LAUNCHED();
        y_ = DeviceArray<float>(static_cast<std::size_t>(s_.m));
        poison(y_.get(), y_.bytes());
    }
    void launch() override {
        const int threads = 256, blocks = (s_.m / gemv_rows * 32 + threads - 1) / threads;
        const auto* x = reinterpret_cast<const float4*>(x_.get());
        switch (s_.weights) {
            case WeightType::fp32: gemv_kernel<WeightType::fp32><<<blocks, threads>>>(w_.get(), x, scale_.get(), y_.get(), s_.m, s_.k); break;
            case WeightType::bf16: gemv_kernel<WeightType::bf16><<<blocks, threads>>>(w_.get(), x, scale_.get(), y_.get(), s_.m, s_.k); break;
            case WeightType::int8: gemv_kernel<WeightType::int8><<<blocks, threads>>>(w_.get(), x, scale_.get(), y_.get(), s_.m, s_.k); break;
        }
        CEILING_CUDA_LAUNCHED();
    }
    Verification verify() override {
        CEILING_CUDA(cudaDeviceSynchronize());
        const auto y = y_.to_host();
        ErrorTracker err;
        for (auto r : sample_indices(y.size(), 256, 9)) {
            double abs = 0;
            const double ref = gemv_reference(s_, static_cast<int>(r), &abs);
            err.add(y[r], ref, abs);
        }
        for (float v : y) err.add(v, v, 1);  // every row written (a NaN fails)
        return err.result(1e-5, "|y - ref| / sum|w x|, 256 sampled rows");
    }

private:
    GemvShape s_{};
    DeviceArray<uint4> w_;
    DeviceArray<float> x_, scale_, y_;
};

// ---- depthwise convolution ------------------------------------------------------------------

__global__ void depthwise_kernel(const float* __restrict__ in, const float* __restrict__ filter, float* __restrict__ out,
                                 int n, int c, int h, int w) {
    const std::size_t total = static_cast<std::size_t>(n) * c * h * w;
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total; i += std::size_t{gridDim.x} * blockDim.x) {
        const int x = static_cast<int>(i % w), y = static_cast<int>((i / w) % h);
        const std::size_t plane = i / (static_cast<std::size_t>(h) * w);
        const int ch = static_cast<int>(plane % c);
        const float* p = in + plane * h * w;
        const float* f = filter + ch * 9;
        float s = 0;
#pragma unroll
        for (int ky = 0; ky < 3; ++ky) {
            const int iy = y + ky - 1;
            if (iy < 0 || iy >= h) continue;
#pragma unroll
            for (int kx = 0; kx < 3; ++kx) {
                const int ix = x + kx - 1;
                if (ix < 0 || ix >= w) continue;
                s += __ldg(p + static_cast<std::size_t>(iy) * w + ix) * __ldg(f + ky * 3 + kx);
            }
        }
        out[i] = s;
    }
}

class DepthwiseConv : public Prepared {
public:
    explicit DepthwiseConv(const GpuCase& c) {
        const auto d = dims(c.shape);
        s_ = {d.at(0), d.at(1), d.at(2), d.at(3)};
        const std::size_t count = static_cast<std::size_t>(s_.n) * s_.c * s_.h * s_.w;
        in_ = DeviceArray<float>(count);
        out_ = DeviceArray<float>(count);
        filter_ = DeviceArray<float>(static_cast<std::size_t>(s_.c) * 9);
        fill_uniform(in_.get(), count, seed_image);
        fill_uniform(filter_.get(), filter_.size(), seed_filter);
        poison(out_.get(), out_.bytes());
    }
    void launch() override {
        depthwise_kernel<<<4096, 256>>>(in_.get(), filter_.get(), out_.get(), s_.n, s_.c, s_.h, s_.w);
        CEILING_CUDA_LAUNCHED();
    }
    Verification verify() override {
        CEILING_CUDA(cudaDeviceSynchronize());
        const auto out = out_.to_host();
        ErrorTracker err;
        for (auto i : sample_indices(out.size(), 2048, 3)) {
            double abs = 0;
            const double ref = conv_reference(s_, i, &abs);
            err.add(out[i], ref, abs);
        }
        for (std::size_t i = 0; i < out.size(); i += 97) err.add(out[i], out[i], 1);
        return err.result(1e-5, "|out - ref| / sum|in w|, 2048 sampled outputs");
    }

private:
    ConvShape s_{};
    DeviceArray<float> in_, out_, filter_;
};

// ---- NMS -------------------------------------------------------------------------------------

constexpr int nms_block = 64;

// mask[i][cb] bit t: box i suppresses box cb*64 + t (only boxes after i). Same arithmetic as
// nms_suppresses() on the host; the _rn intrinsics keep nvcc from fusing into FMAs.
__global__ void nms_mask_kernel(const Box* __restrict__ boxes, int n, float threshold, unsigned long long* mask) {
    const int row_block = blockIdx.y, col_block = blockIdx.x;
    const int col_blocks = (n + nms_block - 1) / nms_block;
    __shared__ Box cols[nms_block];
    const int t = static_cast<int>(threadIdx.x);
    if (col_block * nms_block + t < n) cols[t] = boxes[col_block * nms_block + t];
    __syncthreads();
    const int i = row_block * nms_block + t;
    if (i >= n) return;
    const Box a = boxes[i];
    const float area_a = __fmul_rn(__fsub_rn(a.x2, a.x1), __fsub_rn(a.y2, a.y1));
    unsigned long long bits = 0;
    const int count = min(nms_block, n - col_block * nms_block);
    for (int j = 0; j < count; ++j) {
        if (col_block * nms_block + j <= i) continue;
        const Box b = cols[j];
        const float iw = fmaxf(0.0f, __fsub_rn(fminf(a.x2, b.x2), fmaxf(a.x1, b.x1)));
        const float ih = fmaxf(0.0f, __fsub_rn(fminf(a.y2, b.y2), fmaxf(a.y1, b.y1)));
        const float inter = __fmul_rn(iw, ih);
        const float area_b = __fmul_rn(__fsub_rn(b.x2, b.x1), __fsub_rn(b.y2, b.y1));
        const float uni = __fsub_rn(__fadd_rn(area_a, area_b), inter);
        if (inter > __fmul_rn(threshold, uni)) bits |= 1ull << j;
    }
    mask[static_cast<std::size_t>(i) * col_blocks + col_block] = bits;
}

// One block walks the boxes in score order; thread w owns the removed-bits word w.
__global__ void nms_reduce_kernel(const unsigned long long* __restrict__ mask, int n, unsigned char* keep) {
    extern __shared__ unsigned long long removed[];
    const int col_blocks = (n + nms_block - 1) / nms_block;
    for (int w = threadIdx.x; w < col_blocks; w += blockDim.x) removed[w] = 0;
    __syncthreads();
    for (int i = 0; i < n; ++i) {
        const bool kept = !((removed[i / nms_block] >> (i % nms_block)) & 1ull);
        __syncthreads();  // everyone read removed[] before anyone updates it
        if (kept)
            for (int w = threadIdx.x; w < col_blocks; w += blockDim.x)
                removed[w] |= mask[static_cast<std::size_t>(i) * col_blocks + w];
        if (threadIdx.x == 0) keep[i] = kept ? 1 : 0;
        __syncthreads();
    }
}

class Nms : public Prepared {
public:
    explicit Nms(const GpuCase& c) : n_(dims(c.shape).at(0)) {
        boxes_host_ = nms_boxes(n_);
        boxes_ = DeviceArray<Box>(boxes_host_.size());
        CEILING_CUDA(cudaMemcpy(boxes_.get(), boxes_host_.data(), boxes_.bytes(), cudaMemcpyHostToDevice));
        col_blocks_ = (n_ + nms_block - 1) / nms_block;
        mask_ = DeviceArray<unsigned long long>(static_cast<std::size_t>(n_) * col_blocks_);
        keep_ = DeviceArray<unsigned char>(static_cast<std::size_t>(n_));
        poison(keep_.get(), keep_.bytes());
    }
    int launches() const override { return 2; }
    void launch() override {
        nms_mask_kernel<<<dim3(col_blocks_, col_blocks_), nms_block>>>(boxes_.get(), n_, threshold_, mask_.get());
        CEILING_CUDA_LAUNCHED();
        const int threads = std::min(1024, ((col_blocks_ + 31) / 32) * 32);
        nms_reduce_kernel<<<1, threads, col_blocks_ * sizeof(unsigned long long)>>>(mask_.get(), n_, keep_.get());
        CEILING_CUDA_LAUNCHED();
    }
    Verification verify() override {
        CEILING_CUDA(cudaDeviceSynchronize());
        const auto keep = keep_.to_host();
        std::vector<int> got;
        for (int i = 0; i < n_; ++i)
            if (keep[static_cast<std::size_t>(i)] == 1) got.push_back(i);
        const auto ref = nms_reference(boxes_host_, threshold_);
        std::size_t differ = 0;
        for (std::size_t i = 0; i < keep.size(); ++i) {
            const bool r = std::binary_search(ref.begin(), ref.end(), static_cast<int>(i));
            if (keep[i] > 1 || (keep[i] == 1) != r) ++differ;
        }
        return {differ == 0, static_cast<double>(differ), 0,
                "boxes whose keep flag differs from the CPU's greedy NMS (" + std::to_string(ref.size()) + " kept of " +
                    std::to_string(n_) + ")"};
    }

private:
    int n_;
    int col_blocks_ = 0;
    float threshold_ = 0.5f;
    std::vector<Box> boxes_host_;
    DeviceArray<Box> boxes_;
    DeviceArray<unsigned long long> mask_;
    DeviceArray<unsigned char> keep_;
};

// ---- bilinear resize -------------------------------------------------------------------------

__global__ void resize_kernel(const float* __restrict__ in, float* __restrict__ out, int planes, int in_h, int in_w,
                              int out_h, int out_w) {
    const std::size_t total = static_cast<std::size_t>(planes) * out_h * out_w;
    const float sy = static_cast<float>(in_h) / out_h, sx = static_cast<float>(in_w) / out_w;
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total; i += std::size_t{gridDim.x} * blockDim.x) {
        const int x = static_cast<int>(i % out_w), y = static_cast<int>((i / out_w) % out_h);
        const std::size_t plane = i / (static_cast<std::size_t>(out_h) * out_w);
        const float fy = fminf(fmaxf((y + 0.5f) * sy - 0.5f, 0.0f), static_cast<float>(in_h - 1));
        const float fx = fminf(fmaxf((x + 0.5f) * sx - 0.5f, 0.0f), static_cast<float>(in_w - 1));
        const int y0 = static_cast<int>(fy), x0 = static_cast<int>(fx);
        const int y1 = min(y0 + 1, in_h - 1), x1 = min(x0 + 1, in_w - 1);
        const float wy = fy - y0, wx = fx - x0;
        const float* p = in + plane * in_h * in_w;
        const float p00 = __ldg(p + static_cast<std::size_t>(y0) * in_w + x0), p01 = __ldg(p + static_cast<std::size_t>(y0) * in_w + x1);
        const float p10 = __ldg(p + static_cast<std::size_t>(y1) * in_w + x0), p11 = __ldg(p + static_cast<std::size_t>(y1) * in_w + x1);
        const float top = p00 + wx * (p01 - p00), bottom = p10 + wx * (p11 - p10);
        out[i] = top + wy * (bottom - top);
    }
}

class Resize : public Prepared {
public:
    explicit Resize(const GpuCase& c) {
        const auto d = dims(c.shape);  // N x C x H x W - H' x W'
        s_ = {d.at(0), d.at(1), d.at(2), d.at(3), d.at(4), d.at(5)};
        const std::size_t planes = static_cast<std::size_t>(s_.n) * s_.c;
        in_ = DeviceArray<float>(planes * s_.in_h * s_.in_w);
        out_ = DeviceArray<float>(planes * s_.out_h * s_.out_w);
        fill_uniform(in_.get(), in_.size(), seed_image);
        poison(out_.get(), out_.bytes());
    }
    void launch() override {
        resize_kernel<<<4096, 256>>>(in_.get(), out_.get(), s_.n * s_.c, s_.in_h, s_.in_w, s_.out_h, s_.out_w);
        CEILING_CUDA_LAUNCHED();
    }
    Verification verify() override {
        CEILING_CUDA(cudaDeviceSynchronize());
        const auto out = out_.to_host();
        ErrorTracker err;
        for (auto i : sample_indices(out.size(), 4096, 4)) err.add(out[i], resize_reference(s_, i), 1.0);
        for (std::size_t i = 0; i < out.size(); i += 101) err.add(out[i], out[i], 1);
        return err.result(1e-5, "|out - ref| (inputs in [-1, 1)), 4096 sampled outputs");
    }

private:
    ResizeShape s_{};
    DeviceArray<float> in_, out_;
};

// ---- the table ----------------------------------------------------------------------------

using Factory = std::unique_ptr<Prepared> (*)(const GpuCase&);
struct Entry {
    std::string_view kernel, problem;
    Variant variant;
    Factory make;
};
const Entry entries[] = {
    {"gemm", "fp32", Variant::naive, [](const GpuCase& c) -> std::unique_ptr<Prepared> { return std::make_unique<Gemm>(c, GemmImpl::naive); }},
    {"gemm", "fp32", Variant::optimized, [](const GpuCase& c) -> std::unique_ptr<Prepared> { return std::make_unique<Gemm>(c, GemmImpl::tiled); }},
    {"gemm", "fp32", Variant::library, [](const GpuCase& c) -> std::unique_ptr<Prepared> { return std::make_unique<Gemm>(c, GemmImpl::cublas); }},
    {"gemm", "bf16", Variant::library, [](const GpuCase& c) -> std::unique_ptr<Prepared> { return std::make_unique<Gemm>(c, GemmImpl::cublas); }},
    {"gemv", "fp32", Variant::optimized, [](const GpuCase& c) -> std::unique_ptr<Prepared> { return std::make_unique<Gemv>(c); }},
    {"gemv", "bf16", Variant::optimized, [](const GpuCase& c) -> std::unique_ptr<Prepared> { return std::make_unique<Gemv>(c); }},
    {"gemv", "int8", Variant::optimized, [](const GpuCase& c) -> std::unique_ptr<Prepared> { return std::make_unique<Gemv>(c); }},
    {"conv", "depthwise", Variant::optimized, [](const GpuCase& c) -> std::unique_ptr<Prepared> { return std::make_unique<DepthwiseConv>(c); }},
    {"nms", "bitmask", Variant::optimized, [](const GpuCase& c) -> std::unique_ptr<Prepared> { return std::make_unique<Nms>(c); }},
    {"resize", "bilinear", Variant::optimized, [](const GpuCase& c) -> std::unique_ptr<Prepared> { return std::make_unique<Resize>(c); }},
};

std::unique_ptr<Prepared> prepare_case(const GpuCase& c, int device) {
    if (!c.unavailable.empty()) throw GpuError(c.name() + ": " + c.unavailable);
    use_device(device);
    for (const auto& e : entries)
        if (e.kernel == c.kernel && e.problem == c.problem && e.variant == c.variant) return e.make(c);
    throw GpuError("no GPU implementation of " + c.name());
}

}  // namespace

GpuCaseRun run_gpu_case(const GpuCase& c, int device, const TimingPlan& plan) {
    auto p = prepare_case(c, device);
    p->launch();
    GpuCaseRun r;
    r.verification = p->verify();
    require(r.verification, c.name());
    r.launches_per_run = p->launches();
    r.seconds = time_launches([&] { p->launch(); }, plan);
    return r;
}

Verification run_gpu_case_once(const GpuCase& c, int device) {
    auto p = prepare_case(c, device);
    // Counted once (ncu and ceiling's counters, scripts/gpu-check): from a clean L2, so the
    // DRAM reads counted are the case's own, not its inputs' last megabytes left by the fills.
    flush_l2(device);
    p->launch();
    return p->verify();
}

}  // namespace ceiling::kernels::gpu
