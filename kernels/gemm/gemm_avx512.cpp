// Compiled with AVX-512 enabled (kernels/CMakeLists.txt); run only where supported.
// GCC 12.2 warns "may be used uninitialized" inside its own AVX-512 headers for
// intrinsics built on _mm512_undefined_*() (GCC PR 105593, fixed in 12.3): off here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <array>
#include <cstdint>
#include <cstring>

#include <immintrin.h>

#include "kernels/gemm/gemm_impl.hpp"

namespace ceiling::kernels {
namespace {
struct V512 {
    using reg = __m512;
    static constexpr int registers = 32;
    static constexpr int lanes = 16;
    static reg zero() { return _mm512_setzero_ps(); }
    static reg set1(float x) { return _mm512_set1_ps(x); }
    static reg load(const float* p) { return _mm512_load_ps(p); }
    static reg loadu(const float* p) { return _mm512_loadu_ps(p); }
    static void storeu(float* p, reg v) { _mm512_storeu_ps(p, v); }
    static reg add(reg a, reg b) { return _mm512_add_ps(a, b); }
    static reg fmadd(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
};
bool supported(const CpuFeatures& f) { return f.avx512f; }

// The bf16-pair GEMM (gemm_bf16.hpp): each 32-bit element is a pair of bf16 (k = 2q in the
// low half, 2q + 1 in the high), and the multiply-add is vdpbf16ps, which adds both of a
// lane's products into its fp32 accumulator. Loads, broadcasts, stores and the packers move
// the pairs' bits unchanged.
struct V512Bf16 : V512 {
    static reg fmadd(reg a, reg b, reg c) {
        return _mm512_dpbf16_ps(c, reinterpret_cast<__m512bh>(a), reinterpret_cast<__m512bh>(b));
    }
    // The bits through memcpy, not std::bit_cast: a std:: template instantiated here is a
    // weak symbol baseline code could end up calling (isa_objects_test.cpp).
    static float scalar_fmadd(float a, float b, float acc) {
        const auto half = [](float x, bool high) {
            std::uint32_t u;
            std::memcpy(&u, &x, sizeof u);
            u = high ? u & 0xffff0000u : u << 16;
            float f;
            std::memcpy(&f, &u, sizeof f);
            return f;
        };
        return acc + half(a, false) * half(b, false) + half(a, true) * half(b, true);
    }
};
bool supported_bf16(const CpuFeatures& f) { return f.avx512f && f.avx512_bf16; }

// In-register transpose of 16 rows of 16 floats: 4 rounds of 16 shuffles (pairs of
// floats, pairs of pairs, then 128-bit lanes twice).
__attribute__((always_inline)) inline void transpose16(__m512 (&r)[16]) {
    __m512 t[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
#pragma GCC unroll 16
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xee);
        r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xee);
    }
#pragma GCC unroll 16
    for (int i = 0; i < 16; i += 8)
#pragma GCC unroll 16
        for (int j = 0; j < 4; ++j) {
            t[i + j] = _mm512_shuffle_f32x4(r[i + j], r[i + j + 4], 0x88);
            t[i + j + 4] = _mm512_shuffle_f32x4(r[i + j], r[i + j + 4], 0xdd);
        }
#pragma GCC unroll 16
    for (int j = 0; j < 8; ++j) {
        r[j] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0x88);
        r[j + 8] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0xdd);
    }
}

