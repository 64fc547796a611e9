#pragma once
// bfloat16: the upper 16 bits of an IEEE float. Rounding to nearest even, as vcvtneps2bf16
// and the AMX/oneDNN conversions do, so a value converted here is what the hardware sees.

#include <bit>
#include <cstdint>

namespace ceiling::kernels {

using Bf16 = std::uint16_t;

inline float bf16_to_float(Bf16 v) { return std::bit_cast<float>(std::uint32_t{v} << 16); }

inline Bf16 float_to_bf16(float f) {
    const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
    const std::uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);  // ties to even (inputs are finite)
    return static_cast<Bf16>((u + rounding) >> 16);
}

}  // namespace ceiling::kernels
