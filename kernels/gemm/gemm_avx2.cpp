// Compiled with AVX2 + FMA enabled (kernels/CMakeLists.txt); run only where supported.
#include <immintrin.h>

#include "kernels/gemm/gemm_impl.hpp"

namespace ceiling::kernels {
namespace {
struct V256 {
    using reg = __m256;
    static constexpr int registers = 16;
    static constexpr int lanes = 8;
    static reg zero() { return _mm256_setzero_ps(); }
    static reg set1(float x) { return _mm256_set1_ps(x); }
    static reg load(const float* p) { return _mm256_load_ps(p); }
    static reg loadu(const float* p) { return _mm256_loadu_ps(p); }
    static void storeu(float* p, reg v) { _mm256_storeu_ps(p, v); }
    static reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
    static reg fmadd(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
};
bool supported(const CpuFeatures& f) { return f.avx2 && f.fma; }

// In-register transpose of 8 rows of 8 floats: unpack pairs, shuffle pairs of pairs, then
// swap 128-bit halves (24 shuffles).
__attribute__((always_inline)) inline void transpose8(__m256 (&r)[8]) {
    __m256 t[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
#pragma GCC unroll 8
    for (int i = 0; i < 8; i += 4) {
        r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
        r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
    }
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
        t[i] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x20);
        t[i + 4] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x31);
    }
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) r[i] = t[i];
}

// A block -> 6-row panels, 8 k at a time: 6 row loads (masked at the k tail), each row
// prefetched 8 lines ahead, one transpose in registers, then one 8-float store per k at a
// 6-float stride, in increasing address order, so each store's last two floats are
// overwritten by the next; each panel's last store is masked to 6 floats (after the block's
// last panel nothing would overwrite the two extra, which may lie past the buffer).
// perf on 512^3, one thread, Zen 5 (the AVX2 path forced): the portable packer (one float at
// a time, 24 bytes apart) took 3.2-5.1% of the time, this one 1.7-2.4%.
constexpr int mr = 6;
void pack_a(const float* a, std::ptrdiff_t lda, int mc, int kc, float* ap) {
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i six = _mm256_cmpgt_epi32(_mm256_set1_epi32(mr), lanes);
    for (int p = 0; p < mc; p += mr) {
        const int rows = mc - p < mr ? mc - p : mr;
        float* dst = ap + static_cast<std::ptrdiff_t>(p) * kc;
        for (int k0 = 0; k0 < kc; k0 += 8) {
            const int kn = kc - k0 < 8 ? kc - k0 : 8;
            const __m256i kmask = _mm256_cmpgt_epi32(_mm256_set1_epi32(kn), lanes);
            __m256 r[8];
#pragma GCC unroll 8
            for (int i = 0; i < 8; ++i) {
                const float* row = a + (p + i) * lda + k0;
                if (i < rows) __builtin_prefetch(row + 128, 0, 3);
                r[i] = i >= rows ? _mm256_setzero_ps()
                       : kn == 8 ? _mm256_loadu_ps(row)
                                 : _mm256_maskload_ps(row, kmask);
            }
            transpose8(r);
            float* out = dst + k0 * mr;
            const bool last = k0 + kn == kc;
#pragma GCC unroll 8
            for (int k = 0; k < 8; ++k) {
                if (k >= kn) break;
                if (last && k == kn - 1)
                    _mm256_maskstore_ps(out + k * mr, six, r[k]);
                else
                    _mm256_storeu_ps(out + k * mr, r[k]);
            }
        }
    }
}
}  // namespace
// 6 x 16 tile: 12 accumulators + 2 B + 1 A = 15 of the 16 ymm registers; cache blocks from
// this CPU's caches (gemm_blocks, gemm.hpp). Against OpenBLAS 0.3.21's Haswell core on a
// Zen 4 guest (the AVX2 path forced; both at 32 flop/cycle there): M <= 8 x 4096 x 4096
// 1.1-2.1x, 512^3 0.98-1.08, 2048^3 0.95-1.00, M = 32-256 0.85-0.95. The 8-load-per-12-FMA
// tile was the suspect, but 3 x 32 and 4 x 24 (7 loads per 12 FMAs) ran no faster (1024^3
// to 256 x 4096 x 4096, one thread, two rounds: 0.83-0.97 of OpenBLAS against 0.91-0.95 for
// 6 x 16), nor did dropping the second B prefetch per k (one line of B per k here: 0.84-0.95)
// or a shallower kc for this tile (512: 0.83-0.98, 256: 0.75-0.97; 1024 0.87-0.97 beside them).
// (Those runs lacked the C prefetches, gemm_impl.hpp.) With them, kc 512, forced on a Zen 5
// guest against the Haswell core (one thread, one process, inputs on huge pages): 512^3
// 0.86, 1024^3 0.96, 4096^3 0.93, M = 64 and 256 x 4096 x 4096 0.89 and 0.93, in the loop
// order before the present one and with the portable pack_a. Now (two rounds of five): 512^3
// 0.99, 1024^3 1.01-1.02, 2048^3 0.99-1.01, 4096^3 0.98-1.00, M = 64 and 256 x 4096 x 4096
// 0.95-0.96 and 0.96-0.98. On a real AVX2-only CPU, a Zen 3 guest (32 KiB L1d, 512 KiB L2,
// OpenBLAS's Zen core, interleaved in one process): one thread 0.66-0.79 (512^3 to 2048^3,
// 64 and 256 x 4096 x 4096), two 0.83-0.92 at 2048^3 and M = 64-256. The blocks are not the
// gap (kc 128-512 x nc 48-192 at 2048^3 all 0.69-0.77), nor is the loop alone: a 6 x 16 loop
// on panels held in L1 ran at 0.77-0.93 of an FMA loop on registers timed beside it (4 x 24
// 0.87-0.95, 3 x 32 0.82-0.83: within the host's noise), and this loop's 4 prefetches per k
// cost it ~10 % there, yet one B prefetch per k instead of two moved the GEMM ratios by less
// than the noise (0.70-0.92 before and after). Unexplained, no PMU to count; open (issue 16).
// The Zen 4 guest again (2026-12-03, the AVX2 path forced, interleaved, medians of 9-15
// rounds): 0.73-0.79 of the Haswell core on one thread (512^3 to 2048^3, M = 64 and 256 x
// 4096 x 4096), the micro-kernel 92 % of the time and stalled on B's loads. Each k step
// then lost its second B prefetch (a line the next step prefetches anyway) and its A
// prefetch, and the k loop took two steps per iteration (gemm_impl.hpp): 0.93-1.02 on one
// thread, 1.04-1.17 on two. Zen 3's gap above may be this cost; not rechecked there.
// Zen 4 guest, 2026-12-04 (interleaved, 5-9 rounds): 0.988-1.013 of the Haswell core, at
// 110-111 GF/s for the squares (94 % of the 117 GF/s fp32_fma256 roof); perf (cpu-clock) at
// 512^3: the micro-kernels 95.5 % of the time (so ~98 % of the roof while they run), pack_a
// 1.8 %, pack_b 1.7 %, the block loop 0.7 %: what is left is the packing both libraries do.
extern constinit const GemmImpl gemm_avx2 =
    detail::make_gemm_impl<V256, mr, 2>("avx2", supported, pack_a, nullptr,
                                        "_ZN7ceiling7kernels6detail12micro_kernelINS0_12_GLOBAL__N_"
                                        "14V256ELi6ELi2ELi6EEEviPKfS6_PflbRKNS0_12GemmPrefetchE");
}  // namespace ceiling::kernels
