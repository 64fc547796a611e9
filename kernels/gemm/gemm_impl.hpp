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

// Aggregate-initialised (no std::array member functions instantiated under ISA flags).
template <typename V, int MR, int NV, std::size_t... Rows>
constexpr std::array<GemmMicroKernel, gemm_max_mr> micro_kernel_table(
    std::index_sequence<Rows...>) {
    return {{&micro_kernel<V, MR, NV, static_cast<int>(Rows) + 1>...}};
}

template <typename V, int MR, int NV>
GemmImpl make_gemm_impl(std::string_view isa, bool (*supported)(const CpuFeatures&), int kc,
                        int mc, int nc, std::string_view symbol) {
    static_assert(MR <= gemm_max_mr);
    return {isa,
            supported,
            MR,
            NV * V::lanes,
            kc,
            mc,
            nc,
            micro_kernel_table<V, MR, NV>(std::make_index_sequence<MR>{}),
            symbol};
}

}  // namespace ceiling::kernels::detail
