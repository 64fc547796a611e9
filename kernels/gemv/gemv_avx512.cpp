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

// int8 weights on AVX512-VNNI (Ice Lake, Cooper Lake, Sapphire Rapids, Zen 4 and 5): vpdpbusd
// multiplies 64 unsigned bytes by 64 signed bytes and adds each four products into an int32
// lane, a whole line of W in one instruction, where widening took a load, two conversions
// and an FMA per 16 weights (12 instructions a line: the widened kernel streamed 0.74 of
// fp32's bytes/s on a Zen 5 VM, a 2.97x speed-up against the bytes' 4x). x, in units of
// max|x| / 127, is split into three signed 8-bit parts, t = p0 + p1 / 128 + p2 / 128^2
// (p0 in [-127, 127], p1 and p2 in [-64, 64]: each rounded to nearest, the remainder passed
// on), so each x element is held to within 2^-22 of max|x|: a row's error is at most
// 2^-22 max|x| sum|w| (the check allows 1e-4 of sum|w x|; the bf16 parts hold each element
// to 2^-17 of itself). W is the unsigned operand: w + 128 (w xor 0x80), whose excess,
// 128 x the sum of each part over k, is the same for every row and taken off once. Per line
// of W: an xor with the load folded in, three vpdpbusd and the L2 prefetch. Each part's
// int32 lanes take at most 4 x 255 x 127 a line: summed into int64 every vnni_chunk
// elements of k (2^16: at most 1.3e8 a lane). A non-finite x goes to the widening kernel.
constexpr int vnni_rows = 8;         // 8 x 3 accumulators + 3 x parts + the flip: 28 of 32
constexpr int vnni_step = 64;        // int8 weights in a 64-byte line
constexpr int vnni_chunk = 1 << 16;  // elements of k summed in int32 lanes before int64
constexpr int vnni_parts = 3;        // (the loops below name the three)
constexpr double vnni_base = 128;    // each part's weight relative to the one before

struct XParts {
    const std::int8_t* part[vnni_parts];  // zero past k to a whole line
    double excess[vnni_parts];            // 128 x the part's sum over k
    double unit;                          // max|x| / 127: x = unit x sum_p part[p] / 128^p
};

std::int64_t lane_sum(__m512i v) {
    alignas(64) std::int32_t t[16];
    _mm512_store_si512(t, v);
    std::int64_t s = 0;
    for (std::int32_t e : t) s += e;
    return s;
}

template <int ROWS>
void vnni_rows_of(const std::int8_t* w, const XParts& xp, const float* scale, float* y, int i,
                  int k) {
    const std::int8_t* r[ROWS];
    std::int64_t total[ROWS][vnni_parts] = {};
#pragma GCC unroll 8
    for (int j = 0; j < ROWS; ++j) r[j] = w + static_cast<std::ptrdiff_t>(i + j) * k;
    const __m512i flip = _mm512_set1_epi8(-128);
    for (int c0 = 0; c0 < k; c0 += vnni_chunk) {
        const int c1 = k - c0 < vnni_chunk ? k : c0 + vnni_chunk;
        const int main_end = c0 + (c1 - c0) / vnni_step * vnni_step;
        // One array per part: GCC keeps each in registers, a [ROWS][3] one (1.5 KiB) it kept
        // on the stack, storing every accumulator each step (0.82 of fp32's bytes/s, not 0.9).
        __m512i a0[ROWS], a1[ROWS], a2[ROWS];
#pragma GCC unroll 8
        for (int j = 0; j < ROWS; ++j) a0[j] = a1[j] = a2[j] = _mm512_setzero_si512();
        for (int kk = c0; kk < main_end; kk += vnni_step) {
            const __m512i x0 = _mm512_loadu_si512(xp.part[0] + kk);
            const __m512i x1 = _mm512_loadu_si512(xp.part[1] + kk);
            const __m512i x2 = _mm512_loadu_si512(xp.part[2] + kk);
#pragma GCC unroll 8
            for (int j = 0; j < ROWS; ++j) {
                __builtin_prefetch(r[j] + kk + detail::prefetch_ahead<std::int8_t>, 0, 2);
                const __m512i wv = _mm512_xor_si512(_mm512_loadu_si512(r[j] + kk), flip);
                a0[j] = _mm512_dpbusd_epi32(a0[j], wv, x0);
                a1[j] = _mm512_dpbusd_epi32(a1[j], wv, x1);
                a2[j] = _mm512_dpbusd_epi32(a2[j], wv, x2);
            }
        }
        if (main_end < c1) {  // masked weights read 0 (128 after the flip); x's parts are 0
            const auto mask = static_cast<__mmask64>((1ull << (c1 - main_end)) - 1);
            const __m512i x0 = _mm512_loadu_si512(xp.part[0] + main_end);
            const __m512i x1 = _mm512_loadu_si512(xp.part[1] + main_end);
            const __m512i x2 = _mm512_loadu_si512(xp.part[2] + main_end);
#pragma GCC unroll 8
            for (int j = 0; j < ROWS; ++j) {
                const __m512i wv =
                    _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, r[j] + main_end), flip);
                a0[j] = _mm512_dpbusd_epi32(a0[j], wv, x0);
                a1[j] = _mm512_dpbusd_epi32(a1[j], wv, x1);
                a2[j] = _mm512_dpbusd_epi32(a2[j], wv, x2);
            }
        }
#pragma GCC unroll 8
        for (int j = 0; j < ROWS; ++j) {
            total[j][0] += lane_sum(a0[j]);
            total[j][1] += lane_sum(a1[j]);
            total[j][2] += lane_sum(a2[j]);
        }
    }
