#pragma once
// The bandwidth kernels written once over a vector-traits type V. Included only by the
// per-ISA translation units, each with its own compile flags and its traits in an
// anonymous namespace, so instantiations never collide across ISAs (no ODR merging).

#include <cstddef>

#include "kernels/roofs/bandwidth.hpp"

namespace ceiling::kernels::detail {

// Eight independent accumulators: loads, not the add latency, limit the loop.
template <typename V>
double read(const float* a, std::size_t n, int passes) {
    using R = typename V::reg;
    constexpr std::size_t L = V::lanes;
    R s0 = V::zero(), s1 = V::zero(), s2 = V::zero(), s3 = V::zero();
    R s4 = V::zero(), s5 = V::zero(), s6 = V::zero(), s7 = V::zero();
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
    return V::sum(V::add(V::add(V::add(s0, s1), V::add(s2, s3)),
                         V::add(V::add(s4, s5), V::add(s6, s7))));
}

template <typename V>
void write(float* a, std::size_t n, int passes) {
    for (int p = 0; p < passes; ++p) {
        const auto v = V::set1(static_cast<float>(p));
        for (std::size_t i = 0; i < n; i += V::lanes) V::store(a + i, v);
        asm volatile("" ::: "memory");
    }
}

template <typename V>
void copy(float* dst, const float* src, std::size_t n, int passes) {
    for (int p = 0; p < passes; ++p) {
        for (std::size_t i = 0; i < n; i += V::lanes) V::store(dst + i, V::load(src + i));
        asm volatile("" ::: "memory");
    }
}

template <typename V>
void triad(float* a, const float* b, const float* c, float s, std::size_t n, int passes) {
    const auto vs = V::set1(s);
    for (int p = 0; p < passes; ++p) {
        for (std::size_t i = 0; i < n; i += V::lanes)
            V::store(a + i, V::fmadd(vs, V::load(c + i), V::load(b + i)));
        asm volatile("" ::: "memory");
    }
}

template <typename V>
constexpr BandwidthImpl make_impl(std::string_view isa, bool (*supported)(const CpuFeatures&)) {
    return {isa, supported, read<V>, write<V>, copy<V>, triad<V>};
}

}  // namespace ceiling::kernels::detail
