// Baseline x86-64 (SSE2) build: the fallback for CPUs without AVX2. One "lane" per
// register; the compiler is free to use SSE for the 4 x 8 tile.
#include "kernels/gemm/gemm_impl.hpp"

namespace ceiling::kernels {
namespace {
struct Scalar {
    using reg = float;
    static constexpr int registers = 16;
    static constexpr int lanes = 1;
    static reg zero() { return 0.0f; }
    static reg set1(float x) { return x; }
    static reg load(const float* p) { return *p; }
    static reg loadu(const float* p) { return *p; }
    static void storeu(float* p, reg v) { *p = v; }
    static reg add(reg a, reg b) { return a + b; }
    static reg fmadd(reg a, reg b, reg c) { return a * b + c; }
};
bool supported(const CpuFeatures&) { return true; }
}  // namespace
extern constinit const GemmImpl gemm_scalar =
    detail::make_gemm_impl<Scalar, 4, 8>("scalar", supported, nullptr, nullptr, "");
}  // namespace ceiling::kernels
