#pragma once
// oneDNN matmul, bf16 inputs and fp32 output: the library variant of the bf16 GEMM (on
// AMX where oneDNN finds it). Weights are reordered into oneDNN's preferred layout once,
// at construction, as an inference framework does.

#include <memory>
#include <string>

#include "kernels/common/bf16.hpp"

namespace ceiling::kernels {

// Implemented in libceiling_libraries.so (kernels/libraries/), loaded on first use.
class DnnlMatmulBf16 {
public:
    struct Impl {
        virtual ~Impl() = default;
        virtual void run(const Bf16* a, float* c) = 0;
        virtual std::string implementation() const = 0;
    };
    // b: K x N row-major; oneDNN's primitive is created for `threads` threads. Throws
    // std::runtime_error when oneDNN is unavailable (dnnl_info() says why), KernelUnavailable
    // when it has no bf16 matmul for this CPU.
    DnnlMatmulBf16(int m, int n, int k, const Bf16* b, int threads);
    // a: M x K row-major, c: M x N row-major.
    void run(const Bf16* a, float* c) { impl_->run(a, c); }
    // The implementation oneDNN chose, e.g. "brg:avx512_core_amx".
    std::string implementation() const { return impl_->implementation(); }

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace ceiling::kernels
