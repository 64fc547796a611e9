#include "kernels/gemm/gemm_bf16.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ceiling::kernels {
namespace {
std::size_t pair_rows(int k) { return static_cast<std::size_t>(k + 1) / 2; }

// Bf16 elements of A padded to whole pairs (none when K is even: A is read in place).
std::size_t padded_a_elements(int m, int k) {
    return k % 2 ? static_cast<std::size_t>(std::max(m, 0)) * 2 * pair_rows(k) : 0;
}
}  // namespace

std::size_t Bf16PairedB::bytes(int k, int n) {
    return sizeof(float) * pair_rows(std::max(k, 1)) * static_cast<std::size_t>(std::max(n, 1));
}

Bf16PairedB::Bf16PairedB(const Bf16* b, std::ptrdiff_t ldb, int k, int n)
    : k_(k), n_(n), data_(bytes(k, n) / sizeof(float)) {
    for (int q = 0; 2 * q < k; ++q)
        for (int j = 0; j < n; ++j) {
            const std::uint32_t lo = b[2 * q * ldb + j];
            const std::uint32_t hi = 2 * q + 1 < k ? b[(2 * q + 1) * ldb + j] : 0;
            data_[static_cast<std::size_t>(q) * n + j] = std::bit_cast<float>(lo | hi << 16);
        }
}

std::size_t Bf16GemmWorkspace::bytes(const GemmImpl& impl, int m, int k, int threads) {
    return GemmWorkspace::bytes(impl, threads) + sizeof(Bf16) * padded_a_elements(m, k);
}

Bf16GemmWorkspace::Bf16GemmWorkspace(const GemmImpl& impl, int m, int k, int threads)
    : gemm_(impl, threads), m_(m), k_(k), a_(padded_a_elements(m, k)) {}

void gemm_bf16_pairs(const GemmImpl& impl, const Bf16* a, std::ptrdiff_t lda, const Bf16PairedB& b,
                     float* c, std::ptrdiff_t ldc, int m, Bf16GemmWorkspace& ws, int threads) {
    const int k = b.k(), kp = static_cast<int>(pair_rows(k));
    if (k % 2 == 0 && (lda % 2 != 0 || reinterpret_cast<std::uintptr_t>(a) % 4 != 0))
        throw std::invalid_argument(
            "gemm_bf16_pairs: A's rows must start on whole bf16 pairs "
            "(lda " +
            std::to_string(lda) + " even, A 4-byte aligned)");
    if (k % 2 != 0) {
        if (ws.k() != k || ws.m() < m)
            throw std::invalid_argument(
                "gemm_bf16_pairs: K is odd and the workspace was made "
                "for K " +
                std::to_string(ws.k()) + ", " + std::to_string(ws.m()) + " rows");
        Bf16* pa = ws.padded_a();
        for (int i = 0; i < m; ++i) {
            Bf16* row = pa + static_cast<std::ptrdiff_t>(i) * 2 * kp;
            std::memcpy(row, a + i * lda, sizeof(Bf16) * static_cast<std::size_t>(k));
            row[k] = 0;
        }
        a = pa;
        lda = 2 * kp;
    }
    // The pairs as the fp32 GEMM's 32-bit elements: read only through memcpy and vector
    // loads (gemm_impl.hpp), which may alias the bf16 storage.
    const auto* ap = reinterpret_cast<const float*>(a);
    const GemmArgs g{ap, lda / 2, b.pairs(), b.n(), c, ldc, m, b.n(), kp, false};
    gemm_optimized(impl, g, ws.gemm(), threads);
}

}  // namespace ceiling::kernels