#pragma GCC unroll 8
    for (int j = 0; j < ROWS; ++j) {
        double t = 0, weight = 1;
        for (int p = 0; p < vnni_parts; ++p, weight /= vnni_base)
            t += (static_cast<double>(total[j][p]) - xp.excess[p]) * weight;
        y[i + j] = static_cast<float>(t * xp.unit * (scale ? scale[i + j] : 1.0f));
    }
}

void gemv_int8_vnni(const std::int8_t* w, const float* scale, const float* x, float* y, int m,
                    int k) {
    // (maskz_ forms with a full mask: GCC 12 warns inside avx512fintrin.h for the plain ones.)
    constexpr __mmask16 all = V512::full;
    __m512 amax_v = _mm512_setzero_ps();
    for (int kk = 0; kk < k; kk += 16) {
        const int n = k - kk;
        const auto live = static_cast<__mmask16>(n >= 16 ? 0xffff : (1u << n) - 1);
        amax_v =
            _mm512_maskz_max_ps(all, amax_v, _mm512_abs_ps(_mm512_maskz_loadu_ps(live, x + kk)));
    }
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, amax_v);
    float amax = 0;
    for (float v : lanes) amax = v > amax ? v : amax;
    if (!(amax <= 3.4e38f)) {  // inf or NaN: no unit holds it
        detail::gemv_int8<V512>(w, scale, x, y, m, k);
        return;
    }
    // The parts (plain new[]: isa_objects_test.cpp), zero past k to a whole line.
    const int k_pad = (k + vnni_step - 1) / vnni_step * vnni_step;
    std::int8_t* parts =
        new std::int8_t[static_cast<std::size_t>(vnni_parts) * (k_pad > 0 ? k_pad : 1)];
    XParts xp{};
    xp.unit = amax > 0 ? static_cast<double>(amax) / 127 : 1;
    for (int p = 0; p < vnni_parts; ++p)
        xp.part[p] = parts + static_cast<std::ptrdiff_t>(p) * k_pad;
    const __m512 to_units = _mm512_set1_ps(amax > 0 ? 127 / amax : 1);
    const __m512 base = _mm512_set1_ps(static_cast<float>(vnni_base));
    constexpr int nearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    std::int64_t totals[vnni_parts] = {};
    for (int c0 = 0; c0 < k_pad; c0 += vnni_chunk) {  // the parts' sums, int32 within a chunk
        const int c1 = k_pad - c0 < vnni_chunk ? k_pad : c0 + vnni_chunk;
        __m512i sums[vnni_parts] = {};
        for (int kk = c0; kk < c1; kk += 16) {
            const int n = k - kk;
            const auto live = static_cast<__mmask16>(n >= 16 ? 0xffff : n > 0 ? (1u << n) - 1 : 0);
            // t in [-127, 127] (max|x| rounded); each part rounded to nearest, the rest (at
            // most 1/2) scaled up for the next.
            __m512 t = _mm512_maskz_mul_ps(all, _mm512_maskz_loadu_ps(live, x + kk), to_units);
            t = _mm512_maskz_min_ps(all, _mm512_set1_ps(127),
                                    _mm512_maskz_max_ps(all, _mm512_set1_ps(-127), t));
            for (int p = 0; p < vnni_parts; ++p) {
                const __m512 q = _mm512_maskz_roundscale_ps(all, t, nearest);
                const __m512i qi = _mm512_maskz_cvtps_epi32(all, q);
                _mm_storeu_si128(
                    reinterpret_cast<__m128i*>(parts + static_cast<std::ptrdiff_t>(p) * k_pad + kk),
                    _mm512_maskz_cvtepi32_epi8(all, qi));
                sums[p] = _mm512_add_epi32(sums[p], qi);
                t = _mm512_maskz_mul_ps(all, _mm512_maskz_sub_ps(all, t, q), base);
            }
        }
        for (int p = 0; p < vnni_parts; ++p) totals[p] += lane_sum(sums[p]);
    }
    for (int p = 0; p < vnni_parts; ++p) xp.excess[p] = 128.0 * static_cast<double>(totals[p]);
    int i = 0;
    for (; i + vnni_rows <= m; i += vnni_rows) vnni_rows_of<vnni_rows>(w, xp, scale, y, i, k);
    for (; i < m; ++i) vnni_rows_of<1>(w, xp, scale, y, i, k);
    delete[] parts;
}
bool supported_vnni(const CpuFeatures& f) { return supported(f) && f.avx512_vnni; }
// Every CPU with AVX512-BF16 so far has VNNI too (Cooper Lake, Sapphire Rapids, Zen 4 and 5).
bool supported_bf16_vnni(const CpuFeatures& f) { return supported_bf16(f) && f.avx512_vnni; }

// The AVX-512 kernels with gemv_bf16_dot for bf16 weights, gemv_int8_vnni for int8.
constexpr GemvImpl with_bf16_dot(GemvImpl impl) {
    impl.bf16 = gemv_bf16_dot;
    impl.bf16_rows = dot_rows;
    impl.bf16_method = Bf16Method::dot;
    return impl;
}
constexpr GemvImpl with_int8_vnni(GemvImpl impl) {
    impl.int8 = gemv_int8_vnni;
    impl.int8_rows = vnni_rows;
    impl.int8_vecs = 1;
    impl.int8_method = Int8Method::vnni;
    return impl;
}
}  // namespace
extern constinit const GemvImpl gemv_avx512 = detail::make_gemv_impl<V512>("avx512", supported);
extern constinit const GemvImpl gemv_avx512_vnni =
    with_int8_vnni(detail::make_gemv_impl<V512>("avx512_vnni", supported_vnni));
extern constinit const GemvImpl gemv_avx512_bf16 =
    with_int8_vnni(with_bf16_dot(detail::make_gemv_impl<V512>("avx512_bf16", supported_bf16_vnni)));
}  // namespace ceiling::kernels
