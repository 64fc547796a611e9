#pragma once
// The bandwidth kernels written once over a vector-traits type V. Included only by the
// per-ISA translation units, each with its own compile flags and its traits in an
// anonymous namespace, so instantiations never collide across ISAs (no ODR merging).

#include <cstddef>

#include "kernels/cpu_features.hpp"
#include "kernels/roofs/bandwidth.hpp"

namespace ceiling::kernels::detail {

// Loads, not the add latency, limit both loops: eight independent accumulators.
// An array that fits a core's L2 is read as one stream, eight vectors a step. A larger one
// is read as eight equal segments side by side, one vector from each per step, so that
// eight hardware prefetch streams run at once: one stream per thread is held back by its
// own prefetch depth beyond L2. On a Xeon VM (AVX-512, DRAM ~165 ns away), 256 MiB per
// thread, one stream read 10.1 GB/s on one thread and 19.0 on two against 13.0-15.1 and
// 26.4 for eight (2 and 4 streams in between), and GEMV, which reads several rows at once,
// ran above the one-stream roof (12.9 GB/s on one thread, 18.8 on two) and was judged
// `above_roof`. In L1 the eight-segment loop read 147-189 GB/s against 203-213 (its loads
// take an index register each), in L2 3-7% less, in L3 the same: the two loops meet there.
template <typename V>
double read(const float* a, std::size_t n, int passes) {
    using R = typename V::reg;
    constexpr std::size_t L = V::lanes;
    R s0 = V::zero(), s1 = V::zero(), s2 = V::zero(), s3 = V::zero();
    R s4 = V::zero(), s5 = V::zero(), s6 = V::zero(), s7 = V::zero();
    if (n * sizeof(float) <= cache_sizes().l2) {
        for (int p = 0; p < passes; ++p) {
            for (std::size_t i = 0; i < n; i += 8 * L) {
                s0 = V::add(s0, V::load(a + i + 0 * L));
                s1 = V::add(s1, V::load(a + i + 1 * L));
                s2 = V::add(s2, V::load(a + i + 2 * L));
                s3 = V::add(s3, V::load(a + i + 3 * L));
                s4 = V::add(s4, V::load(a + i + 4 * L));
                s5 = V::add(s5, V::load(a + i + 5 * L));
                s6 = V::add(s6, V::load(a + i + 6 * L));
                s7 = V::add(s7, V::load(a + i + 7 * L));
            }
            asm volatile("" ::: "memory");
        }
    } else {
        const std::size_t seg = n / 8;  // n is a multiple of bandwidth_block_floats
        for (int p = 0; p < passes; ++p) {
            for (std::size_t i = 0; i < seg; i += L) {
                s0 = V::add(s0, V::load(a + 0 * seg + i));
                s1 = V::add(s1, V::load(a + 1 * seg + i));
                s2 = V::add(s2, V::load(a + 2 * seg + i));
                s3 = V::add(s3, V::load(a + 3 * seg + i));
                s4 = V::add(s4, V::load(a + 4 * seg + i));
                s5 = V::add(s5, V::load(a + 5 * seg + i));
                s6 = V::add(s6, V::load(a + 6 * seg + i));
                s7 = V::add(s7, V::load(a + 7 * seg + i));
            }
            asm volatile("" ::: "memory");
        }
    }
    return V::sum(V::add(V::add(V::add(s0, s1), V::add(s2, s3)),
                         V::add(V::add(s4, s5), V::add(s6, s7))));
}

// write, copy, triad and update four vectors an iteration (n is a multiple of
// bandwidth_block_floats): one a step left the loop's own increment, compare and branch
// binding in L1 on Zen 5, where triad read 510-630 GB/s, moving between sweep points and
// runs, against a steady 730-780 unrolled (read keeps its eight accumulators).
template <typename V>
void write(float* a, std::size_t n, int passes) {
    for (int p = 0; p < passes; ++p) {
        const auto v = V::set1(static_cast<float>(p));
#pragma GCC unroll 4
        for (std::size_t i = 0; i < n; i += V::lanes) V::store(a + i, v);
        asm volatile("" ::: "memory");
    }
}

template <typename V>
void copy(float* dst, const float* src, std::size_t n, int passes) {
    for (int p = 0; p < passes; ++p) {
#pragma GCC unroll 4
        for (std::size_t i = 0; i < n; i += V::lanes) V::store(dst + i, V::load(src + i));
        asm volatile("" ::: "memory");
    }
}

template <typename V>
void triad(float* a, const float* b, const float* c, float s, std::size_t n, int passes) {
    const auto vs = V::set1(s);
    for (int p = 0; p < passes; ++p) {
#pragma GCC unroll 4
        for (std::size_t i = 0; i < n; i += V::lanes)
            V::store(a + i, V::fmadd(vs, V::load(c + i), V::load(b + i)));
        asm volatile("" ::: "memory");
    }
}

// a = 0.5 a + 1 converges to 2 from any start: no overflow or denormals over many passes.
template <typename V>
void update(float* a, std::size_t n, int passes) {
    const auto half = V::set1(0.5f), one = V::set1(1.0f);
    for (int p = 0; p < passes; ++p) {
#pragma GCC unroll 4
        for (std::size_t i = 0; i < n; i += V::lanes)
            V::store(a + i, V::fmadd(half, V::load(a + i), one));
        asm volatile("" ::: "memory");
    }
}

template <typename V>
constexpr BandwidthImpl make_impl(std::string_view isa, bool (*supported)(const CpuFeatures&)) {
    return {isa, supported, read<V>, write<V>, copy<V>, triad<V>, update<V>};
}

}  // namespace ceiling::kernels::detail
