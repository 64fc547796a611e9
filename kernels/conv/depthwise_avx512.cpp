// Compiled with AVX-512 enabled (kernels/CMakeLists.txt); run only where supported.
#include <immintrin.h>

#include "kernels/conv/depthwise_impl.hpp"

namespace ceiling::kernels {
namespace {
struct V512 {
    using reg = __m512;
    static constexpr int lanes = 16;
    static __mmask16 mask(int n) { return static_cast<__mmask16>((1u << n) - 1); }
    static reg zero() { return _mm512_setzero_ps(); }
    static reg loadu(const float* p) { return _mm512_loadu_ps(p); }
    static reg load_partial(const float* p, int n) { return _mm512_maskz_loadu_ps(mask(n), p); }
    static void storeu(float* p, reg v) { _mm512_storeu_ps(p, v); }
    static void store_partial(float* p, reg v, int n) { _mm512_mask_storeu_ps(p, mask(n), v); }
    static void stream(float* p, reg v) { _mm512_stream_ps(p, v); }  // p 64-byte aligned
    static void fence() { _mm_sfence(); }
    static reg add(reg a, reg b) { return _mm512_add_ps(a, b); }
    static reg fmadd(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
};
bool supported(const CpuFeatures& f) { return f.avx512f; }
}  // namespace
extern const DepthwiseImpl depthwise_avx512{"avx512", supported, detail::depthwise_rows<V512>};
}  // namespace ceiling::kernels
