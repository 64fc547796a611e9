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

// The interior pixels (all 9 taps present) without the edge checks: the hot loop. Strips
// of P adjacent pixels per vector of channels: the 9 weight vectors are loaded once per
// strip and each input vector serves up to 3 outputs, so a strip loads 9 + 3 (P + 2)
// vectors for 9P FMAs (P = 1: 18 loads per 9 FMAs). One 512-bit load per cycle (Zen 4)
// had held the one-pixel loop at half the FMA rate.
//
// A strip's lines for one vector of channels lie C floats apart (3 rows x (P + 2)
// columns), so with C x 4 bytes a multiple of 1 KiB they crowd into few L1 sets (64 sets of
// 64 bytes on every x86 L1d): with 3 x ceil((P + 2) / sets) lines per set, up to 9 ran
// well and 15 or 18 did not: on Zen 4 (8-way L1d) P = 8 at C = 512 (15 lines a set) ran
// 0.9x of P = 4, and P = 4 at C = 1024 (18) 0.78x of the one-pixel loop. Against the
// one-pixel loop, one process, one and two threads: 1 x 112 x 112 x 32 and 1 x 56 x 56 x 96
// (P = 8) 1.7-1.9x, 1 x 56 x 56 x 256 (8) and 1 x 28 x 28 x 512 (4) 1.09-1.14x,
// 8 x 112 x 112 x 128 (DRAM bound) 0.93-1.05x, 1 x 14 x 14 x 1024 (no strips) 1.0x.
// A template on V like everything here: an inline function compiled under each ISA's flags
// could be merged into one by the linker.
template <typename V>
int depthwise_strip_pixels(int c) {
    const long line_stride = static_cast<long>(c) * static_cast<long>(sizeof(float)) / 64;
    long g = line_stride % 64 == 0 ? 64 : line_stride % 64, b = 64;
    while (b) {  // gcd(line_stride mod 64, 64)
        const long t = g % b;
        g = b;
        b = t;
    }
    const long sets = 64 / g;  // distinct L1 sets the columns cycle through
    constexpr int candidates[] = {8, 4};
    for (int p : candidates)
        if (3 * ((p + 2 + sets - 1) / sets) <= 9) return p;
    return 1;
}

template <typename V, bool Stream, int P>
inline void depthwise_strip(const float* const rows[3], const float* wt, float* out, int w0, int c) {
    constexpr int L = V::lanes;
    using R = typename V::reg;
    for (int ch = 0; ch < c; ch += L) {
        R acc[P];
#pragma GCC unroll 8
        for (int p = 0; p < P; ++p) acc[p] = V::zero();
#pragma GCC unroll 3
        for (int kh = 0; kh < 3; ++kh) {
            const R w0v = V::loadu(wt + (kh * 3 + 0) * c + ch);
            const R w1v = V::loadu(wt + (kh * 3 + 1) * c + ch);
            const R w2v = V::loadu(wt + (kh * 3 + 2) * c + ch);
            const float* r = rows[kh] + (w0 - 1) * c + ch;
            R x0 = V::loadu(r), x1 = V::loadu(r + c);
#pragma GCC unroll 8
            for (int p = 0; p < P; ++p) {
                const R x2 = V::loadu(r + (p + 2) * c);
                acc[p] = V::fmadd(x0, w0v, acc[p]);
                acc[p] = V::fmadd(x1, w1v, acc[p]);
                acc[p] = V::fmadd(x2, w2v, acc[p]);
                x0 = x1;
                x1 = x2;
            }
        }
#pragma GCC unroll 8
        for (int p = 0; p < P; ++p) {
            if constexpr (Stream)
                V::stream(out + (w0 + p) * c + ch, acc[p]);
            else
                V::storeu(out + (w0 + p) * c + ch, acc[p]);
        }
    }
}

template <typename V, bool Stream>
inline void depthwise_interior(const float* const rows[3], const float* wt, float* out, int width,
                               int c) {
    constexpr int L = V::lanes;
    const int P = c % L == 0 && c * static_cast<int>(sizeof(float)) % 64 == 0 ? depthwise_strip_pixels<V>(c) : 1;
    const int strips = P > 1 ? (width - 2) / P : 0;
    for (int i = 0; i < strips; ++i) {
        if (P == 8)
            depthwise_strip<V, Stream, 8>(rows, wt, out, 1 + i * P, c);
        else
            depthwise_strip<V, Stream, 4>(rows, wt, out, 1 + i * P, c);
    }
    for (int w = 1 + strips * P; w < width - 1; ++w) {
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
