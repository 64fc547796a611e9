#pragma once
// Single-precision GEMM, row-major, C (M x N) = A (M x K) * B (K x N), or C += A * B.
//
// optimized: the BLIS structure. B is packed into panels NR columns wide (kc x NR,
// contiguous, in L1 while the micro-kernel sweeps a block of A), A into panels MR rows
// tall (kc x MR, a block of MC rows kept in L2); the micro-kernel holds an MR x NR tile
// of C in registers and does MR x NR/lanes FMAs per k with NR/lanes loads of B and MR
// broadcasts of A. Threads split N (or M when N is too narrow), each with its own packing
// buffers, so they never wait for each other.
//
// Bound and measured (development VM: 2 Emerald Rapids cores under KVM, shared and noisy;
// thread or process CPU time, best of 5-9, OpenBLAS 0.3.21 with OPENBLAS_CORETYPE=SkylakeX):
// - Compute bound. Peak per core 2 FMA ports x 16 lanes x 2 flop x 2.64 GHz (the AVX-512
//   clock `ceiling machine` measures) = 169 GFLOP/s; the micro-kernel alone, panels in L1,
//   runs 166-172. In the blocked loops it gets ~140 and the GEMM 116-125 on one core
//   (1024^3, 0.72 of peak; OpenBLAS 138-146: 0.85-0.90x) and 165-210 on two (2048^3;
//   OpenBLAS 190-284 in the same minutes: 0.72-0.88x, mostly ~0.86x). The gap: feeding the
//   micro-kernel (B micro-panel + A micro-panel fill 46 of L1's 48 KiB; C rows 4-8 KiB apart
//   alias in L1 sets) and packing (A transpose 4%, B copy 2-3% of the time).
// - Decode-like M <= 8 (gemm_small_m): bound by B's DRAM stream (0.5 flop/byte at M = 1).
//   M = 1, N = K = 4096: 13.1 GB/s on one core (~the 13-14 GB/s read roof), 21.8 GB/s on
//   two (0.8 of 27); OpenBLAS 5-10 GB/s. The sweep turns compute bound past M ~ 32.

#include <array>
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "kernels/common/array.hpp"
#include "kernels/cpu_features.hpp"

namespace ceiling::kernels {

// C tile of `rows` x nr (rows <= mr) from packed panels: a advances by mr floats per k,
// b by nr. accumulate: C += A * B, else C = A * B.
using GemmMicroKernel = void (*)(int kc, const float* a, const float* b, float* c,
                                 std::ptrdiff_t ldc, bool accumulate);

inline constexpr int gemm_max_mr = 16;

// Rows [0, m) (m <= gemm_small_m) of C = A * B (or C += A * B) without packing: every row
// of B streams once, in chunks of columns whose m-row block of C stays in L1.
using GemmSmallM = void (*)(const float* a, std::ptrdiff_t lda, const float* b, std::ptrdiff_t ldb,
                            float* c, std::ptrdiff_t ldc, int n, int k, bool accumulate);
inline constexpr int gemm_small_m = 8;

struct GemmImpl {
    std::string_view isa;  // "avx512", "avx2", "scalar"
    bool (*supported)(const CpuFeatures&);
    int mr, nr;            // register tile
    int kc, mc, nc;        // cache blocks: kc x nr B panel in L1, mc x kc A block in L2
    std::array<GemmMicroKernel, gemm_max_mr> kernels;  // kernels[r - 1] computes r rows
    std::string_view symbol;  // the full-tile micro-kernel, for reading its disassembly
    // Packs an mc x kc block of A into mr-row panels (see gemm.cpp); null: the portable one.
    void (*pack_a)(const float* a, std::ptrdiff_t lda, int mc, int kc, float* ap) = nullptr;
    // Packs a kc x nc block of B into nr-column panels; null: the portable one.
    void (*pack_b)(const float* b, std::ptrdiff_t ldb, int kc, int nc, float* bp) = nullptr;
    // small_m[m - 1] for m = 1 .. gemm_small_m: decode-like GEMMs (see gemm.cpp).
    std::array<GemmSmallM, gemm_small_m> small_m{};
};

std::span<const GemmImpl* const> gemm_impls();  // widest first
const GemmImpl& best_gemm_impl();               // the widest this CPU runs

// Packing buffers of `threads` threads for one implementation.
class GemmWorkspace {
public:
    GemmWorkspace(const GemmImpl& impl, int threads);
    float* a_block(int thread) { return a_[static_cast<std::size_t>(thread)].data(); }
    float* b_panel(int thread) { return b_[static_cast<std::size_t>(thread)].data(); }
    int threads() const { return static_cast<int>(a_.size()); }
    static std::size_t bytes(const GemmImpl& impl, int threads);

private:
    std::vector<Array<float>> a_, b_;
};

// B packed once, for a B used many times (convolution weights).
class PackedB {
public:
    PackedB(const GemmImpl& impl, const float* b, std::ptrdiff_t ldb, int k, int n);
    int k() const { return k_; }
    int n() const { return n_; }
    // Panel of columns [jc, jc + nc) and rows [pc, pc + kc) for the impl's blocks.
    const float* panel(int jc, int pc) const;
    static std::size_t bytes(const GemmImpl& impl, int k, int n);

private:
    int k_, n_, kc_, nc_, nr_;
    Array<float> data_;
};

struct GemmArgs {
    const float* a;
    std::ptrdiff_t lda;
    const float* b;
    std::ptrdiff_t ldb;
    float* c;
    std::ptrdiff_t ldc;
    int m, n, k;
    bool accumulate = false;
};

// Textbook triple loop (i, j, k), one thread: the naive variant and the test reference.
void gemm_naive(const GemmArgs& g);

// Blocked, packed, on `threads` threads (workspace for at least that many).
void gemm_optimized(const GemmImpl& impl, const GemmArgs& g, GemmWorkspace& ws, int threads);

// With B already packed (g.b, g.ldb ignored), on the calling thread with workspace slot
// `slot`: for callers that parallelise over independent GEMMs themselves.
void gemm_prepacked(const GemmImpl& impl, const GemmArgs& g, const PackedB& b,
                    GemmWorkspace& ws, int slot);

}  // namespace ceiling::kernels
