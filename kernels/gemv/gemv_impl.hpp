#pragma once
// The GEMV kernels written once over vector traits V; each weight type converts to fp32 in
// registers (bf16: shift left 16, or split into even and odd halves by a shift and a mask;
// int8: sign-extend and convert), so the arithmetic is the
// same fp32 FMA for all three and only the bytes streamed differ. Included only by the
// per-ISA translation units (traits in anonymous namespaces: no ODR merging).

#include <cstddef>
#include <cstdint>

#include "kernels/gemv/gemv.hpp"

namespace ceiling::kernels::detail {

// rows x vecs vectors of k per step, each row's vectors summed into `chains` accumulators
// (vector v into chain v % chains).
struct GemvBlocking {
    int rows, vecs, chains;
};

// ROWS rows at a time, VECS vectors of k per step. x (64 KiB at k = 16384) does not fit
// the 48 KiB L1, so each of its lines comes from L2 once per group of rows, and those
// misses take L1 fill buffers away from the DRAM stream of W (one core's DRAM bandwidth
// is bound by the lines it has in flight: ~48 x 64 B / 221 ns = 14 GB/s here). Groups are
// sized so every x line serves at least 4 lines of W whatever the weight type (the traits'
// tables: AVX2 fp32 4 rows x 2 vectors, int8 8 x 1; AVX-512 int8 16 x 4; with 4 rows the
// int8 kernel had streamed 9 GB/s against fp32's 12.7 on one thread; bf16 on AVX2 and
// AVX-512 runs gemv_bf16_groups below, 4 and 8 rows of a 32- or 64-byte load per step).
// AVX-512 fp32 runs 8 rows x 1 vector (8 W lines per x line): on Zen 4 (32 KiB L1d),
// interleaved in one process over 1 GiB, 5-8 % faster than 4 x 2 on one and two threads in
// each of four runs; 16 x 1, 12 x 1, 8 x 2 and 2 x 4 were no faster, nor was x blocked
// into L1-sized chunks of k. ROWS x chains independent FMA chains (>= 8) cover the 4-cycle
// latency on 2 ports.
// bf16 and int8 cost more instructions per byte of W than fp32 (split or widen, then
// FMA; where the CPU has bf16 or int8 dot products, gemv_avx512.cpp takes a line in one to
// three of them instead): in L2 (16 rows x 16384) the AVX-512 int8 kernel runs only ~28 GB/s per
// core (sign-extend, convert, FMA per 16 weights), so the core's out-of-order window, full of that
// work, keeps too few of W's lines in flight to stream DRAM at fp32's rate. Both therefore prefetch
// each row's W 2 KiB ahead into L2 (prefetch_ahead), and AVX-512 int8 takes a whole line of each of
// 16 rows per step (4 vectors, one chain per row). Zen 4 VM, M = K = 16384, interleaved in one
// process, medians of 9-11, GB/s as a fraction of fp32's beside it (bf16's ideal is 1.0, a 2x
// speed-up; int8's 1.0 is 4x):
//   int8 AVX-512, 16 x 1 (before): 0.57-0.61 on one thread, 0.60-0.73 on two;
//     with the prefetch only 0.62; 8 x 4 without it 0.73-0.77; 16 x 4 with it 0.92-0.97
//     on one thread, 0.94-0.97 on two. Into L1 instead (512 B to 4 KiB ahead): 0.61-0.77.
//   int8 AVX2 (8 x 1, on the same CPU): 0.67 -> 0.78 on one thread, 0.84 -> 0.99 on two;
//     whole lines per step were no faster.
//   bf16 AVX-512 halves: 14-19 -> 20-21 GB/s on one thread, 21-28 -> 27-31 on two
//     (fp32 16-20 and 24-30 beside them).
//   fp32 with the same prefetch: no faster (0.96-0.98 of itself).
// Bytes ahead of each row that the loops prefetch W into L2, per weight type; 0: none.
template <typename W>
inline constexpr int prefetch_ahead = sizeof(W) < 4 ? 2048 : 0;

// Once per line of each row: W's line prefetch_ahead<W> bytes ahead of r[j] + kk, into L2
// (locality 2: prefetcht1). Forced inline: GCC 12 finds a function of only prefetches free
// of side effects ("const") and deletes the calls to it.
template <typename W, int ROWS>
[[gnu::always_inline]] inline void prefetch_rows(const W* const (&r)[ROWS], int kk, int step) {
    if constexpr (0 < prefetch_ahead<W>)
        if (kk % (64 / static_cast<int>(sizeof(W))) < step)
#pragma GCC unroll 16
            for (int j = 0; j < ROWS; ++j)
                __builtin_prefetch(reinterpret_cast<const char*>(r[j] + kk) + prefetch_ahead<W>, 0,
                                   2);
}

// V::weights(p) loads V::lanes weights of type W as fp32; V::weights_partial(p, n) the
// first n (n < lanes), the rest zero.
template <typename V, typename W, int ROWS, int VECS, int CHAINS>
int gemv_groups(const W* w, const float* x, float* y, const float* scale, int m, int k) {
    using R = typename V::reg;
    constexpr int L = V::lanes;
    constexpr int step = VECS * L;
    const int k_main = k / step * step;
    int i = 0;
    for (; i + ROWS <= m; i += ROWS) {
        const W* r[ROWS];
        R acc[ROWS][CHAINS];
#pragma GCC unroll 16
        for (int j = 0; j < ROWS; ++j) {
            r[j] = w + static_cast<std::ptrdiff_t>(i + j) * k;
#pragma GCC unroll 4
            for (int c = 0; c < CHAINS; ++c) acc[j][c] = V::zero();
        }
        for (int kk = 0; kk < k_main; kk += step) {
            // Into L1 instead (512 bytes ahead) had gained widened bf16 15 % on a 2-vCPU Xeon VM
            // from DRAM (30.5-32.2 -> 35.5-36.4 GB/s, fp32 36-38) and int8 12 % while losing
            // 8-15 % at 4096^2 (in L3) with 16 x 1 steps (partial lines).
            prefetch_rows<W, ROWS>(r, kk, step);
            R xv[VECS];
#pragma GCC unroll 4
            for (int v = 0; v < VECS; ++v) xv[v] = V::loadu(x + kk + v * L);
#pragma GCC unroll 16
            for (int j = 0; j < ROWS; ++j)
#pragma GCC unroll 4
                for (int v = 0; v < VECS; ++v)
                    acc[j][v % CHAINS] =
                        V::fmadd(V::weights(r[j] + kk + v * L), xv[v], acc[j][v % CHAINS]);
        }
        for (int kk = k_main; kk < k; kk += L) {
            const int n = k - kk < L ? k - kk : L;
            const R xv = V::load_partial(x + kk, n);
#pragma GCC unroll 16
            for (int j = 0; j < ROWS; ++j)
                acc[j][0] = V::fmadd(V::weights_partial(r[j] + kk, n), xv, acc[j][0]);
        }
#pragma GCC unroll 16
        for (int j = 0; j < ROWS; ++j) {
            R sum = acc[j][0];
#pragma GCC unroll 4
            for (int c = 1; c < CHAINS; ++c) sum = V::add(sum, acc[j][c]);
            const float s = V::sum(sum);
            y[i + j] = scale ? s * scale[i + j] : s;
        }
    }
    return i;
}

// bf16 weights where V can split them in place (V::bf16_halves): one load of 2 x lanes
// weights gives two fp32 vectors, the even-indexed weights shifted into the top half of
// each lane and the odd ones masked there (bf16 is the top half of an fp32), multiplied by
// x's even and odd elements, which the caller deinterleaved per 2 x lanes into xd. Per 64
// bytes of W on AVX-512: a load, a shift, an and and two FMAs, where widening each half
// (zero-extend, shift) took two loads, two cross-lane extends, two shifts and two FMAs; the
// instructions per byte bound how many of W's lines the out-of-order window keeps in
// flight. Zen 4 VM, M = K = 16384, interleaved in one process: 13-17 -> 22-23 GB/s on one
// thread (fp32 streamed 22-26), 24-27 -> 31-34 on two (fp32 32-33). ROWS rows, each a full
// line per step (V::blocking<Bf16>): 16 was slower than 8 there (18-22, 29-31); the
// prefetch into L2 (above) came after. The k tail (past the last whole 2 x lanes) is
// widened as before, against x itself. Where AVX512-BF16 exists, vdpbf16ps takes a line in
// two instructions instead (gemv_avx512.cpp): 0.96-0.99 of fp32's bytes/s on a Zen 5 VM
// against these halves' 0.75-0.84, the instructions per line the limit, as guessed.
template <typename V, int ROWS>
int gemv_bf16_groups(const Bf16* w, const float* x, const float* xd, float* y, int m, int k) {
    using R = typename V::reg;
    constexpr int L = V::lanes;
    constexpr int step = 2 * L;
    const int k_main = k / step * step;
    int i = 0;
    for (; i + ROWS <= m; i += ROWS) {
        const Bf16* r[ROWS];
        R even[ROWS], odd[ROWS];
#pragma GCC unroll 16
        for (int j = 0; j < ROWS; ++j) {
            r[j] = w + static_cast<std::ptrdiff_t>(i + j) * k;
            even[j] = V::zero();
            odd[j] = V::zero();
        }
        for (int kk = 0; kk < k_main; kk += step) {
            prefetch_rows<Bf16, ROWS>(r, kk, step);
            const R xe = V::loadu(xd + kk), xo = V::loadu(xd + kk + L);
#pragma GCC unroll 16
            for (int j = 0; j < ROWS; ++j) {
                R we, wo;
                V::bf16_halves(r[j] + kk, we, wo);
                even[j] = V::fmadd(we, xe, even[j]);
                odd[j] = V::fmadd(wo, xo, odd[j]);
            }
        }
        for (int kk = k_main; kk < k; kk += L) {
            const int n = k - kk < L ? k - kk : L;
            const R xv = V::load_partial(x + kk, n);
#pragma GCC unroll 16
            for (int j = 0; j < ROWS; ++j)
                even[j] = V::fmadd(V::weights_partial(r[j] + kk, n), xv, even[j]);
        }
#pragma GCC unroll 16
        for (int j = 0; j < ROWS; ++j) y[i + j] = V::sum(V::add(even[j], odd[j]));
    }
    return i;
}

// Full groups first, then the remaining rows one at a time.
template <typename V, typename W>
void gemv_rows(const W* w, const float* x, float* y, const float* scale, int m, int k) {
    using R = typename V::reg;
    constexpr int L = V::lanes;
    constexpr auto b = V::template blocking<W>;
    int i = 0;
    if constexpr (requires(const Bf16* p, R& a) { V::bf16_halves(p, a, a); } &&
                  sizeof(W) == sizeof(Bf16)) {
        // x's even and odd elements per 2 x lanes (plain new[]: a std:: container's members
        // would be weak symbols in this ISA file, isa_objects_test.cpp).
        constexpr int step = 2 * L;
        const int k_main = k / step * step;
        float* xd = new float[static_cast<std::size_t>(k_main > 0 ? k_main : 1)];
        for (int kk = 0; kk < k_main; kk += step)
            for (int e = 0; e < L; ++e) {
                xd[kk + e] = x[kk + 2 * e];
                xd[kk + L + e] = x[kk + 2 * e + 1];
            }
        i = gemv_bf16_groups<V, b.rows>(w, x, xd, y, m, k);
        delete[] xd;
    } else {
        i = gemv_groups<V, W, b.rows, b.vecs, b.chains>(w, x, y, scale, m, k);
    }
    for (; i < m; ++i) {
        const W* r0 = w + static_cast<std::ptrdiff_t>(i) * k;
        R acc = V::zero();
        for (int kk = 0; kk < k; kk += L) {
            const int n = k - kk < L ? k - kk : L;
            acc = V::fmadd(V::weights_partial(r0 + kk, n), V::load_partial(x + kk, n), acc);
        }
        const float s = V::sum(acc);
        y[i] = scale ? s * scale[i] : s;
    }
}

template <typename V>
void gemv_fp32(const float* w, const float* x, float* y, int m, int k) {
    gemv_rows<V, float>(w, x, y, nullptr, m, k);
}
template <typename V>
void gemv_bf16(const Bf16* w, const float* x, float* y, int m, int k) {
    gemv_rows<V, Bf16>(w, x, y, nullptr, m, k);
}
template <typename V>
void gemv_int8(const std::int8_t* w, const float* scale, const float* x, float* y, int m, int k) {
    gemv_rows<V, std::int8_t>(w, x, y, scale, m, k);
}

template <typename V>
constexpr GemvImpl make_gemv_impl(std::string_view isa, bool (*supported)(const CpuFeatures&)) {
    constexpr auto b = V::template blocking<float>;
    constexpr bool halves = requires(const Bf16* p, typename V::reg& r) {
        V::bf16_halves(p, r, r);
    };
    constexpr auto i8 = V::template blocking<std::int8_t>;
    static_assert(prefetch_ahead<Bf16> == prefetch_ahead<std::int8_t>);  // one prefetch_bytes
    return {isa,
            supported,
            gemv_fp32<V>,
            gemv_bf16<V>,
            gemv_int8<V>,
            b.rows,
            b.vecs,
            V::template blocking<Bf16>.rows,
            halves ? Bf16Method::halves : Bf16Method::widened,
            i8.rows,
            i8.vecs,
            prefetch_ahead<Bf16>};
}

}  // namespace ceiling::kernels::detail
