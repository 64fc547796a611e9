// Compiled with AVX2 and FMA enabled (kernels/CMakeLists.txt); run only where supported.
#include <immintrin.h>

#include "kernels/roofs/bandwidth_impl.hpp"

namespace ceiling::kernels {
namespace {
struct V256 {
    using reg = __m256;
    static constexpr std::size_t lanes = 8;
    static reg zero() { return _mm256_setzero_ps(); }
    static reg set1(float x) { return _mm256_set1_ps(x); }
    static reg load(const float* p) { return _mm256_load_ps(p); }
    static void store(float* p, reg v) { _mm256_store_ps(p, v); }
    static reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
    static reg fmadd(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
    static double sum(reg v) {
        alignas(32) float x[8];
        _mm256_store_ps(x, v);
        double s = 0;
        for (float f : x) s += f;
        return s;
    }
};
bool supported(const CpuFeatures& f) { return f.avx2 && f.fma; }
}  // namespace
extern constinit const BandwidthImpl bandwidth_avx2 = detail::make_impl<V256>("avx2", supported);
}  // namespace ceiling::kernels
