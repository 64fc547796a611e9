// Compiled with AVX-512 enabled (kernels/CMakeLists.txt); run only where supported.
// GCC 12.2 warns "may be used uninitialized" inside its own AVX-512 headers for every
// intrinsic built on _mm512_undefined_*() (GCC PR 105593, fixed in 12.3): off for this file.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "kernels/resize/resize_impl.hpp"

namespace ceiling::kernels {
namespace {

struct Avx512Ops {
    // 16 output pixels per step: two dword gathers fetch pixel x0 and x0 + 1 of each
    // (R G B and one byte of the next pixel); widened to int16 and interleaved, one
    // vpmaddwd per 4 pixels gives S[x0] a0 + S[x1] a1 per channel; a qword permute puts
    // the pixels back in order; >> 4 and narrowed to int16.
    static void hrow(const ResizeView& t, const std::uint8_t* row, std::int16_t* d, int w) {
        const __m512i lo = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
        const __m512i hi = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
        int x = 0;
        for (; x + 16 <= w; x += 16) {
            const __m512i i0 = _mm512_loadu_si512(t.xofs0 + x);
            const __m512i i1 = _mm512_loadu_si512(t.xofs1 + x);
            const __m512i g0 = _mm512_i32gather_epi32(i0, row, 1);
            const __m512i g1 = _mm512_i32gather_epi32(i1, row, 1);
            for (int h = 0; h < 2; ++h) {
                const __m256i h0 = h == 0 ? _mm512_castsi512_si256(g0) : _mm512_extracti64x4_epi64(g0, 1);
                const __m256i h1 = h == 0 ? _mm512_castsi512_si256(g1) : _mm512_extracti64x4_epi64(g1, 1);
                const __m512i w0 = _mm512_cvtepu8_epi16(h0), w1 = _mm512_cvtepu8_epi16(h1);
                const std::int16_t* a = t.alpha_groups + (x / 8 + h) * 64;
                const __m512i even = _mm512_madd_epi16(_mm512_unpacklo_epi16(w0, w1), _mm512_loadu_si512(a));
                const __m512i odd = _mm512_madd_epi16(_mm512_unpackhi_epi16(w0, w1), _mm512_loadu_si512(a + 32));
                const __m512i p03 = _mm512_srai_epi32(_mm512_permutex2var_epi64(even, lo, odd), 4);
                const __m512i p47 = _mm512_srai_epi32(_mm512_permutex2var_epi64(even, hi, odd), 4);
                std::int16_t* o = d + 4 * (x + 8 * h);
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), _mm512_cvtepi32_epi16(p03));
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + 16), _mm512_cvtepi32_epi16(p47));
            }
        }
        hresize_scalar(t, row, d, x, w);
    }

    // 16 output pixels per step: vpmulhw is (b x D) >> 16 exactly; + 2 >> 2, unsigned
    // saturation to bytes, then the X bytes dropped (vpshufb within lanes, vpermd across)
    // and 48 bytes stored.
    static void vrow(const std::int16_t* d0, const std::int16_t* d1, int b0, int b1,
                     std::uint8_t* out, int w) {
        const __m512i vb0 = _mm512_set1_epi16(static_cast<short>(b0));
        const __m512i vb1 = _mm512_set1_epi16(static_cast<short>(b1));
        const __m512i two = _mm512_set1_epi16(2);
        const __m512i drop_x = _mm512_broadcast_i32x4(
            _mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1));
        const __m512i pack = _mm512_setr_epi32(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, 0, 0, 0, 0);
        int x = 0;
        for (; x + 16 <= w; x += 16) {
            __m512i v[2];
            for (int h = 0; h < 2; ++h) {
                const __m512i s0 = _mm512_loadu_si512(d0 + 4 * x + 32 * h);
                const __m512i s1 = _mm512_loadu_si512(d1 + 4 * x + 32 * h);
                const __m512i sum = _mm512_add_epi16(_mm512_mulhi_epi16(s0, vb0), _mm512_mulhi_epi16(s1, vb1));
                v[h] = _mm512_srai_epi16(_mm512_add_epi16(sum, two), 2);
            }
            const __m512i bytes = _mm512_inserti64x4(
                _mm512_castsi256_si512(_mm512_cvtusepi16_epi8(_mm512_max_epi16(v[0], _mm512_setzero_si512()))),
                _mm512_cvtusepi16_epi8(_mm512_max_epi16(v[1], _mm512_setzero_si512())), 1);
            const __m512i rgb = _mm512_permutexvar_epi32(pack, _mm512_shuffle_epi8(bytes, drop_x));
            _mm512_mask_storeu_epi32(out + 3 * x, 0x0fff, rgb);
        }
        vresize_scalar(d0, d1, b0, b1, out, x, w);
    }
};

bool supported(const CpuFeatures& f) { return f.avx512f && f.avx512bw; }

}  // namespace
extern const ResizeImpl resize_avx512{"avx512", supported, resize_rows<Avx512Ops>};
}  // namespace ceiling::kernels
