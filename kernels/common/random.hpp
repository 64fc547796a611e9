#pragma once
// Random inputs from a fixed seed, the same whatever the thread count: element i's value
// is a hash of (seed, i) (splitmix64), so fills can run on all threads and tests and the
// suite see the same data. Never all zero: a kernel that ignores an input cannot pass.

#include <cstddef>
#include <cstdint>

#include "kernels/common/bf16.hpp"

namespace ceiling::kernels {

// The seed of every kernel's data; per-array seeds derive from it (seed + array number).
inline constexpr std::uint64_t kernel_data_seed = 0x5eed'2024'c0ffeeULL;

inline std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

inline std::uint64_t random_bits(std::uint64_t seed, std::uint64_t i) {
    return splitmix64(splitmix64(seed) ^ i);
}

// Uniform in [lo, hi) from the top 24 bits.
inline float random_float(std::uint64_t seed, std::uint64_t i, float lo, float hi) {
    const auto u = static_cast<float>(random_bits(seed, i) >> 40) * 0x1p-24f;
    return lo + (hi - lo) * u;
}

// Each fill runs on `threads` threads (first touch spreads pages over the team).
void fill_uniform(float* p, std::size_t n, std::uint64_t seed, float lo, float hi, int threads);
// Uniform floats rounded to bf16.
void fill_uniform_bf16(Bf16* p, std::size_t n, std::uint64_t seed, float lo, float hi, int threads);
// Uniform integers in [lo, hi].
void fill_uniform_int8(std::int8_t* p, std::size_t n, std::uint64_t seed, int lo, int hi, int threads);
void fill_uniform_uint8(std::uint8_t* p, std::size_t n, std::uint64_t seed, int threads);
// Writes `value` everywhere (outputs start as NaN: an output never written fails the check).
void fill_float(float* p, std::size_t n, float value, int threads);
// Writes zeros on `threads` threads (first touch of outputs).
void fill_zero(void* p, std::size_t bytes, int threads);
// Parallel memcpy, for making the rotation copies of a buffer set.
void parallel_copy(void* dst, const void* src, std::size_t bytes, int threads);

}  // namespace ceiling::kernels
