#include "kernels/resize/resize.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include "kernels/parallel.hpp"

namespace ceiling::kernels {

extern const ResizeImpl resize_avx512;
extern const ResizeImpl resize_avx2;
extern const ResizeImpl resize_scalar;

namespace {

const std::array<const ResizeImpl*, 3> impls = {&resize_avx512, &resize_avx2, &resize_scalar};

constexpr int coef_scale = 2048;  // OpenCV's INTER_RESIZE_COEF_SCALE (11 bits)

// OpenCV's mapping (imgproc/src/resize.cpp, resizeGeneric_ setup): a float coordinate
// from a double scale, floor, and at the borders weight 0 on the missing neighbour.
struct Tap {
    int i0, i1;
    float f;  // weight of i1
};
Tap map_coordinate(int d, double scale, int size) {
    float f = static_cast<float>((d + 0.5) * scale - 0.5);
    int i = static_cast<int>(std::floor(f));
    f -= static_cast<float>(i);
    if (i < 0) f = 0, i = 0;
    if (i >= size - 1) f = 0, i = size - 1;
    return {i, std::min(i + 1, size - 1), f};
}

// saturate_cast<short>(float): round to nearest, ties to even (cvRound).
std::int16_t fixed(float w) { return static_cast<std::int16_t>(std::lrint(w * coef_scale)); }

}  // namespace

ResizeTables::ResizeTables(ResizeShape shape) : s(shape), d_row((shape.dst_w + 15) / 16 * 16 * 4) {
    const double scale_x = 1.0 / (static_cast<double>(s.dst_w) / s.src_w);
    const double scale_y = 1.0 / (static_cast<double>(s.dst_h) / s.src_h);
    const int padded = (s.dst_w + 15) / 16 * 16;
    xofs0.assign(static_cast<std::size_t>(padded), 0);
    xofs1.assign(static_cast<std::size_t>(padded), 0);
    alpha.assign(2 * static_cast<std::size_t>(padded), 0);
    alpha_groups.assign(8 * static_cast<std::size_t>(padded), 0);
    for (int x = 0; x < s.dst_w; ++x) {
        const Tap t = map_coordinate(x, scale_x, s.src_w);
        const auto ux = static_cast<std::size_t>(x);
        xofs0[ux] = 3 * t.i0;
        xofs1[ux] = 3 * t.i1;
        alpha[2 * ux] = fixed(1.0f - t.f);
        alpha[2 * ux + 1] = fixed(t.f);
        // Position of pixel x within its group of 8: even pixels first, then odd ones.
        const std::size_t group = ux / 8, in = ux % 8;
        const std::size_t slot = group * 64 + (in % 2) * 32 + (in / 2) * 8;
        for (std::size_t c = 0; c < 4; ++c) {
            alpha_groups[slot + 2 * c] = alpha[2 * ux];
            alpha_groups[slot + 2 * c + 1] = alpha[2 * ux + 1];
        }
    }
    for (int y = 0; y < s.dst_h; ++y) {
        const Tap t = map_coordinate(y, scale_y, s.src_h);
        y0.push_back(t.i0);
        y1.push_back(t.i1);
        beta.push_back(fixed(1.0f - t.f));
        beta.push_back(fixed(t.f));
    }
}

double ResizeTables::source_bytes_read() const {
    std::set<int> rows;
    for (std::size_t y = 0; y < y0.size(); ++y) {
        rows.insert(y0[y]);
        if (beta[2 * y + 1] != 0) rows.insert(y1[y]);
    }
    std::set<int> lines;  // 64-byte lines of one row (rows start line-aligned when 3 w % 64 == 0)
    for (int x = 0; x < s.dst_w; ++x) {
        const auto ux = static_cast<std::size_t>(x);
        for (int b = 0; b < 3; ++b) {
            lines.insert((xofs0[ux] + b) / 64);
            if (alpha[2 * ux + 1] != 0) lines.insert((xofs1[ux] + b) / 64);
        }
    }
    const double row_bytes = std::min(3.0 * s.src_w, 64.0 * static_cast<double>(lines.size()));
    return static_cast<double>(rows.size()) * row_bytes;
}

ResizeView ResizeTables::view() const {
    return {s.src_w, s.src_h, s.dst_w, s.dst_h, d_row, xofs0.data(), xofs1.data(), y0.data(),
            y1.data(), alpha.data(), alpha_groups.data(), beta.data()};
}

std::span<const ResizeImpl* const> resize_impls() { return impls; }

const ResizeImpl& best_resize_impl() {
    for (const auto* im : impls)
        if (im->supported(cpu_features())) return *im;
    return resize_scalar;
}

void resize_naive(ResizeShape s, const std::uint8_t* src, std::uint8_t* dst) {
    const double scale_x = 1.0 / (static_cast<double>(s.dst_w) / s.src_w);
    const double scale_y = 1.0 / (static_cast<double>(s.dst_h) / s.src_h);
    for (int y = 0; y < s.dst_h; ++y) {
        const Tap ty = map_coordinate(y, scale_y, s.src_h);
        const std::uint8_t* r0 = src + static_cast<std::ptrdiff_t>(ty.i0) * s.src_w * 3;
        const std::uint8_t* r1 = src + static_cast<std::ptrdiff_t>(ty.i1) * s.src_w * 3;
        for (int x = 0; x < s.dst_w; ++x) {
            const Tap tx = map_coordinate(x, scale_x, s.src_w);
            for (int c = 0; c < 3; ++c) {
                const float top = (1 - tx.f) * r0[3 * tx.i0 + c] + tx.f * r0[3 * tx.i1 + c];
                const float bottom = (1 - tx.f) * r1[3 * tx.i0 + c] + tx.f * r1[3 * tx.i1 + c];
                const float v = (1 - ty.f) * top + ty.f * bottom;
                dst[(static_cast<std::ptrdiff_t>(y) * s.dst_w + x) * 3 + c] =
                    static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
            }
        }
    }
}

ResizeWorkspace::ResizeWorkspace(const ResizeTables& t, int threads)
    : d_row_(t.d_row), threads_(threads), data_(2 * static_cast<std::size_t>(t.d_row) * static_cast<std::size_t>(threads)) {}

void resize_optimized(const ResizeImpl& impl, const ResizeTables& t, const std::uint8_t* src,
                      std::uint8_t* dst, ResizeWorkspace& ws, int threads) {
    threads = std::clamp(threads, 1, std::min(ws.threads(), std::max(1, t.s.dst_h)));
    const ResizeView v = t.view();
    run_on_threads(threads, [&](int i) {
        const int dy0 = t.s.dst_h * i / threads, dy1 = t.s.dst_h * (i + 1) / threads;
        if (dy1 > dy0) impl.rows(v, src, dst, dy0, dy1, ws.rows(i));
    });
}

}  // namespace ceiling::kernels
