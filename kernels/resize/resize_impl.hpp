#pragma once
// The row loop of the resize written once over an Ops type (the ISA's horizontal and
// vertical block passes). Included only by the per-ISA translation units; everything
// here has internal linkage (anonymous namespace, Ops from one), so nothing compiled
// with one ISA's flags is shared with another.

#include <cstdint>

#include "kernels/resize/resize.hpp"

namespace ceiling::kernels {
namespace {

// Horizontal pass, pixels [x0, x1): D = (S[x0] a0 + S[x1] a1) >> 4 per channel (RGBX,
// X = 0). The int sum is at most 255 x 2049 = 522495, so >> 4 fits int16 (32655).
inline void hresize_scalar(const ResizeView& t, const std::uint8_t* row, std::int16_t* d,
                           int x0, int x1) {
    for (int x = x0; x < x1; ++x) {
        const auto ux = static_cast<std::size_t>(x);
        const std::uint8_t* p0 = row + t.xofs0[ux];
        const std::uint8_t* p1 = row + t.xofs1[ux];
        const int a0 = t.alpha[2 * ux], a1 = t.alpha[2 * ux + 1];
        for (int c = 0; c < 3; ++c) d[4 * x + c] = static_cast<std::int16_t>((p0[c] * a0 + p1[c] * a1) >> 4);
        d[4 * x + 3] = 0;
    }
}

// Vertical pass, pixels [x0, x1): OpenCV's VResizeLinearVec_32s8u rounding.
inline void vresize_scalar(const std::int16_t* d0, const std::int16_t* d1, int b0, int b1,
                           std::uint8_t* out, int x0, int x1) {
    for (int x = x0; x < x1; ++x)
        for (int c = 0; c < 3; ++c) {
            const int v = (((b0 * d0[4 * x + c]) >> 16) + ((b1 * d1[4 * x + c]) >> 16) + 2) >> 2;
            out[3 * x + c] = static_cast<std::uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
        }
}

// Two cached horizontal rows: consecutive output rows share source rows when the
// vertical scale is below 2, and a downscale never computes a source row twice.
template <typename Ops>
void resize_rows(const ResizeView& t, const std::uint8_t* src, std::uint8_t* dst, int dy0,
                 int dy1, std::int16_t* ws) {
    const int w = t.dst_w;
    const std::ptrdiff_t src_stride = 3 * static_cast<std::ptrdiff_t>(t.src_w);
    std::int16_t* slot[2] = {ws, ws + t.d_row};
    int held[2] = {-1, -1};
    const auto row = [&](int y, int keep) -> const std::int16_t* {
        for (int i = 0; i < 2; ++i)
            if (held[i] == y) return slot[i];
        const int i = held[0] == keep ? 1 : 0;  // never overwrite the other row in use
        Ops::hrow(t, src + y * src_stride, slot[i], w);
        held[i] = y;
        return slot[i];
    };
    for (int dy = dy0; dy < dy1; ++dy) {
        const auto u = static_cast<std::size_t>(dy);
        const std::int16_t* d0 = row(t.y0[u], -1);
        const std::int16_t* d1 = row(t.y1[u], t.y0[u]);
        Ops::vrow(d0, d1, t.beta[2 * u], t.beta[2 * u + 1], dst + static_cast<std::ptrdiff_t>(dy) * 3 * w, w);
    }
}

}  // namespace
}  // namespace ceiling::kernels
