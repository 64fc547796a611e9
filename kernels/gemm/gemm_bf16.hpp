#pragma once
// bf16 GEMM on AVX512-BF16's vdpbf16ps, for CPUs that have it without AMX (Zen 4 and 5,
// Cooper Lake): C (M x N, fp32) = A (M x K, bf16, row-major) * B (K x N, bf16).
//
// vdpbf16ps multiplies each lane's pair of bf16 by another pair and adds both products into
// the lane's fp32 accumulator: it is the fp32 GEMM's FMA on 32-bit elements that hold two k
// each. So the fp32 GEMM's loops (gemm.hpp: packing, cache blocks, threads, prefetches, the
// small-M path) run it unchanged over K / 2: A's rows are already pairs in memory (A[i][2q],
// A[i][2q + 1]), B is interleaved once into K / 2 rows of pairs (B[2q][j], B[2q + 1][j]),
// as weights are packed ahead of time by AMX code and by libraries, and the micro-kernel's
// FMA is vdpbf16ps (gemm_avx512.cpp). Each call still packs its blocks of B from that, as
// the fp32 GEMM does from B.
//
// Bound: vdpbf16ps does 2 x 2 x 16 flop, twice an fp32 FMA's, at the same rate where the
// profile's bf16_dot512 roof is twice its fp32_fma512 one (Zen 4: 233 against 117 GFLOP/s a
// core); per k pair the tile loads and broadcasts what the fp32 tile does per k, so the
// loop's bytes per flop halve.
// Measured (2-vCPU Zen 4 VM, 32 KiB L1d, 1 MiB L2, 2026-12-03): the micro-kernel alone (the
// suite's bf16-tiles) at 93-97 % of the bf16_dot512 roof, its panels in L1 or L2 (a plain
// loop of the same tile without prefetches: 97-99 %); the GEMM at 86-93 % (2048^3 and
// 4096^3, one and two threads), oneDNN 2.6's matmul (avx512_core_bf16, B reordered ahead) at
// 87-94 % beside it. Ours over oneDNN's, median of three suite runs: 4096^3 1.05 / 1.01 on one
// / two threads, 2048^3 0.99 / 1.00; in a harness interleaving both in one process (A, B
// and C on huge pages, as in the suite: on 4 KiB pages ours lost 3-5 %), 2048^3 0.99-1.02
// on one thread and 0.98-1.03 on two. perf, 2048^3 on two threads: the micro-kernels 94 % of
// ours, pack_a 1.7 %, pack_b 0.9 %, the threads' wait at the end 4 %; splitting N from the
// shared queue instead of M in halves was no faster (pack_a doubles). Not taken: kc 1024
// pairs with nc 96 ran 1.02-1.03x kc 512 (nc 160) here, the fp32 GEMM 1.02-1.04x, against
// a Zen 5 measurement that had kc 512 ahead of 1024 (gemm.hpp); kc 256 lost 3 %, 128 15 %.
// Nor B packed ahead into the GEMM's panels (as oneDNN reorders its weights) with M split
// over the threads by halves or from a shared queue: 1.00-1.013x this, within the noise.
// Nor (2026-12-04, same VM) each thread's last k step shared, a thread done with its own
// rows taking the other's B blocks: 1.00x, and a block was taken in 2 of ~10 GEMMs (the two
// threads end within one B block, ~4 % of the GEMM, of each other); kc 1024 again 1.00-1.01x
// on two threads beside oneDNN at 0.98-1.03x.

#include <cstddef>

#include "kernels/common/array.hpp"
#include "kernels/common/bf16.hpp"
#include "kernels/gemm/gemm.hpp"

namespace ceiling::kernels {

// The AVX512-BF16 implementation with this CPU's cache blocks, or null where this CPU lacks
// AVX512-BF16 (made in gemm.cpp beside the fp32 implementations, with the same blocks).
const GemmImpl* gemm_bf16_impl();

// B (k x n, row-major, ldb) as ceil(k / 2) rows of n pairs, each pair one 32-bit element:
// B[2q][j] in the low half, B[2q + 1][j] (zero past k) in the high.
class Bf16PairedB {
  public:
    Bf16PairedB(const Bf16* b, std::ptrdiff_t ldb, int k, int n);
    int k() const { return k_; }
    int n() const { return n_; }
    const float* pairs() const { return data_.data(); }
    static std::size_t bytes(int k, int n);

  private:
    int k_, n_;
    Array<float> data_;
};

// The fp32 GEMM's packing buffers, and, when K is odd, room for m rows of A padded to
// whole pairs.
class Bf16GemmWorkspace {
  public:
    Bf16GemmWorkspace(const GemmImpl& impl, int m, int k, int threads);
    GemmWorkspace& gemm() { return gemm_; }
    int m() const { return m_; }
    int k() const { return k_; }
    Bf16* padded_a() { return a_.data(); }
    static std::size_t bytes(const GemmImpl& impl, int m, int k, int threads);

  private:
    GemmWorkspace gemm_;
    int m_, k_;
    Array<Bf16> a_;
};

// C = A * B on `threads` threads (at most the workspace's) with impl = *gemm_bf16_impl().
// With K even A is read in place as pairs, so lda must be even and a 4-byte aligned; with K
// odd its rows are copied, padded with a zero, into the workspace, which must be made for
// this K and at least m rows (std::invalid_argument otherwise, either way).
void gemm_bf16_pairs(const GemmImpl& impl, const Bf16* a, std::ptrdiff_t lda, const Bf16PairedB& b,
                     float* c, std::ptrdiff_t ldc, int m, Bf16GemmWorkspace& ws, int threads);

}  // namespace ceiling::kernels
