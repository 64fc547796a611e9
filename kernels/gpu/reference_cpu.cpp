#include "kernels/gpu/reference_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/gpu/random_hash.hpp"

namespace ceiling::kernels::gpu {

float gemm_a(const GemmShape& s, std::uint64_t i) {
    const float v = uniform_at(seed_a, i);
    return s.bf16_inputs ? round_to_bf16(v) : v;
}
float gemm_b(const GemmShape& s, std::uint64_t i) {
    const float v = uniform_at(seed_b, i);
    return s.bf16_inputs ? round_to_bf16(v) : v;
}

double gemm_reference(const GemmShape& s, int i, int j, double* abs_sum) {
    double sum = 0, abs = 0;
    for (int k = 0; k < s.k; ++k) {
        const double p = static_cast<double>(gemm_a(s, static_cast<std::uint64_t>(i) * s.k + k)) *
                         gemm_b(s, static_cast<std::uint64_t>(k) * s.n + j);
        sum += p;
        abs += std::fabs(p);
    }
    if (abs_sum) *abs_sum = abs;
    return sum;
}

std::int8_t gemv_weight_q(const GemvShape&, std::uint64_t i) { return int8_at(seed_a, i); }

float gemv_weight(const GemvShape& s, std::uint64_t i) {
    switch (s.weights) {
        case WeightType::fp32: return uniform_at(seed_a, i);
        case WeightType::bf16: return round_to_bf16(uniform_at(seed_a, i));
        case WeightType::int8: return static_cast<float>(gemv_weight_q(s, i));
    }
    return 0;
}

float gemv_scale(const GemvShape& s, int row) {
    // Per-row scales as a weight-only quantiser would pick them: max |w| / 127, w in [-1, 1).
    return s.weights == WeightType::int8 ? (0.5f + 0.5f * unit_at(seed_scale, static_cast<std::uint64_t>(row))) / 127.0f
                                         : 1.0f;
}

float gemv_x(const GemvShape&, int col) { return uniform_at(seed_x, static_cast<std::uint64_t>(col)); }

double gemv_reference(const GemvShape& s, int row, double* abs_sum) {
    double sum = 0, abs = 0;
    for (int c = 0; c < s.k; ++c) {
        const double p = static_cast<double>(gemv_weight(s, static_cast<std::uint64_t>(row) * s.k + c)) * gemv_x(s, c);
        sum += p;
        abs += std::fabs(p);
    }
    const double scale = gemv_scale(s, row);
    if (abs_sum) *abs_sum = abs * scale;
    return sum * scale;
}

float conv_input(const ConvShape&, std::uint64_t i) { return uniform_at(seed_image, i); }
float conv_filter(const ConvShape&, std::uint64_t i) { return uniform_at(seed_filter, i); }

double conv_reference(const ConvShape& s, std::uint64_t out_index, double* abs_sum) {
    const std::uint64_t hw = static_cast<std::uint64_t>(s.h) * s.w;
    const std::uint64_t plane = out_index / hw;  // n * C + c
    const int c = static_cast<int>(plane % static_cast<std::uint64_t>(s.c));
    const int y = static_cast<int>((out_index % hw) / s.w);
    const int x = static_cast<int>(out_index % s.w);
    double sum = 0, abs = 0;
    for (int ky = 0; ky < 3; ++ky)
        for (int kx = 0; kx < 3; ++kx) {
            const int iy = y + ky - 1, ix = x + kx - 1;
            if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
            const double p = static_cast<double>(conv_input(s, plane * hw + static_cast<std::uint64_t>(iy) * s.w + ix)) *
                             conv_filter(s, static_cast<std::uint64_t>(c) * 9 + ky * 3 + kx);
            sum += p;
            abs += std::fabs(p);
        }
    if (abs_sum) *abs_sum = abs;
    return sum;
}

std::vector<Box> nms_boxes(int n) {
    std::vector<std::pair<float, Box>> scored;
    for (int i = 0; i < n; ++i) {
        const auto u = static_cast<std::uint64_t>(i) * 4;
        const float cx = 1024.0f * unit_at(seed_box, u), cy = 1024.0f * unit_at(seed_box, u + 1);
        const float w = 8.0f + 128.0f * unit_at(seed_box, u + 2), h = 8.0f + 128.0f * unit_at(seed_box, u + 3);
        scored.push_back({unit_at(seed_score, static_cast<std::uint64_t>(i)),
                          {cx - 0.5f * w, cy - 0.5f * h, cx + 0.5f * w, cy + 0.5f * h}});
    }
    std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<Box> boxes;
    for (const auto& s : scored) boxes.push_back(s.second);
    return boxes;
}

bool nms_suppresses(const Box& a, const Box& b, float threshold) {
    // The same operations in the same order as the device kernel (which uses __fmul_rn etc.
    // so that nothing is contracted into an FMA): the keep lists must match exactly.
    const float iw = std::max(0.0f, std::min(a.x2, b.x2) - std::max(a.x1, b.x1));
    const float ih = std::max(0.0f, std::min(a.y2, b.y2) - std::max(a.y1, b.y1));
    const float inter = iw * ih;
    const float area_a = (a.x2 - a.x1) * (a.y2 - a.y1);
    const float area_b = (b.x2 - b.x1) * (b.y2 - b.y1);
    const float uni = (area_a + area_b) - inter;
    return inter > threshold * uni;
}

std::vector<int> nms_reference(const std::vector<Box>& boxes, float threshold) {
    std::vector<char> removed(boxes.size(), 0);
    std::vector<int> keep;
    for (std::size_t i = 0; i < boxes.size(); ++i) {
        if (removed[i]) continue;
        keep.push_back(static_cast<int>(i));
        for (std::size_t j = i + 1; j < boxes.size(); ++j)
            if (!removed[j] && nms_suppresses(boxes[i], boxes[j], threshold)) removed[j] = 1;
    }
    return keep;
}

float resize_input(const ResizeShape&, std::uint64_t i) { return uniform_at(seed_image, i); }

double resize_reference(const ResizeShape& s, std::uint64_t out_index) {
    const std::uint64_t out_hw = static_cast<std::uint64_t>(s.out_h) * s.out_w;
    const std::uint64_t plane = out_index / out_hw;
    const int y = static_cast<int>((out_index % out_hw) / s.out_w);
    const int x = static_cast<int>(out_index % s.out_w);
    // Half-pixel centres: source = (dst + 0.5) * in/out - 0.5, clamped to the image.
    auto source = [](int d, int in, int out, int& i0, int& i1, double& frac) {
        double f = (d + 0.5) * static_cast<double>(in) / out - 0.5;
        f = std::clamp(f, 0.0, static_cast<double>(in - 1));
        i0 = static_cast<int>(f);
        i1 = std::min(i0 + 1, in - 1);
        frac = f - i0;
    };
    int y0, y1, x0, x1;
    double fy, fx;
    source(y, s.in_h, s.out_h, y0, y1, fy);
    source(x, s.in_w, s.out_w, x0, x1, fx);
    const std::uint64_t base = plane * static_cast<std::uint64_t>(s.in_h) * s.in_w;
    auto at = [&](int yy, int xx) {
        return static_cast<double>(resize_input(s, base + static_cast<std::uint64_t>(yy) * s.in_w + xx));
    };
    const double top = at(y0, x0) + fx * (at(y0, x1) - at(y0, x0));
    const double bottom = at(y1, x0) + fx * (at(y1, x1) - at(y1, x0));
    return top + fy * (bottom - top);
}

std::vector<std::uint64_t> sample_indices(std::uint64_t count, std::size_t samples, std::uint64_t seed) {
    std::vector<std::uint64_t> out;
    if (count == 0) return out;
    // The first and last elements (edges, tails) and random ones between.
    out.push_back(0);
    out.push_back(count - 1);
    for (std::size_t i = 2; i < samples; ++i) out.push_back(splitmix64(seed * 31 + i) % count);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace ceiling::kernels::gpu
