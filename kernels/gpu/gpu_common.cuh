#pragma once
// What every .cu file shares: error checks that throw GpuError naming the call, device
// buffers, CUDA-event timing, and the random fills of random_hash.hpp.

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/gpu/gpu_kernels.hpp"
#include "kernels/gpu/random_hash.hpp"

namespace ceiling::kernels::gpu {

void cuda_check(cudaError_t rc, const char* what, const char* file, int line);
#define CEILING_CUDA(call) ::ceiling::kernels::gpu::cuda_check((call), #call, __FILE__, __LINE__)
// After a launch: the launch itself, not just a later call, must have worked.
#define CEILING_CUDA_LAUNCHED() CEILING_CUDA(cudaGetLastError())

// Owns device memory.
template <typename T>
class DeviceArray {
public:
    DeviceArray() = default;
    explicit DeviceArray(std::size_t count) : count_(count) {
        void* p = nullptr;
        CEILING_CUDA(cudaMalloc(&p, count * sizeof(T)));
        ptr_ = static_cast<T*>(p);
    }
    ~DeviceArray() {
        if (ptr_) cudaFree(ptr_);
    }
    DeviceArray(DeviceArray&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(o.count_) {}
    DeviceArray& operator=(DeviceArray&& o) noexcept {
        std::swap(ptr_, o.ptr_);
        std::swap(count_, o.count_);
        return *this;
    }
    T* get() const { return ptr_; }
    std::size_t size() const { return count_; }
    std::size_t bytes() const { return count_ * sizeof(T); }
    std::vector<T> to_host() const {
        std::vector<T> h(count_);
        CEILING_CUDA(cudaMemcpy(h.data(), ptr_, bytes(), cudaMemcpyDeviceToHost));
        return h;
    }

private:
    T* ptr_ = nullptr;
    std::size_t count_ = 0;
};

// Selects the device for the calling thread (and fails with the device's name when it cannot).
void use_device(int device);

// Times `launch` (which enqueues work on the default stream) with a pair of CUDA events
// around each of plan.repeats calls, after plan.warmup untimed ones; seconds per call.
template <typename F>
std::vector<double> time_launches(F&& launch, const TimingPlan& plan) {
    for (int i = 0; i < plan.warmup; ++i) launch();
    CEILING_CUDA(cudaDeviceSynchronize());
    cudaEvent_t start, stop;
    CEILING_CUDA(cudaEventCreate(&start));
    CEILING_CUDA(cudaEventCreate(&stop));
    std::vector<double> seconds;
    for (int i = 0; i < plan.repeats; ++i) {
        CEILING_CUDA(cudaEventRecord(start));
        launch();
        CEILING_CUDA(cudaEventRecord(stop));
        CEILING_CUDA(cudaEventSynchronize(stop));
        float ms = 0;
        CEILING_CUDA(cudaEventElapsedTime(&ms, start, stop));
        seconds.push_back(static_cast<double>(ms) * 1e-3);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return seconds;
}

// Device fills from the hash streams (the host regenerates the same values).
void fill_uniform(float* dst, std::size_t count, std::uint64_t seed);
void fill_uniform_bf16(std::uint16_t* dst, std::size_t count, std::uint64_t seed);
void fill_uniform_half(std::uint16_t* dst, std::size_t count, std::uint64_t seed);  // fp16, RNE
void fill_int8(std::int8_t* dst, std::size_t count, std::uint64_t seed);
// Poison: a NaN pattern, so an output element nothing wrote fails the check.
void poison(void* dst, std::size_t bytes);

// Grid of `blocks` that fills the device: a multiple of the SM count.
int full_grid(int device, int blocks_per_sm);

// Relative error check over sampled outputs: |got - ref| / max(scale, tiny) <= tolerance.
struct ErrorTracker {
    double max_error = 0;
    bool nan = false;
    void add(double got, double ref, double scale) {
        if (got != got) {
            nan = true;
            return;
        }
        const double e = (got > ref ? got - ref : ref - got) / (scale > 1e-30 ? scale : 1e-30);
        if (e > max_error) max_error = e;
    }
    Verification result(double tolerance, std::string detail) const {
        return {!nan && max_error <= tolerance, nan ? 1e300 : max_error, tolerance,
                nan ? detail + " (NaN: an output was not written)" : std::move(detail)};
    }
};

// Operands of a tensor-core roof whose sums are exact: A[r][k] = alpha_k and B[k][n] = beta_k,
// multiples of 1/8 (exact in bf16, fp16 and tf32), so every output is sum_k alpha_k beta_k
// whatever the row/column placement, while a wrong k pairing of fragments changes it.
struct ExactDotOperands {
    float alpha[16] = {}, beta[16] = {};
    double dot = 0, abs_dot = 0;  // sum_k alpha_k beta_k and sum_k |alpha_k beta_k|
};
// k_dim <= 16 values of each, from splitmix64(seed + k) and splitmix64(seed + 100 + k).
ExactDotOperands exact_dot_operands(int k_dim, std::uint64_t seed);

// Throws GpuError when a case's check failed (nothing is timed then).
void require(const Verification& v, const std::string& what);

}  // namespace ceiling::kernels::gpu
