// Packing and blocking for the AMX GEMM, in baseline code; only the tile loop lives in
// gemm_amx.cpp (compiled for AMX).
#include <algorithm>
#include <cstring>

#include "kernels/cpu_features.hpp"
#include "kernels/gemm/gemm_amx.hpp"
#include "kernels/parallel.hpp"

namespace ceiling::kernels {

void amx_tiles_configure();
void amx_tiles_release();
void amx_bf16_block_32x32(const Bf16* a, std::ptrdiff_t lda_bytes, const Bf16* b0,
                          const Bf16* b1, int k_tiles, float* c, std::ptrdiff_t ldc_bytes);

namespace {
int round_up(int x, int m) { return (x + m - 1) / m * m; }
}  // namespace

std::size_t AmxPackedB::bytes(int k, int n) {
    return sizeof(Bf16) * static_cast<std::size_t>(round_up(std::max(k, 1), 32)) *
           static_cast<std::size_t>(round_up(std::max(n, 1), 32));
}

// Columns are padded to a multiple of 32 (whole 2 x 2 blocks), rows to a multiple of 32.
AmxPackedB::AmxPackedB(const Bf16* b, std::ptrdiff_t ldb, int k, int n)
    : k_(k), n_(n), k_tiles_(round_up(std::max(k, 1), 32) / 32),
      data_(bytes(k, n) / sizeof(Bf16)) {
    const int blocks = round_up(std::max(n, 1), 32) / 16;
    for (int j = 0; j < blocks; ++j)
        for (int t = 0; t < k_tiles_; ++t) {
            Bf16* tile = data_.data() + (static_cast<std::ptrdiff_t>(j) * k_tiles_ + t) * 512;
            for (int r = 0; r < 16; ++r)
                for (int col = 0; col < 16; ++col)
                    for (int e = 0; e < 2; ++e) {
                        const int kk = 32 * t + 2 * r + e, nn = 16 * j + col;
                        tile[r * 32 + 2 * col + e] = (kk < k && nn < n) ? b[kk * ldb + nn] : Bf16{0};
                    }
        }
}

std::size_t AmxWorkspace::bytes(int m, int k, int threads) {
    return sizeof(Bf16) * static_cast<std::size_t>(round_up(std::max(m, 1), 32)) *
               static_cast<std::size_t>(round_up(std::max(k, 1), 32)) +
           sizeof(float) * 1024 * static_cast<std::size_t>(threads);
}

AmxWorkspace::AmxWorkspace(int m, int k, int threads)
    : a_(static_cast<std::size_t>(round_up(std::max(m, 1), 32)) *
         static_cast<std::size_t>(round_up(std::max(k, 1), 32))),
      c_(1024 * static_cast<std::size_t>(threads)) {}

bool amx_bf16_supported() { return cpu_features().amx_bf16 && cpu_features().avx512f; }

void gemm_amx_bf16(const Bf16* a, std::ptrdiff_t lda, const AmxPackedB& b, float* c,
                   std::ptrdiff_t ldc, int m, AmxWorkspace& ws, int threads) {
    const int k = b.k(), n = b.n();
    if (m <= 0 || n <= 0) return;
    const int mp = round_up(m, 32), kp = b.k_tiles() * 32;
    // Tiles read 32 k and 32 rows at a time: pad A with zeros unless it is already whole.
    if (m != mp || k != kp) {
        Bf16* pa = ws.padded_a();
        for (int i = 0; i < mp; ++i) {
            Bf16* row = pa + static_cast<std::ptrdiff_t>(i) * kp;
            if (i < m) std::memcpy(row, a + i * lda, sizeof(Bf16) * static_cast<std::size_t>(k));
            std::fill(row + (i < m ? k : 0), row + kp, Bf16{0});
        }
        a = pa;
        lda = kp;
    }
    const int pairs = round_up(n, 32) / 32;  // 32-column blocks of C
    // Pairs per L2 block: B of a block (pairs x 2 KiB per 32 k) stays in L2 (1 MiB of the
    // 2 MiB) while every 32-row block of A (32 x K bf16) passes by.
    const int block_pairs = std::max(1, (1 << 20) / (b.k_tiles() * 2048));
    threads = std::clamp(threads, 1, pairs);
    run_on_threads(threads, [&](int t) {
        const int p0 = pairs * t / threads, p1 = pairs * (t + 1) / threads;
        float* scratch = ws.c_tile(t);
        amx_tiles_configure();
        for (int pb = p0; pb < p1; pb += block_pairs) {
            const int pe = std::min(p1, pb + block_pairs);
            for (int i = 0; i < mp; i += 32)
                for (int p = pb; p < pe; ++p) {
                    const bool whole = i + 32 <= m && 32 * p + 32 <= n;
                    float* cb = c + i * ldc + 32 * p;
                    amx_bf16_block_32x32(a + i * lda, lda * 2, b.block(2 * p), b.block(2 * p + 1),
                                         b.k_tiles(), whole ? cb : scratch,
                                         whole ? ldc * 4 : 128);
                    if (whole) continue;
                    for (int r = 0; r < 32 && i + r < m; ++r)
                        for (int col = 0; col < 32 && 32 * p + col < n; ++col)
                            cb[r * ldc + col] = scratch[r * 32 + col];
                }
        }
        amx_tiles_release();
    });
}

void amx_bf16_tile_loop(const Bf16* a, const AmxPackedB& b, float* c, int repeats, int threads) {
    const std::ptrdiff_t lda_bytes = 2 * static_cast<std::ptrdiff_t>(b.k_tiles()) * 32;
    run_on_threads(threads, [&](int t) {
        const int r0 = repeats * t / threads, r1 = repeats * (t + 1) / threads;
        amx_tiles_configure();
        for (int r = r0; r < r1; ++r)
            amx_bf16_block_32x32(a, lda_bytes, b.block(0), b.block(1), b.k_tiles(), c + 1024 * t,
                                 128);
        amx_tiles_release();
    });
}

}  // namespace ceiling::kernels
