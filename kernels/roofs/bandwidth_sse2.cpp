// Baseline x86-64 (SSE2): runs everywhere.
#include <emmintrin.h>

#include "kernels/roofs/bandwidth_impl.hpp"

namespace ceiling::kernels {
namespace {
struct V128 {
    using reg = __m128;
    static constexpr std::size_t lanes = 4;
    static reg zero() { return _mm_setzero_ps(); }
    static reg set1(float x) { return _mm_set1_ps(x); }
    static reg load(const float* p) { return _mm_load_ps(p); }
    static void store(float* p, reg v) { _mm_store_ps(p, v); }
    static reg add(reg a, reg b) { return _mm_add_ps(a, b); }
    static reg fmadd(reg a, reg b, reg c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
    static double sum(reg v) {
        alignas(16) float x[4];
        _mm_store_ps(x, v);
        return static_cast<double>(x[0]) + x[1] + x[2] + x[3];
    }
};
bool supported(const CpuFeatures&) { return true; }
}  // namespace
extern constinit const BandwidthImpl bandwidth_sse2 = detail::make_impl<V128>("sse2", supported);
}  // namespace ceiling::kernels
