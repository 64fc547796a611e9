// Compiled with AVX-512 enabled (kernels/CMakeLists.txt); run only where supported.
#include <immintrin.h>

#include "kernels/gemv/gemv_impl.hpp"

namespace ceiling::kernels {
namespace {
struct V512 {
    using reg = __m512;
    static constexpr int lanes = 16;
    // Rows x vectors per step for each weight type (gemv_impl.hpp says why).
    template <typename W>
    static constexpr detail::GemvBlocking blocking = sizeof(W) == 1 ? detail::GemvBlocking{16, 4, 1}
                                                                    : detail::GemvBlocking{8, 1, 1};
    static constexpr __mmask16 full = 0xffff;
    static __mmask16 mask(int n) { return static_cast<__mmask16>((1u << n) - 1); }
    static reg zero() { return _mm512_setzero_ps(); }
    static reg loadu(const float* p) { return _mm512_loadu_ps(p); }
    static reg load_partial(const float* p, int n) { return _mm512_maskz_loadu_ps(mask(n), p); }
    static reg add(reg a, reg b) { return _mm512_add_ps(a, b); }
    static reg fmadd(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
    // Once per row: through memory (GCC 12 warns inside its own headers for the
    // 512 -> 256 casts and _mm512_reduce_add_ps).
    static float sum(reg v) {
        alignas(64) float t[16];
        _mm512_store_ps(t, v);
        float s = 0;
        for (float f : t) s += f;
        return s;
    }
    static reg weights(const float* p) { return _mm512_loadu_ps(p); }
    static reg weights_partial(const float* p, int n) { return load_partial(p, n); }
    // bf16 is the top half of an fp32: zero-extend 16 -> 32 bits and shift into place.
    // (The maskz_ forms with a full mask: the plain ones trip GCC 12's uninitialised
    // warning inside avx512fintrin.h.)
    static reg widen_bf16(__m256i h) {
        return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(full, _mm512_maskz_cvtepu16_epi32(full, h), 16));
    }
    // 32 bf16 (one line) as two fp32 vectors: even-indexed weights, odd-indexed weights.
    static void bf16_halves(const Bf16* p, reg& even, reg& odd) {
        const __m512i v = _mm512_loadu_si512(p);
        even = _mm512_castsi512_ps(_mm512_maskz_slli_epi32(full, v, 16));
        odd = _mm512_castsi512_ps(_mm512_maskz_and_epi32(full, v, _mm512_set1_epi32(-65536)));
    }
    static reg weights(const Bf16* p) {
        return widen_bf16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    }
    static reg weights_partial(const Bf16* p, int n) {
        return widen_bf16(_mm256_maskz_loadu_epi16(mask(n), p));
    }
    static reg weights(const std::int8_t* p) {
        return _mm512_maskz_cvtepi32_ps(full, _mm512_maskz_cvtepi8_epi32(full, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
    }
    static reg weights_partial(const std::int8_t* p, int n) {
        return _mm512_maskz_cvtepi32_ps(full, _mm512_maskz_cvtepi8_epi32(full, _mm_maskz_loadu_epi8(mask(n), p)));
    }
};
bool supported(const CpuFeatures& f) { return f.avx512f && f.avx512bw && f.avx512vl; }
}  // namespace
extern constinit const GemvImpl gemv_avx512 = detail::make_gemv_impl<V512>("avx512", supported, "");
}  // namespace ceiling::kernels