// A block -> 14-row panels, 16 k at a time: 14 row loads (masked at the k tail), each row
// prefetched 8 lines ahead, one transpose in registers, then the 16 x 14 floats of the panel
// (224: fourteen cache lines) written as 14 full vectors, each joined from two transposed
// rows by one two-source permute. The portable packer stores one float at a time with a
// 56-byte stride (12% of a 1024^3 GEMM's time on one thread). perf on 512^3, one thread,
// Zen 5: this packer's share was 5.4% while the compiler kept the 16 rows on the stack (the
// transpose's loops not unrolled), 3.6-4.9% in registers, 2.4-3.1% with the row prefetch;
// 16 masked 14-float stores (most split a cache line) instead of the permutes: 2.9-3.3%.
constexpr int mr = 14;
// Lane j of output vector v is element 16v + j of the 16 x 14 block, i.e. row (16v + j) % 14
// of k (16v + j) / 14: taken from transposed row 16v / 14 (index < 16) or the one after (+16).
// A plain struct, not std::array: a Debug build emits std::array's members out of line as
// weak definitions, which the linker may pick for baseline code (isa_objects_test.cpp).
struct JoinTable {
    int idx[mr][16];
};
constexpr JoinTable pack_a_join = [] {
    JoinTable t{};
    for (int v = 0; v < mr; ++v)
        for (int j = 0; j < 16; ++j) {
            const int e = 16 * v + j;
            t.idx[v][j] = e % mr + 16 * (e / mr - 16 * v / mr);
        }
    return t;
}();
void pack_a(const float* a, std::ptrdiff_t lda, int mc, int kc, float* ap) {
    for (int p = 0; p < mc; p += mr) {
        const int rows = mc - p < mr ? mc - p : mr;
        float* dst = ap + static_cast<std::ptrdiff_t>(p) * kc;
        for (int k0 = 0; k0 < kc; k0 += 16) {
            const int kn = kc - k0 < 16 ? kc - k0 : 16;
            const auto kmask = static_cast<__mmask16>((1u << kn) - 1);
            __m512 r[16];
#pragma GCC unroll 16
            for (int i = 0; i < 16; ++i) {
                const float* row = a + (p + i) * lda + k0;
                if (i < rows) __builtin_prefetch(row + 128, 0, 3);
                r[i] = i < rows ? _mm512_maskz_loadu_ps(kmask, row) : _mm512_setzero_ps();
            }
            transpose16(r);
            float* out = dst + k0 * mr;
            if (kn < 16) {
                for (int k = 0; k < kn; ++k) _mm512_mask_storeu_ps(out + k * mr, 0x3fff, r[k]);
                continue;
            }
#pragma GCC unroll 14
            for (int v = 0; v < mr; ++v) {
                const int k = 16 * v / mr;
                const __m512i idx = _mm512_loadu_si512(pack_a_join.idx[v]);
                _mm512_storeu_ps(out + 16 * v, _mm512_permutex2var_ps(r[k], idx, r[k + 1]));
            }
        }
    }
}

// B block -> 32-column panels, row by row (sequential reads of B: when it packed whole
// blocks before any FMA, this copy was the DRAM stream of small batches, and 128-byte memcpy
// calls held it near half the read roof); aligned stores into the packed block, the column
// tail zero-padded. Each block before its calls (gemm.cpp), and B once for PackedB.
constexpr int nr = 32;
void pack_b(const float* b, std::ptrdiff_t ldb, int rows, int kc, int nc, float* bp) {
    const int full = nc / nr * nr;
    const auto tail = static_cast<std::uint32_t>(nc - full);
    const auto lo = static_cast<__mmask16>(tail >= 16 ? 0xffff : (1u << tail) - 1);
    const auto hi = static_cast<__mmask16>(tail <= 16 ? 0 : (1u << (tail - 16)) - 1);
    for (int k = 0; k < rows; ++k) {
        const float* row = b + k * ldb;
        float* dst = bp + k * nr;
        const bool ahead = k + 8 < rows;  // rows of this call only (see gemm.cpp's slices)
        for (int q = 0; q < full; q += nr) {
            if (ahead) {
                __builtin_prefetch(row + 8 * ldb + q, 0, 3);
                __builtin_prefetch(row + 8 * ldb + q + 16, 0, 3);
            }
            float* d = dst + static_cast<std::ptrdiff_t>(q) * kc;
            _mm512_store_ps(d, _mm512_loadu_ps(row + q));
            _mm512_store_ps(d + 16, _mm512_loadu_ps(row + q + 16));
        }
        if (tail) {
            float* d = dst + static_cast<std::ptrdiff_t>(full) * kc;
            _mm512_store_ps(d, _mm512_maskz_loadu_ps(lo, row + full));
            _mm512_store_ps(d + 16, _mm512_maskz_loadu_ps(hi, row + full + 16));
        }
    }
}
}  // namespace
// 14 x 32 tile; cache blocks from this CPU's caches (gemm_blocks, gemm.hpp). Swept on a
// Sapphire Rapids VM at kc 256 (48 KiB L1d, 2 MiB L2): kc 128-192 lost 5-15% to the more
// frequent C updates; on Zen 4 (32 KiB L1d, 1 MiB L2) kc 512 beat 256 by 5-12%.
extern constinit const GemmImpl gemm_avx512 =
    detail::make_gemm_impl<V512, mr, 2>("avx512", supported, pack_a, pack_b,
                                        "_ZN7ceiling7kernels6detail12micro_kernelINS0_12_GLOBAL__N_"
                                        "14V512ELi14ELi2ELi14EEEviPKfS6_PflbRKNS0_12GemmPrefetchE");
// The same tile, blocks and packers over bf16 pairs, vdpbf16ps for the FMA (gemm_bf16.hpp).
extern constinit const GemmImpl gemm_avx512_bf16 = detail::make_gemm_impl<V512Bf16, mr, 2>(
    "avx512-bf16", supported_bf16, pack_a, pack_b,
    "_ZN7ceiling7kernels6detail12micro_kernelINS0_12_GLOBAL__N_18V512Bf16ELi14ELi2ELi14EEEviPKfS6_"
    "PflbRKNS0_12GemmPrefetchE");
}  // namespace ceiling::kernels
