#include "kernels/roofs/compute.hpp"

#include <array>
#include <cmath>
#include <cstring>
#include <memory>

extern "C" {
#define DECLARE(NAME) void NAME(std::int64_t, ceiling::kernels::RoofOperands*);
DECLARE(ceiling_roof_fp64_scalar)
DECLARE(ceiling_roof_fp32_scalar)
DECLARE(ceiling_roof_fp64_fma128)
DECLARE(ceiling_roof_fp32_fma128)
DECLARE(ceiling_roof_fp64_fma256)
DECLARE(ceiling_roof_fp32_fma256)
DECLARE(ceiling_roof_fp64_fma512)
DECLARE(ceiling_roof_fp32_fma512)
DECLARE(ceiling_roof_fp16_fma512)
DECLARE(ceiling_roof_bf16_dot512)
DECLARE(ceiling_roof_int8_dot256)
DECLARE(ceiling_roof_int8_dot512)
DECLARE(ceiling_roof_bf16_amx)
DECLARE(ceiling_roof_int8_amx)
DECLARE(ceiling_clock_scalar)
DECLARE(ceiling_clock_amx)
#undef DECLARE
}

namespace ceiling::kernels {
namespace {

bool has_fma(const CpuFeatures& f) { return f.fma; }
bool has_avx512(const CpuFeatures& f) { return f.avx512f; }
bool has_avx512_fp16(const CpuFeatures& f) { return f.avx512_fp16; }
bool has_avx512_bf16(const CpuFeatures& f) { return f.avx512_bf16; }
bool has_avx_vnni(const CpuFeatures& f) { return f.avx_vnni; }
bool has_avx512_vnni(const CpuFeatures& f) { return f.avx512_vnni; }
bool has_amx_bf16(const CpuFeatures& f) { return f.amx_bf16; }
bool has_amx_int8(const CpuFeatures& f) { return f.amx_int8; }
bool has_avx2_fma(const CpuFeatures& f) { return f.avx2 && f.fma; }
bool has_amx_clock(const CpuFeatures& f) { return f.amx_bf16 && f.avx512f; }
bool always(const CpuFeatures&) { return true; }

// Increments per iteration = instructions per accumulator per iteration (2; 1 for the
// 512-bit kernels, 24 accumulators; tiles 2)
// x the per-instruction increment with a = 1, b = 0.5 (s8 b = 2):
//   FMA: 1 x 0.5 = 0.5;  vdpbf16ps: 2 pairs x 0.5 = 1;  vpdpbusd: 4 x (1 x 2) = 8;
//   tdpbf16ps: 32 products x 0.5 = 16;  tdpbusd: 64 x (1 x 2) = 128.
constexpr std::array<ComputeKernel, 14> table = {{
    {"fp64_scalar", "ceiling_roof_fp64_scalar", "vfmadd231sd", "xmm", 24, 2, has_fma, false,
     ceiling_roof_fp64_scalar, Elem::f64, Elem::f64, Elem::f64, 12, 64, 1, 2 * 0.5},
    {"fp32_scalar", "ceiling_roof_fp32_scalar", "vfmadd231ss", "xmm", 24, 2, has_fma, false,
     ceiling_roof_fp32_scalar, Elem::f32, Elem::f32, Elem::f32, 12, 64, 1, 2 * 0.5},
    {"fp64_fma128", "ceiling_roof_fp64_fma128", "vfmadd231pd", "xmm", 24, 4, has_fma, false,
     ceiling_roof_fp64_fma128, Elem::f64, Elem::f64, Elem::f64, 12, 64, 2, 2 * 0.5},
    {"fp32_fma128", "ceiling_roof_fp32_fma128", "vfmadd231ps", "xmm", 24, 8, has_fma, false,
     ceiling_roof_fp32_fma128, Elem::f32, Elem::f32, Elem::f32, 12, 64, 4, 2 * 0.5},
    {"fp64_fma256", "ceiling_roof_fp64_fma256", "vfmadd231pd", "ymm", 24, 8, has_fma, false,
     ceiling_roof_fp64_fma256, Elem::f64, Elem::f64, Elem::f64, 12, 64, 4, 2 * 0.5},
    {"fp32_fma256", "ceiling_roof_fp32_fma256", "vfmadd231ps", "ymm", 24, 16, has_fma, false,
     ceiling_roof_fp32_fma256, Elem::f32, Elem::f32, Elem::f32, 12, 64, 8, 2 * 0.5},
    {"fp64_fma512", "ceiling_roof_fp64_fma512", "vfmadd231pd", "zmm", 24, 16, has_avx512, false,
     ceiling_roof_fp64_fma512, Elem::f64, Elem::f64, Elem::f64, 24, 64, 8, 1 * 0.5},
    {"fp32_fma512", "ceiling_roof_fp32_fma512", "vfmadd231ps", "zmm", 24, 32, has_avx512, false,
     ceiling_roof_fp32_fma512, Elem::f32, Elem::f32, Elem::f32, 24, 64, 16, 1 * 0.5},
    {"fp16_fma512", "ceiling_roof_fp16_fma512", "vfmadd231ph", "zmm", 24, 64, has_avx512_fp16,
     false, ceiling_roof_fp16_fma512, Elem::f16, Elem::f16, Elem::f16, 24, 64, 32, 1 * 0.5},
    {"bf16_dot512", "ceiling_roof_bf16_dot512", "vdpbf16ps", "zmm", 24, 64, has_avx512_bf16, false,
     ceiling_roof_bf16_dot512, Elem::f32, Elem::bf16, Elem::bf16, 24, 64, 16, 1 * 1.0},
    {"int8_dot256", "ceiling_roof_int8_dot256", "vpdpbusd", "ymm", 24, 64, has_avx_vnni, false,
     ceiling_roof_int8_dot256, Elem::i32, Elem::u8, Elem::s8, 12, 64, 8, 2 * 8.0},
    {"int8_dot512", "ceiling_roof_int8_dot512", "vpdpbusd", "zmm", 24, 128, has_avx512_vnni, false,
     ceiling_roof_int8_dot512, Elem::i32, Elem::u8, Elem::s8, 24, 64, 16, 1 * 8.0},
    {"bf16_amx", "ceiling_roof_bf16_amx", "tdpbf16ps", "tmm", 8, 16384, has_amx_bf16, true,
     ceiling_roof_bf16_amx, Elem::f32, Elem::bf16, Elem::bf16, 4, 1024, 256, 2 * 16.0},
    {"int8_amx", "ceiling_roof_int8_amx", "tdpbusd", "tmm", 8, 32768, has_amx_int8, true,
     ceiling_roof_int8_amx, Elem::i32, Elem::u8, Elem::s8, 4, 1024, 256, 2 * 128.0},
}};

// The fp32 FMA roof of a width with 48 chained adds per 24 FMAs: half of a 2-port core's
// FMA density (the clock such code gets; the roofs' own clocks come from a sweep).
void (*half_density(std::string_view roof))(std::int64_t, RoofOperands*) {
    for (const auto& r : chained_runs(roof))
        if (r.chain == 48) return r.run;
    return nullptr;
}

const std::array<ClockKernel, 5>& clocks() {
    static const std::array<ClockKernel, 5> c = {{
        {"scalar", "ceiling_clock_scalar", 48, always, false, ceiling_clock_scalar},
        {"128", "ceiling::kernels::chained::fp32_fma128<48>::run", 48, has_fma, false,
         half_density("fp32_fma128")},
        {"256", "ceiling::kernels::chained::fp32_fma256<48>::run", 48, has_avx2_fma, false,
         half_density("fp32_fma256")},
        {"512", "ceiling::kernels::chained::fp32_fma512<48>::run", 48, has_avx512, false,
         half_density("fp32_fma512")},
        {"amx", "ceiling_clock_amx", 48, has_amx_clock, true, ceiling_clock_amx},
    }};
    return c;
}

std::size_t elem_size(Elem e) {
    switch (e) {
        case Elem::f64:
            return 8;
        case Elem::f32:
        case Elem::i32:
            return 4;
        case Elem::f16:
        case Elem::bf16:
            return 2;
        case Elem::u8:
        case Elem::s8:
            return 1;
    }
    return 1;
}

// IEEE binary16 <-> float for small exact integers and halves, without F16C.
std::uint16_t to_f16(float v) {
    if (v == 0) return 0;
    int e = 0;
    const float m = std::frexp(v, &e);  // v = m 2^e, m in [0.5, 1)
    const auto mant = static_cast<std::uint16_t>(std::lround((m * 2 - 1) * 1024));
    return static_cast<std::uint16_t>(((e - 1 + 15) << 10) | mant);
}
double from_f16(std::uint16_t h) {
    const int e = (h >> 10) & 0x1f;
    const int mant = h & 0x3ff;
    if (e == 0) return std::ldexp(mant, -24);
    return std::ldexp(1.0 + mant / 1024.0, e - 15) * ((h & 0x8000) ? -1 : 1);
}

void store(Elem e, std::byte* p, double v) {
    switch (e) {
        case Elem::f64: {
            double x = v;
            std::memcpy(p, &x, 8);
            break;
        }
        case Elem::f32: {
            float x = static_cast<float>(v);
            std::memcpy(p, &x, 4);
            break;
        }
        case Elem::i32: {
            auto x = static_cast<std::int32_t>(v);
            std::memcpy(p, &x, 4);
            break;
        }
        case Elem::f16: {
            auto x = to_f16(static_cast<float>(v));
            std::memcpy(p, &x, 2);
            break;
        }
        case Elem::bf16: {  // the top half of the float's bits (exact for 1 and 0.5)
            float f = static_cast<float>(v);
            std::uint32_t bits = 0;
            std::memcpy(&bits, &f, 4);
            auto x = static_cast<std::uint16_t>(bits >> 16);
            std::memcpy(p, &x, 2);
            break;
        }
        case Elem::u8: {
            auto x = static_cast<std::uint8_t>(v);
            std::memcpy(p, &x, 1);
            break;
        }
        case Elem::s8: {
            auto x = static_cast<std::int8_t>(v);
            std::memcpy(p, &x, 1);
            break;
        }
    }
}

double load(Elem e, const std::byte* p) {
    switch (e) {
        case Elem::f64: {
            double x;
            std::memcpy(&x, p, 8);
            return x;
        }
        case Elem::f32: {
            float x;
            std::memcpy(&x, p, 4);
            return x;
        }
        case Elem::i32: {
            std::int32_t x;
            std::memcpy(&x, p, 4);
            return x;
        }
        case Elem::f16: {
            std::uint16_t x;
            std::memcpy(&x, p, 2);
            return from_f16(x);
        }
        default:
            return 0;  // inputs only
    }
}

void fill(Elem e, std::byte* p, std::size_t bytes, double v) {
    for (std::size_t off = 0; off + elem_size(e) <= bytes; off += elem_size(e))
        store(e, p + off, v);
}

}  // namespace

std::span<const ComputeKernel> compute_kernels() { return table; }

const ComputeKernel* find_compute_kernel(std::string_view roof) {
    for (const auto& k : table)
        if (k.roof == roof) return &k;
    return nullptr;
}

std::span<const ClockKernel> clock_kernels() { return clocks(); }

void fill_check_operands(const ComputeKernel& k, RoofOperands& ops) {
    std::memset(&ops, 0, sizeof ops);
    for (int i = 0; i < k.accumulators; ++i)
        fill(k.acc_elem, ops.acc + i * k.acc_stride_bytes, k.acc_stride_bytes, i + 1);
    fill(k.a_elem, ops.a, sizeof ops.a, 1.0);
    fill(k.b_elem, ops.b, sizeof ops.b, k.b_elem == Elem::s8 ? 2.0 : 0.5);
}

std::string verify_compute_kernel(const ComputeKernel& k) {
    constexpr std::int64_t iterations = 37;
    auto ops = std::make_unique<RoofOperands>();
    fill_check_operands(k, *ops);
    k.run(iterations, ops.get());
    const std::size_t lane_bytes = elem_size(k.acc_elem);
    for (int i = 0; i < k.accumulators; ++i)
        for (int lane = 0; lane < k.lanes; ++lane) {
            const double want = i + 1 + k.increment_per_iteration * iterations;
            const double got =
                load(k.acc_elem, ops->acc + i * k.acc_stride_bytes + lane * lane_bytes);
            if (got != want)
                return std::string(k.roof) + ": accumulator " + std::to_string(i) + " lane " +
                       std::to_string(lane) + " is " + std::to_string(got) + ", expected " +
                       std::to_string(want);
        }
    return {};
}

}  // namespace ceiling::kernels
