#include "kernels/conv/conv.hpp"

#include <algorithm>
#include <array>

#include "kernels/parallel.hpp"

namespace ceiling::kernels {

extern const DepthwiseImpl depthwise_avx512;
extern const DepthwiseImpl depthwise_avx2;
extern const DepthwiseImpl depthwise_scalar;

namespace {
const std::array<const DepthwiseImpl*, 3> impls = {&depthwise_avx512, &depthwise_avx2,
                                                   &depthwise_scalar};

// Contiguous blocks of the N x H output rows, one per thread.
template <typename Fn>
void split_rows(int rows, int threads, Fn fn) {
    threads = std::clamp(threads, 1, std::max(1, rows));
    run_on_threads(threads, [&](int t) {
        const int r0 = rows * t / threads, r1 = rows * (t + 1) / threads;
        if (r1 > r0) fn(t, r0, r1);
    });
}

std::ptrdiff_t at(ConvShape s, int n, int h, int w) {
    return ((static_cast<std::ptrdiff_t>(n) * s.h + h) * s.w + w) * s.c;
}
}  // namespace

std::span<const DepthwiseImpl* const> depthwise_impls() { return impls; }

const DepthwiseImpl& best_depthwise_impl() {
    for (const auto* im : impls)
        if (im->supported(cpu_features())) return *im;
    return depthwise_scalar;
}

void depthwise_naive(const float* in, const float* wt, float* out, ConvShape s) {
    for (int n = 0; n < s.n; ++n)
        for (int h = 0; h < s.h; ++h)
            for (int w = 0; w < s.w; ++w)
                for (int c = 0; c < s.c; ++c) {
                    float acc = 0;
                    for (int kh = 0; kh < 3; ++kh)
                        for (int kw = 0; kw < 3; ++kw) {
                            const int y = h + kh - 1, x = w + kw - 1;
                            if (y < 0 || y >= s.h || x < 0 || x >= s.w) continue;
                            acc += in[at(s, n, y, x) + c] * wt[(kh * 3 + kw) * s.c + c];
                        }
                    out[at(s, n, h, w) + c] = acc;
                }
}

void dense_naive(const float* in, const float* wt, float* out, ConvShape s) {
    const std::ptrdiff_t cc = static_cast<std::ptrdiff_t>(s.c) * s.c;
    for (int n = 0; n < s.n; ++n)
        for (int h = 0; h < s.h; ++h)
            for (int w = 0; w < s.w; ++w)
                for (int co = 0; co < s.c; ++co) {
                    float acc = 0;
                    for (int kh = 0; kh < 3; ++kh)
                        for (int kw = 0; kw < 3; ++kw) {
                            const int y = h + kh - 1, x = w + kw - 1;
                            if (y < 0 || y >= s.h || x < 0 || x >= s.w) continue;
                            const float* px = in + at(s, n, y, x);
                            const float* tap = wt + (kh * 3 + kw) * cc + co;
                            for (int ci = 0; ci < s.c; ++ci) acc += px[ci] * tap[ci * s.c];
                        }
                    out[at(s, n, h, w) + co] = acc;
                }
}

void depthwise_optimized(const DepthwiseImpl& impl, const float* in, const float* wt, float* out,
                         ConvShape s, int threads, bool stream) {
    const std::vector<float> zero(static_cast<std::size_t>(s.w) * s.c, 0.0f);
    split_rows(s.n * s.h, threads, [&](int, int r0, int r1) {
        impl.rows(in, wt, out, s, r0, r1, stream, zero.data());
    });
}

std::size_t DenseConv::bytes(const GemmImpl& impl, int c, int threads) {
    return 9 * PackedB::bytes(impl, c, c) + GemmWorkspace::bytes(impl, threads);
}

DenseConv::DenseConv(const GemmImpl& impl, const float* wt, int c, int threads)
    : impl_(impl), ws_(impl, threads) {
    for (int tap = 0; tap < 9; ++tap)
        taps_.push_back(std::make_unique<PackedB>(impl, wt + static_cast<std::ptrdiff_t>(tap) * c * c, c, c, c));
}

void DenseConv::run(const float* in, float* out, ConvShape s, int threads) {
    threads = std::min(threads, ws_.threads());
    // The centre tap first (it covers every output pixel, so it initialises the row), then
    // the other eight accumulate over the pixels they reach: kw = 0 feeds outputs 1..W-1
    // from inputs 0..W-2, kw = 2 outputs 0..W-2 from inputs 1..W-1.
    static constexpr int order[9][2] = {{1, 1}, {0, 0}, {0, 1}, {0, 2}, {1, 0},
                                        {1, 2}, {2, 0}, {2, 1}, {2, 2}};
    split_rows(s.n * s.h, threads, [&](int t, int r0, int r1) {
        for (int r = r0; r < r1; ++r) {
            const int n = r / s.h, h = r % s.h;
            for (const auto& [kh, kw] : order) {
                const int y = h + kh - 1;
                if (y < 0 || y >= s.h) continue;
                const int out0 = kw == 0 ? 1 : 0, in0 = kw == 2 ? 1 : 0;
                const int m = kw == 1 ? s.w : s.w - 1;
                if (m <= 0) continue;
                GemmArgs g{in + at(s, n, y, in0), s.c, nullptr, 0, out + at(s, n, h, out0), s.c,
                           m, s.c, s.c, !(kh == 1 && kw == 1)};
                gemm_prepacked(impl_, g, *taps_[static_cast<std::size_t>(kh * 3 + kw)], ws_, t);
            }
        }
    });
}

void pointwise_optimized(const GemmImpl& impl, const float* in, const float* wt, float* out,
                         ConvShape s, GemmWorkspace& ws, int threads) {
    const int p = static_cast<int>(s.pixels());
    gemm_optimized(impl, {in, s.c, wt, s.c, out, s.c, p, s.c, s.c}, ws, threads);
}

}  // namespace ceiling::kernels
