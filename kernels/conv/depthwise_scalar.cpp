// Baseline x86-64 build: the fallback for CPUs without AVX2.
#include "kernels/conv/depthwise_impl.hpp"

namespace ceiling::kernels {
namespace {
struct Scalar {
    using reg = float;
    static constexpr int lanes = 1;
    static reg zero() { return 0.0f; }
    static reg loadu(const float* p) { return *p; }
    static reg load_partial(const float* p, int) { return *p; }
    static void storeu(float* p, reg v) { *p = v; }
    static void store_partial(float* p, reg v, int) { *p = v; }
    static void stream(float* p, reg v) { *p = v; }
    static void fence() {}
    static reg add(reg a, reg b) { return a + b; }
    static reg fmadd(reg a, reg b, reg c) { return a * b + c; }
};
bool supported(const CpuFeatures&) { return true; }
}  // namespace
extern const DepthwiseImpl depthwise_scalar{"scalar", supported, detail::depthwise_rows<Scalar>};
}  // namespace ceiling::kernels
