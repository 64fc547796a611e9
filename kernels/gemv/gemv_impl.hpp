#pragma once
// The GEMV kernels written once over vector traits V; each weight type converts to fp32 in
// registers (bf16: shift left 16; int8: sign-extend and convert), so the arithmetic is the
// same fp32 FMA for all three and only the bytes streamed differ. Included only by the
// per-ISA translation units (traits in anonymous namespaces: no ODR merging).

#include <cstdint>

#include "kernels/gemv/gemv.hpp"

namespace ceiling::kernels::detail {

// Four rows at a time, two vectors of k per step: 8 independent FMA chains (covering the
// 4-cycle latency on 2 ports) and 4 row streams plus x in flight, which the L2 streamer
// prefetches; x (64 KiB at k = 16384) stays in L2 and is loaded once per step for 4 rows.
// V::weights(p) loads V::lanes weights of type W as fp32; V::weights_partial(p, n) the
// first n (n < lanes), the rest zero.
template <typename V, typename W>
void gemv_rows(const W* w, const float* x, float* y, const float* scale, int m, int k) {
    using R = typename V::reg;
    constexpr int L = V::lanes;
    constexpr int rows = 4;
    const int k_main = k / (2 * L) * (2 * L);
    int i = 0;
    for (; i + rows <= m; i += rows) {
        const W* r[rows];
        R acc[rows][2];
#pragma GCC unroll 4
        for (int j = 0; j < rows; ++j) {
            r[j] = w + static_cast<std::ptrdiff_t>(i + j) * k;
            acc[j][0] = V::zero();
            acc[j][1] = V::zero();
        }
        for (int kk = 0; kk < k_main; kk += 2 * L) {
            const R x0 = V::loadu(x + kk), x1 = V::loadu(x + kk + L);
#pragma GCC unroll 4
            for (int j = 0; j < rows; ++j) {
                acc[j][0] = V::fmadd(V::weights(r[j] + kk), x0, acc[j][0]);
                acc[j][1] = V::fmadd(V::weights(r[j] + kk + L), x1, acc[j][1]);
            }
        }
        for (int kk = k_main; kk < k; kk += L) {
            const int n = k - kk < L ? k - kk : L;
            const R xv = V::load_partial(x + kk, n);
#pragma GCC unroll 4
            for (int j = 0; j < rows; ++j)
                acc[j][0] = V::fmadd(V::weights_partial(r[j] + kk, n), xv, acc[j][0]);
        }
#pragma GCC unroll 4
        for (int j = 0; j < rows; ++j) {
            const float s = V::sum(V::add(acc[j][0], acc[j][1]));
            y[i + j] = scale ? s * scale[i + j] : s;
        }
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
GemvImpl make_gemv_impl(std::string_view isa, bool (*supported)(const CpuFeatures&),
                        std::string_view fp32_symbol) {
    return {isa, supported, gemv_fp32<V>, gemv_bf16<V>, gemv_int8<V>, fp32_symbol};
}

}  // namespace ceiling::kernels::detail
