// Compiled with AVX2 + FMA enabled (kernels/CMakeLists.txt); run only where supported.
#include <immintrin.h>

#include "kernels/conv/depthwise_impl.hpp"

namespace ceiling::kernels {
namespace {
struct V256 {
    using reg = __m256;
    static constexpr int lanes = 8;
    // vmaskmovps masks: lane i active when its top bit is set.
    static __m256i mask(int n) {
        return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    }
    static reg zero() { return _mm256_setzero_ps(); }
    static reg loadu(const float* p) { return _mm256_loadu_ps(p); }
    static reg load_partial(const float* p, int n) { return _mm256_maskload_ps(p, mask(n)); }
    static void storeu(float* p, reg v) { _mm256_storeu_ps(p, v); }
    static void store_partial(float* p, reg v, int n) { _mm256_maskstore_ps(p, mask(n), v); }
    static void stream(float* p, reg v) { _mm256_stream_ps(p, v); }  // p 32-byte aligned
    static void fence() { _mm_sfence(); }
    static reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
    static reg fmadd(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
};
bool supported(const CpuFeatures& f) { return f.avx2 && f.fma; }
}  // namespace
extern const DepthwiseImpl depthwise_avx2{"avx2", supported, detail::depthwise_rows<V256>};
}  // namespace ceiling::kernels
