// Compiled with AVX2 enabled (kernels/CMakeLists.txt); run only where supported.
#include <immintrin.h>

#include "kernels/nms/nms_impl.hpp"

namespace ceiling::kernels {
namespace {
struct V256 {
    using reg = __m256i;
    static constexpr int lanes = 8;
    static constexpr unsigned all = 0xff;
    static reg zero() { return _mm256_setzero_si256(); }
    static reg set1(std::int32_t v) { return _mm256_set1_epi32(v); }
    static reg load(const std::int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
    static reg max(reg a, reg b) { return _mm256_max_epi32(a, b); }
    static reg min(reg a, reg b) { return _mm256_min_epi32(a, b); }
    static reg sub(reg a, reg b) { return _mm256_sub_epi32(a, b); }
    static reg add(reg a, reg b) { return _mm256_add_epi32(a, b); }
    static reg mullo(reg a, reg b) { return _mm256_mullo_epi32(a, b); }
    static unsigned bits(reg m) { return static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(m))); }
    static unsigned gt(reg a, reg b) { return bits(_mm256_cmpgt_epi32(a, b)); }
    static unsigned eq(reg a, reg b) { return bits(_mm256_cmpeq_epi32(a, b)); }
};
bool supported(const CpuFeatures& f) { return f.avx2; }
}  // namespace
extern const NmsImpl nms_avx2{"avx2", supported, detail::any_overlap<V256>};
}  // namespace ceiling::kernels
