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

// bf16 weights on AVX512-BF16 (Zen 4 and 5, Cooper Lake, Sapphire Rapids): vdpbf16ps takes a
// whole line of 32 weights against x split into two bf16 parts, hi = bf16(x) and lo =
// bf16(x - hi) (x to 16 of its 24 mantissa bits: each product within 2^-18 of w x, where
// the check allows 1e-4 of the sum of |w x|), the products summed in fp32. Per line of W: a
// load and two vdpbf16ps, where splitting the line into fp32 halves took a load, a shift,
// an and and two FMAs; the instructions per line bound how many of W's lines the core keeps
// in flight (gemv_impl.hpp). Zen 5 VM, M = K = 16384, one thread, interleaved with fp32
// over the same rows (medians of 9, five runs): the halves streamed 0.75-0.84 of fp32's
// bytes/s (a 1.5-1.68x speed-up, against 2x for the bytes), this 0.94-0.99 (1.88-1.98x); x
// rounded to one bf16 part only, 0.97-1.01 (its products within 2^-9: not taken).
constexpr int dot_rows = 8;
constexpr int dot_step = 32;  // bf16 weights in a 64-byte line

template <int ROWS>
void dot_rows_of(const Bf16* w, const Bf16* xh, const Bf16* xl, float* y, int i, int k) {
    const int k_main = k / dot_step * dot_step;
    const Bf16* r[ROWS];
    __m512 acc[ROWS];
#pragma GCC unroll 8
    for (int j = 0; j < ROWS; ++j) {
        r[j] = w + static_cast<std::ptrdiff_t>(i + j) * k;
        acc[j] = _mm512_setzero_ps();
    }
    for (int kk = 0; kk < k_main; kk += dot_step) {
        const auto hi = reinterpret_cast<__m512bh>(_mm512_loadu_si512(xh + kk));
        const auto lo = reinterpret_cast<__m512bh>(_mm512_loadu_si512(xl + kk));
#pragma GCC unroll 8
        for (int j = 0; j < ROWS; ++j) {
            __builtin_prefetch(
                reinterpret_cast<const char*>(r[j] + kk) + detail::prefetch_ahead<Bf16>, 0, 2);
            const auto wv = reinterpret_cast<__m512bh>(_mm512_loadu_si512(r[j] + kk));
            acc[j] = _mm512_dpbf16_ps(acc[j], wv, hi);
            acc[j] = _mm512_dpbf16_ps(acc[j], wv, lo);
        }
    }
    if (k_main < k) {  // the tail's weights masked; x's parts are zero past k
        const auto mask = static_cast<__mmask32>((1ull << (k - k_main)) - 1);
        const auto hi = reinterpret_cast<__m512bh>(_mm512_loadu_si512(xh + k_main));
        const auto lo = reinterpret_cast<__m512bh>(_mm512_loadu_si512(xl + k_main));
#pragma GCC unroll 8
        for (int j = 0; j < ROWS; ++j) {
            const auto wv =
                reinterpret_cast<__m512bh>(_mm512_maskz_loadu_epi16(mask, r[j] + k_main));
            acc[j] = _mm512_dpbf16_ps(acc[j], wv, hi);
            acc[j] = _mm512_dpbf16_ps(acc[j], wv, lo);
        }
    }
#pragma GCC unroll 8
    for (int j = 0; j < ROWS; ++j) y[i + j] = V512::sum(acc[j]);
}

void gemv_bf16_dot(const Bf16* w, const float* x, float* y, int m, int k) {
    // x's two parts, zero past k to a whole line (plain new[]: isa_objects_test.cpp), by the
    // hardware's own rounding (vcvtneps2bf16: ties to even, as bf16.hpp; denormals flushed,
    // which leaves a lo part below 1e-38 out).
    const int k_pad = (k + dot_step - 1) / dot_step * dot_step;
    Bf16* xh = new Bf16[static_cast<std::size_t>(2 * (k_pad > 0 ? k_pad : 1))];
    Bf16* xl = xh + k_pad;
    for (int kk = 0; kk < k_pad; kk += 16) {
        const int n = k - kk;
        const auto live = static_cast<__mmask16>(n >= 16 ? 0xffff : n > 0 ? (1u << n) - 1 : 0);
        const __m512 v = _mm512_maskz_loadu_ps(live, x + kk);
        const auto hi = reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v));
        const auto lo = _mm512_cvtneps_pbh(_mm512_sub_ps(v, V512::widen_bf16(hi)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(xh + kk), hi);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(xl + kk), reinterpret_cast<__m256i>(lo));
    }
    int i = 0;
    for (; i + dot_rows <= m; i += dot_rows) dot_rows_of<dot_rows>(w, xh, xl, y, i, k);
    for (; i < m; ++i) dot_rows_of<1>(w, xh, xl, y, i, k);
    delete[] xh;
}
bool supported_bf16(const CpuFeatures& f) { return supported(f) && f.avx512_bf16; }

// The AVX-512 kernels with gemv_bf16_dot for bf16 weights.
constexpr GemvImpl with_bf16_dot(GemvImpl impl) {
    impl.bf16 = gemv_bf16_dot;
    impl.bf16_rows = dot_rows;
    impl.bf16_method = Bf16Method::dot;
    return impl;
}
}  // namespace
extern constinit const GemvImpl gemv_avx512 = detail::make_gemv_impl<V512>("avx512", supported, "");
extern constinit const GemvImpl gemv_avx512_bf16 =
    with_bf16_dot(detail::make_gemv_impl<V512>("avx512_bf16", supported_bf16, ""));
}  // namespace ceiling::kernels
