// Compiled with AVX2 enabled (kernels/CMakeLists.txt); run only where supported.
#include <immintrin.h>

#include "kernels/resize/resize_impl.hpp"

namespace ceiling::kernels {
namespace {

struct Avx2Ops {
    // 8 output pixels per step, as the AVX-512 pass with 4 pixels per vpmaddwd pair.
    static void hrow(const ResizeView& t, const std::uint8_t* row, std::int16_t* d, int w) {
        const auto* base = reinterpret_cast<const int*>(row);
        int x = 0;
        for (; x + 8 <= w; x += 8) {
            const __m256i i0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.xofs0 + x));
            const __m256i i1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.xofs1 + x));
            const __m256i g0 = _mm256_i32gather_epi32(base, i0, 1);
            const __m256i g1 = _mm256_i32gather_epi32(base, i1, 1);
            const std::int16_t* a = t.alpha_groups + (x / 8) * 64;
            for (int h = 0; h < 2; ++h) {
                const __m256i w0 = _mm256_cvtepu8_epi16(h == 0 ? _mm256_castsi256_si128(g0) : _mm256_extracti128_si256(g0, 1));
                const __m256i w1 = _mm256_cvtepu8_epi16(h == 0 ? _mm256_castsi256_si128(g1) : _mm256_extracti128_si256(g1, 1));
                // Lanes of unpacklo: pixels 4h and 4h + 2; of unpackhi: 4h + 1 and 4h + 3.
                const __m256i even = _mm256_madd_epi16(_mm256_unpacklo_epi16(w0, w1),
                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 16 * h)));
                const __m256i odd = _mm256_madd_epi16(_mm256_unpackhi_epi16(w0, w1),
                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 32 + 16 * h)));
                const __m256i p01 = _mm256_srai_epi32(_mm256_permute2x128_si256(even, odd, 0x20), 4);
                const __m256i p23 = _mm256_srai_epi32(_mm256_permute2x128_si256(even, odd, 0x31), 4);
                // packs interleaves the two inputs by lane: restore pixel order 0 1 2 3.
                const __m256i packed = _mm256_permute4x64_epi64(_mm256_packs_epi32(p01, p23), 0xd8);
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 4 * (x + 4 * h)), packed);
            }
        }
        hresize_scalar(t, row, d, x, w);
    }

    static void vrow(const std::int16_t* d0, const std::int16_t* d1, int b0, int b1,
                     std::uint8_t* out, int w) {
        const __m256i vb0 = _mm256_set1_epi16(static_cast<short>(b0));
        const __m256i vb1 = _mm256_set1_epi16(static_cast<short>(b1));
        const __m256i two = _mm256_set1_epi16(2);
        const __m256i drop_x = _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1,
                                                0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
        const __m256i pack = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);
        const __m256i six = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0);
        int x = 0;
        for (; x + 8 <= w; x += 8) {
            __m256i v[2];
            for (int h = 0; h < 2; ++h) {
                const __m256i s0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(d0 + 4 * x + 16 * h));
                const __m256i s1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(d1 + 4 * x + 16 * h));
                const __m256i sum = _mm256_add_epi16(_mm256_mulhi_epi16(s0, vb0), _mm256_mulhi_epi16(s1, vb1));
                v[h] = _mm256_srai_epi16(_mm256_add_epi16(sum, two), 2);
            }
            const __m256i bytes = _mm256_permute4x64_epi64(_mm256_packus_epi16(v[0], v[1]), 0xd8);
            const __m256i rgb = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(bytes, drop_x), pack);
            _mm256_maskstore_epi32(reinterpret_cast<int*>(out + 3 * x), six, rgb);
        }
        vresize_scalar(d0, d1, b0, b1, out, x, w);
    }
};

bool supported(const CpuFeatures& f) { return f.avx2; }

}  // namespace
extern const ResizeImpl resize_avx2{"avx2", supported, resize_rows<Avx2Ops>};
}  // namespace ceiling::kernels
