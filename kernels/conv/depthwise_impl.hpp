#pragma once
// The depthwise 3x3 kernel written once over vector traits V, vectorised over channels:
// for each output pixel and each vector of channels, 9 input vectors (3 rows x 3
// columns, all in L1/L2: the three input rows of one output row are 3 x W x C x 4 bytes,
// 168 KiB at W = 112, C = 128) times 9 weight vectors. Rows above and below the image
// read a zero row; the first and last columns skip the missing taps. Included only by the
// per-ISA translation units (traits in anonymous namespaces).

#include "kernels/conv/conv.hpp"

namespace ceiling::kernels::detail {

template <typename V, bool Stream>
inline void depthwise_pixel(const float* const rows[3], const float* wt, float* out, int w,
                            int width, int c) {
    constexpr int L = V::lanes;
    const int kw0 = w == 0 ? 1 : 0, kw1 = w == width - 1 ? 2 : 3;
    int ch = 0;
    for (; ch + L <= c; ch += L) {
        typename V::reg acc = V::zero();
        for (int kh = 0; kh < 3; ++kh)
            for (int kw = kw0; kw < kw1; ++kw)
                acc = V::fmadd(V::loadu(rows[kh] + (w + kw - 1) * c + ch),
                               V::loadu(wt + (kh * 3 + kw) * c + ch), acc);
        if constexpr (Stream)
            V::stream(out + ch, acc);
        else
            V::storeu(out + ch, acc);
    }
    if (ch < c) {
        const int n = c - ch;
        typename V::reg acc = V::zero();
        for (int kh = 0; kh < 3; ++kh)
            for (int kw = kw0; kw < kw1; ++kw)
                acc = V::fmadd(V::load_partial(rows[kh] + (w + kw - 1) * c + ch, n),
                               V::load_partial(wt + (kh * 3 + kw) * c + ch, n), acc);
        V::store_partial(out + ch, acc, n);
    }
}

// The interior pixels (all 9 taps present) without the edge checks: the hot loop.
template <typename V, bool Stream>
inline void depthwise_interior(const float* const rows[3], const float* wt, float* out, int width,
                               int c) {
    constexpr int L = V::lanes;
    for (int w = 1; w < width - 1; ++w) {
        const float* r0 = rows[0] + (w - 1) * c;
        const float* r1 = rows[1] + (w - 1) * c;
        const float* r2 = rows[2] + (w - 1) * c;
        float* o = out + w * c;
        int ch = 0;
        for (; ch + L <= c; ch += L) {
            typename V::reg a0 = V::zero(), a1 = V::zero(), a2 = V::zero();
#pragma GCC unroll 3
            for (int kw = 0; kw < 3; ++kw) {
                a0 = V::fmadd(V::loadu(r0 + kw * c + ch), V::loadu(wt + kw * c + ch), a0);
                a1 = V::fmadd(V::loadu(r1 + kw * c + ch), V::loadu(wt + (3 + kw) * c + ch), a1);
                a2 = V::fmadd(V::loadu(r2 + kw * c + ch), V::loadu(wt + (6 + kw) * c + ch), a2);
            }
            const auto acc = V::add(V::add(a0, a1), a2);
            if constexpr (Stream)
                V::stream(o + ch, acc);
            else
                V::storeu(o + ch, acc);
        }
        if (ch < c) depthwise_pixel<V, false>(rows, wt, o, w, width, c);
    }
}

template <typename V, bool Stream>
void depthwise_rows_t(const float* in, const float* wt, float* out, ConvShape s, int row0,
                      int row1, const float* zero_row) {
    const std::ptrdiff_t row_elems = static_cast<std::ptrdiff_t>(s.w) * s.c;
    for (int r = row0; r < row1; ++r) {
        const int h = r % s.h;
        const float* image = in + static_cast<std::ptrdiff_t>(r - h) * row_elems;
        const float* const rows[3] = {
            h > 0 ? image + (h - 1) * row_elems : zero_row,
            image + h * row_elems,
            h + 1 < s.h ? image + (h + 1) * row_elems : zero_row,
        };
        float* o = out + static_cast<std::ptrdiff_t>(r) * row_elems;
        depthwise_pixel<V, Stream>(rows, wt, o, 0, s.w, s.c);
        if (s.w > 1) {
            depthwise_interior<V, Stream>(rows, wt, o, s.w, s.c);
            depthwise_pixel<V, Stream>(rows, wt, o + (s.w - 1) * s.c, s.w - 1, s.w, s.c);
        }
    }
    if constexpr (Stream) V::fence();
}

// zero_row: s.w x s.c zeros, the rows above and below the image (allocated by the caller:
// no library templates are instantiated under this file's ISA flags, where the linker
// could pick them for callers on other machines).
template <typename V>
void depthwise_rows(const float* in, const float* wt, float* out, ConvShape s, int row0, int row1,
                    bool stream, const float* zero_row) {
    if (stream && s.c % V::lanes == 0)
        depthwise_rows_t<V, true>(in, wt, out, s, row0, row1, zero_row);
    else
        depthwise_rows_t<V, false>(in, wt, out, s, row0, row1, zero_row);
}

}  // namespace ceiling::kernels::detail
