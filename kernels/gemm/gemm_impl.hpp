#pragma once
// The GEMM micro-kernel written once over a vector-traits type V (lanes, load, fmadd...).
// Included only by the per-ISA translation units, each with its traits in an anonymous
// namespace, so instantiations of different ISAs never merge (no ODR clash).

#include <cstddef>
#include <utility>

#include "kernels/gemm/gemm.hpp"

namespace ceiling::kernels::detail {

// ROWS x NV vectors of C in registers; per k: NV loads of B, ROWS broadcasts of A and
// ROWS x NV independent FMAs (28 on AVX-512 with 14 x 2: enough to cover 4-cycle FMA
// latency on 2 ports 3.5 times over, and 31 of the 32 zmm registers).
template <typename V, int MR, int NV, int ROWS>
void micro_kernel(int kc, const float* __restrict a, const float* __restrict b,
                  float* __restrict c, std::ptrdiff_t ldc, bool accumulate) {
    using R = typename V::reg;
    constexpr int L = V::lanes;
    // The C tile is read and written only after the k loop, and between two visits the
    // rest of C passes through the caches: at 1024^2 and beyond C lives in L3 (~370 cycles
    // away on the development VM), which left unprefetched costs ~20% of a 3600-cycle call.
    // Asked for now, its lines arrive while the FMAs run.
#pragma GCC unroll 16
    for (int i = 0; i < ROWS; ++i) {
        __builtin_prefetch(c + i * ldc, 1, 3);
        __builtin_prefetch(c + i * ldc + NV * L - 1, 1, 3);
    }
    R acc[ROWS][NV];
#pragma GCC unroll 16
    for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) acc[i][j] = V::zero();
    for (int k = 0; k < kc; ++k) {
        R bv[NV];
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) bv[j] = V::load(b + j * L);
#pragma GCC unroll 16
        for (int i = 0; i < ROWS; ++i) {
            const R av = V::set1(a[i]);
#pragma GCC unroll 4
            for (int j = 0; j < NV; ++j) acc[i][j] = V::fmadd(av, bv[j], acc[i][j]);
        }
        a += MR;
        b += NV * L;
    }
#pragma GCC unroll 16
    for (int i = 0; i < ROWS; ++i) {
        float* row = c + i * ldc;
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) {
            const R v = accumulate ? V::add(V::loadu(row + j * L), acc[i][j]) : acc[i][j];
            V::storeu(row + j * L, v);
        }
    }
}

// M (<= 8) rows of C from unpacked A and B, for decode-like GEMMs whose bound is B's
// DRAM stream: packing B (a copy into an L2 buffer) held one core near 8 GB/s, as every
// packed line costs a fill buffer for its read-for-ownership, while plain reads of 2-16 KiB
// pieces of B's rows run at 10-12 GB/s. Columns go in chunks whose M x chunk block of C
// (24 KiB) stays in L1; four rows of B at a time, so each vector of C is loaded and stored
// once per 4 k (with one row at a time, M = 8 spent more time on C than B took to stream).
template <typename V, int M>
void small_m_kernel(const float* a, std::ptrdiff_t lda, const float* b, std::ptrdiff_t ldb,
                    float* c, std::ptrdiff_t ldc, int n, int k, bool accumulate) {
    using R = typename V::reg;
    constexpr int L = V::lanes;
    constexpr int KB = 4;
    constexpr int chunk = (6144 / M) / 64 * 64;  // floats: M x chunk x 4 B <= 24 KiB
    const int k_main = k / KB * KB;
    for (int j0 = 0; j0 < n; j0 += chunk) {
        const int nb = n - j0 < chunk ? n - j0 : chunk;
        const int nv = nb / L * L;
        if (!accumulate)
            for (int i = 0; i < M; ++i)
                for (int j = 0; j < nb; ++j) c[i * ldc + j0 + j] = 0.0f;
        for (int kk = 0; kk < k_main; kk += KB) {
            const float* br = b + kk * ldb + j0;
            for (int j = 0; j < nv; j += L) {
                R bv[KB];
#pragma GCC unroll 4
                for (int q = 0; q < KB; ++q) bv[q] = V::loadu(br + q * ldb + j);
#pragma GCC unroll 8
                for (int i = 0; i < M; ++i) {
                    float* cp = c + i * ldc + j0 + j;
                    const float* ai = a + i * lda + kk;
                    R acc = V::loadu(cp);
#pragma GCC unroll 4
                    for (int q = 0; q < KB; ++q) acc = V::fmadd(V::set1(ai[q]), bv[q], acc);
                    V::storeu(cp, acc);
                }
            }
            for (int j = nv; j < nb; ++j)
                for (int i = 0; i < M; ++i)
                    for (int q = 0; q < KB; ++q)
                        c[i * ldc + j0 + j] += a[i * lda + kk + q] * br[q * ldb + j];
        }
        for (int kk = k_main; kk < k; ++kk)
            for (int i = 0; i < M; ++i)
                for (int j = 0; j < nb; ++j)
                    c[i * ldc + j0 + j] += a[i * lda + kk] * b[kk * ldb + j0 + j];
    }
}

template <typename V, std::size_t... Ms>
constexpr std::array<GemmSmallM, gemm_small_m> small_m_table(std::index_sequence<Ms...>) {
    return {{&small_m_kernel<V, static_cast<int>(Ms) + 1>...}};
}

// Aggregate-initialised (no std::array member functions instantiated under ISA flags).
template <typename V, int MR, int NV, std::size_t... Rows>
constexpr std::array<GemmMicroKernel, gemm_max_mr> micro_kernel_table(
    std::index_sequence<Rows...>) {
    return {{&micro_kernel<V, MR, NV, static_cast<int>(Rows) + 1>...}};
}

template <typename V, int MR, int NV>
GemmImpl make_gemm_impl(std::string_view isa, bool (*supported)(const CpuFeatures&), int kc,
                        int mc, int nc,
                        void (*pack_a)(const float*, std::ptrdiff_t, int, int, float*),
                        void (*pack_b)(const float*, std::ptrdiff_t, int, int, float*),
                        std::string_view symbol) {
    static_assert(MR <= gemm_max_mr);
    return {isa,
            supported,
            MR,
            NV * V::lanes,
            kc,
            mc,
            nc,
            micro_kernel_table<V, MR, NV>(std::make_index_sequence<MR>{}),
            symbol,
            pack_a,
            pack_b,
            small_m_table<V>(std::make_index_sequence<gemm_small_m>{})};
}

}  // namespace ceiling::kernels::detail
