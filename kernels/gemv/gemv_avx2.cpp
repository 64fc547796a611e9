// Compiled with AVX2 + FMA enabled (kernels/CMakeLists.txt); run only where supported.
#include <immintrin.h>

#include <cstring>

#include "kernels/gemv/gemv_impl.hpp"

namespace ceiling::kernels {
namespace {
struct V256 {
    using reg = __m256;
    static constexpr int lanes = 8;
    // 16 ymm registers: at most 8 accumulators beside x and the converted weights.
    template <typename W>
    static constexpr detail::GemvBlocking blocking = sizeof(W) == 1 ? detail::GemvBlocking{8, 1, 1}
                                                                    : detail::GemvBlocking{4, 2, 2};
    static reg zero() { return _mm256_setzero_ps(); }
    static reg loadu(const float* p) { return _mm256_loadu_ps(p); }
    // Tails (n < 8) through a zeroed copy: no masked byte/word loads before AVX-512.
    template <typename T>
    static void copy_partial(T (&tmp)[8], const T* p, int n) {
        for (int i = 0; i < 8; ++i) tmp[i] = i < n ? p[i] : T{0};
    }
    static reg load_partial(const float* p, int n) {
        float t[8];
        copy_partial(t, p, n);
        return _mm256_loadu_ps(t);
    }
    static reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
    static reg fmadd(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
    static float sum(reg v) {
        __m128 q = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        q = _mm_add_ps(q, _mm_movehl_ps(q, q));
        q = _mm_add_ss(q, _mm_movehdup_ps(q));
        return _mm_cvtss_f32(q);
    }
    static reg weights(const float* p) { return _mm256_loadu_ps(p); }
    static reg weights_partial(const float* p, int n) { return load_partial(p, n); }
    // 16 bf16 as two fp32 vectors: even-indexed weights, odd-indexed weights.
    static void bf16_halves(const Bf16* p, reg& even, reg& odd) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
        even = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
        odd = _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32(-65536)));
    }
    static reg weights(const Bf16* p) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
    static reg weights_partial(const Bf16* p, int n) {
        Bf16 t[8];
        copy_partial(t, p, n);
        return weights(t);
    }
    static reg weights(const std::int8_t* p) {
        long long v;
        std::memcpy(&v, p, 8);
        return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_cvtsi64_si128(v)));
    }
    static reg weights_partial(const std::int8_t* p, int n) {
        std::int8_t t[8];
        copy_partial(t, p, n);
        return weights(t);
    }
};
bool supported(const CpuFeatures& f) { return f.avx2 && f.fma; }
}  // namespace
extern constinit const GemvImpl gemv_avx2 = detail::make_gemv_impl<V256>("avx2", supported);
}  // namespace ceiling::kernels
