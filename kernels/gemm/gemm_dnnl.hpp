#pragma once
// oneDNN matmul, bf16 inputs and fp32 output: the library variant of the bf16 GEMM (on
// AMX where oneDNN finds it). Weights are reordered into oneDNN's preferred layout once,
// at construction, as an inference framework does.

#include <memory>
#include <string>

#include "kernels/common/bf16.hpp"

namespace ceiling::kernels {

class DnnlMatmulBf16 {
public:
    // b: K x N row-major; oneDNN's primitive is created for `threads` threads.
    DnnlMatmulBf16(int m, int n, int k, const Bf16* b, int threads);
    ~DnnlMatmulBf16();
    DnnlMatmulBf16(const DnnlMatmulBf16&) = delete;
    DnnlMatmulBf16& operator=(const DnnlMatmulBf16&) = delete;
    // a: M x K row-major, c: M x N row-major.
    void run(const Bf16* a, float* c);
    // The implementation oneDNN chose, e.g. "brg:avx512_core_amx".
    std::string implementation() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace ceiling::kernels
