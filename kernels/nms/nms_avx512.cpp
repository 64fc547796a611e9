// Compiled with AVX-512 enabled (kernels/CMakeLists.txt); run only where supported.
#include <immintrin.h>

#include "kernels/nms/nms_impl.hpp"

namespace ceiling::kernels {
namespace {
struct V512 {
    using reg = __m512i;
    static constexpr int lanes = 16;
    static constexpr __mmask16 all = 0xffff;
    static reg zero() { return _mm512_setzero_si512(); }
    static reg set1(std::int32_t v) { return _mm512_set1_epi32(v); }
    // Loads may read past count into the padding NmsKept keeps (lanes masked off after).
    static reg load(const std::int32_t* p) { return _mm512_loadu_si512(p); }
    // maskz_ with a full mask: the plain forms trip GCC 12's uninitialised warning
    // inside avx512fintrin.h; the instruction is the same.
    static reg max(reg a, reg b) { return _mm512_maskz_max_epi32(all, a, b); }
    static reg min(reg a, reg b) { return _mm512_maskz_min_epi32(all, a, b); }
    static reg sub(reg a, reg b) { return _mm512_sub_epi32(a, b); }
    static reg add(reg a, reg b) { return _mm512_add_epi32(a, b); }
    static reg mullo(reg a, reg b) { return _mm512_mullo_epi32(a, b); }
    static unsigned gt(reg a, reg b) { return _mm512_cmpgt_epi32_mask(a, b); }
    static unsigned eq(reg a, reg b) { return _mm512_cmpeq_epi32_mask(a, b); }
};
bool supported(const CpuFeatures& f) { return f.avx512f; }
}  // namespace
extern const NmsImpl nms_avx512{"avx512", supported, detail::any_overlap<V512>};
}  // namespace ceiling::kernels
