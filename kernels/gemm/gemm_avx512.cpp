// Compiled with AVX-512 enabled (kernels/CMakeLists.txt); run only where supported.
#include <immintrin.h>

#include "kernels/gemm/gemm_impl.hpp"

namespace ceiling::kernels {
namespace {
struct V512 {
    using reg = __m512;
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
}  // namespace
// 14 x 32 tile. kc = 256: the B micro-panel (256 x 32 x 4 B = 32 KiB) stays in the 48 KiB
// L1 beside the streamed A micro-panel (14 KiB); mc = 336 rows of A (336 KiB) in L2;
// nc = 2048 columns of packed B (2 MiB) in L2/L3.
extern const GemmImpl gemm_avx512 = detail::make_gemm_impl<V512, 14, 2>(
    "avx512", supported, 256, 336, 2048,
    "_ZN7ceiling7kernels6detail12micro_kernelINS0_12_GLOBAL__N_14V512ELi14ELi2ELi14EEEviPKfS6_Pflb");
}  // namespace ceiling::kernels
