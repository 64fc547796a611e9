// Baseline x86-64 build: the fallback for CPUs without AVX2 (one lane per "register").
#include "kernels/gemv/gemv_impl.hpp"

namespace ceiling::kernels {
namespace {
struct Scalar {
    using reg = float;
    static constexpr int lanes = 1;
    template <typename W>
    static constexpr detail::GemvBlocking blocking{4, 2, 2};
    static reg zero() { return 0.0f; }
    static reg loadu(const float* p) { return *p; }
    static reg load_partial(const float* p, int) { return *p; }
    static reg add(reg a, reg b) { return a + b; }
    static reg fmadd(reg a, reg b, reg c) { return a * b + c; }
    static float sum(reg v) { return v; }
    static reg weights(const float* p) { return *p; }
    static reg weights_partial(const float* p, int) { return *p; }
    static reg weights(const Bf16* p) { return bf16_to_float(*p); }
    static reg weights_partial(const Bf16* p, int) { return bf16_to_float(*p); }
    static reg weights(const std::int8_t* p) { return static_cast<float>(*p); }
    static reg weights_partial(const std::int8_t* p, int) { return static_cast<float>(*p); }
};
bool supported(const CpuFeatures&) { return true; }
}  // namespace
extern constinit const GemvImpl gemv_scalar = detail::make_gemv_impl<Scalar>("scalar", supported);
}  // namespace ceiling::kernels
