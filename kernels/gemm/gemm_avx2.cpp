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
// 0.86, 1024^3 0.96, 4096^3 0.93, M = 64 and 256 x 4096 x 4096 0.89 and 0.93; pack_a, the
// portable one, is ~2.5 % of 2048^3 here.
extern const GemmImpl gemm_avx2 = detail::make_gemm_impl<V256, 6, 2>(
    "avx2", supported, nullptr, nullptr,
    "_ZN7ceiling7kernels6detail12micro_kernelINS0_12_GLOBAL__N_14V256ELi6ELi2ELi6EEEviPKfS6_PflbS6_l");
}  // namespace ceiling::kernels
