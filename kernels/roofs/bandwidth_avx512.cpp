// Compiled with AVX-512F enabled (kernels/CMakeLists.txt); run only where supported.
#include <immintrin.h>

#include "kernels/roofs/bandwidth_impl.hpp"

namespace ceiling::kernels {
namespace {
struct V512 {
    using reg = __m512;
    static constexpr std::size_t lanes = 16;
    static reg zero() { return _mm512_setzero_ps(); }
    static reg set1(float x) { return _mm512_set1_ps(x); }
    static reg load(const float* p) { return _mm512_load_ps(p); }
    static void store(float* p, reg v) { _mm512_store_ps(p, v); }
    static reg add(reg a, reg b) { return _mm512_add_ps(a, b); }
    static reg fmadd(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
    static double sum(reg v) {  // (not _mm512_reduce_add_ps: GCC 12 warns inside its header)
        alignas(64) float x[16];
        _mm512_store_ps(x, v);
        double s = 0;
        for (float f : x) s += f;
        return s;
    }
};
bool supported(const CpuFeatures& f) { return f.avx512f; }
}  // namespace
extern constinit const BandwidthImpl bandwidth_avx512 =
    detail::make_impl<V512>("avx512", supported);
}  // namespace ceiling::kernels
