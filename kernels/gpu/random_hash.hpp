#pragma once
// Random inputs that the device generates in place and the host regenerates element by
// element for its reference: value i of stream `seed` is a pure function of (seed, i).
// No copy of gigabytes back to the host, no zeros (which hide unwritten outputs and can
// run faster than real data), and the same data on every run. Compiled by nvcc and g++.

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define CEILING_HD __host__ __device__ __forceinline__
#else
#define CEILING_HD inline
#endif

namespace ceiling::kernels::gpu {

CEILING_HD std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// Uniform in [-1, 1) with 24 significant bits (exact in fp32).
CEILING_HD float uniform_at(std::uint64_t seed, std::uint64_t i) {
    const std::uint64_t h = splitmix64(seed * 0x632be59bd9b4e019ull + i);
    return static_cast<float>(static_cast<std::int64_t>(h >> 40)) * (1.0f / 8388608.0f) - 1.0f;
}

// Uniform in [0, 1).
CEILING_HD float unit_at(std::uint64_t seed, std::uint64_t i) { return 0.5f * (uniform_at(seed, i) + 1.0f); }

// Uniform integer in [-127, 127].
CEILING_HD std::int8_t int8_at(std::uint64_t seed, std::uint64_t i) {
    const std::uint64_t h = splitmix64(seed * 0x632be59bd9b4e019ull + i);
    return static_cast<std::int8_t>(static_cast<int>(h % 255u) - 127);
}

CEILING_HD std::uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
#endif
}

CEILING_HD float bits_float(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
#endif
}

// bfloat16 bits, rounded to nearest even (what __float2bfloat16_rn does; inputs are finite).
CEILING_HD std::uint16_t to_bf16_bits(float f) {
    const std::uint32_t u = float_bits(f);
    return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
CEILING_HD float bf16_bits_to_float(std::uint16_t b) { return bits_float(static_cast<std::uint32_t>(b) << 16); }
CEILING_HD float round_to_bf16(float f) { return bf16_bits_to_float(to_bf16_bits(f)); }

// Bits of an fp16 for values it holds exactly and normal (the tensor roofs' multiples of 1/8
// in [-1, 1], exact_dot_operands): the float's exponent rebased and mantissa cut.
CEILING_HD std::uint16_t exact_half_bits(float f) {
    if (f == 0) return 0;
    const std::uint32_t u = float_bits(f);
    const std::uint32_t sign = (u >> 16) & 0x8000u;
    const int exponent = static_cast<int>((u >> 23) & 0xff) - 127 + 15;
    return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(exponent) << 10) |
                                      ((u >> 13) & 0x3ffu));
}

}  // namespace ceiling::kernels::gpu
