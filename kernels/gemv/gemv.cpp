#include "kernels/gemv/gemv.hpp"

#include <algorithm>
#include <array>

#include "kernels/parallel.hpp"

namespace ceiling::kernels {

extern const GemvImpl gemv_avx512_bf16;
extern const GemvImpl gemv_avx512_vnni;
extern const GemvImpl gemv_avx512;
extern const GemvImpl gemv_avx2;
extern const GemvImpl gemv_scalar;

namespace {
const std::array<const GemvImpl*, 5> impls = {&gemv_avx512_bf16, &gemv_avx512_vnni, &gemv_avx512,
                                              &gemv_avx2, &gemv_scalar};

// Contiguous blocks of rows, multiples of 16 (every kernel's row group divides it), one
// per thread.
template <typename Fn>
void split_rows(int m, int threads, Fn fn) {
    const int groups = (m + 15) / 16;
    threads = std::clamp(threads, 1, std::max(1, groups));
    run_on_threads(threads, [&](int t) {
        const int r0 = std::min(m, 16 * (groups * t / threads));
        const int r1 = std::min(m, 16 * (groups * (t + 1) / threads));
        if (r1 > r0) fn(r0, r1);
    });
}
}  // namespace

std::span<const GemvImpl* const> gemv_impls() { return impls; }

const GemvImpl& best_gemv_impl() {
    for (const auto* im : impls)
        if (im->supported(cpu_features())) return *im;
    return gemv_scalar;
}

void gemv_naive_fp32(const float* w, const float* x, float* y, int m, int k) {
    for (int i = 0; i < m; ++i) {
        float s = 0;
        for (int j = 0; j < k; ++j) s += w[static_cast<std::ptrdiff_t>(i) * k + j] * x[j];
        y[i] = s;
    }
}

void gemv_naive_bf16(const Bf16* w, const float* x, float* y, int m, int k) {
    for (int i = 0; i < m; ++i) {
        float s = 0;
        for (int j = 0; j < k; ++j) s += bf16_to_float(w[static_cast<std::ptrdiff_t>(i) * k + j]) * x[j];
        y[i] = s;
    }
}

void gemv_naive_int8(const std::int8_t* w, const float* scale, const float* x, float* y, int m,
                     int k) {
    for (int i = 0; i < m; ++i) {
        float s = 0;
        for (int j = 0; j < k; ++j) s += static_cast<float>(w[static_cast<std::ptrdiff_t>(i) * k + j]) * x[j];
        y[i] = s * scale[i];
    }
}

void gemv_fp32(const GemvImpl& im, const float* w, const float* x, float* y, int m, int k,
               int threads) {
    split_rows(m, threads, [&](int r0, int r1) {
        im.fp32(w + static_cast<std::ptrdiff_t>(r0) * k, x, y + r0, r1 - r0, k);
    });
}

void gemv_bf16(const GemvImpl& im, const Bf16* w, const float* x, float* y, int m, int k,
               int threads) {
    split_rows(m, threads, [&](int r0, int r1) {
        im.bf16(w + static_cast<std::ptrdiff_t>(r0) * k, x, y + r0, r1 - r0, k);
    });
}

void gemv_int8(const GemvImpl& im, const std::int8_t* w, const float* scale, const float* x,
               float* y, int m, int k, int threads) {
    split_rows(m, threads, [&](int r0, int r1) {
        im.int8(w + static_cast<std::ptrdiff_t>(r0) * k, scale + r0, x, y + r0, r1 - r0, k);
    });
}

}  // namespace ceiling::kernels
