#pragma once
// The GEMM micro-kernel written once over a vector-traits type V (lanes, load, fmadd...).
// Included only by the per-ISA translation units, each with its traits in an anonymous
// namespace, so instantiations of different ISAs never merge (no ODR clash).

#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kernels/gemm/gemm.hpp"

namespace ceiling::kernels::detail {

// One k step of one element outside the vector loops (the small-M kernel's tails): a
// multiply-add, or V's own where its elements are not plain floats (the bf16-pair GEMM,
// whose "float" is two bf16 and whose multiply-add is a dot product of the pairs).
template <typename V>
inline float scalar_fmadd(float a, float b, float acc) {
    if constexpr (requires { V::scalar_fmadd(a, b, acc); })
        return V::scalar_fmadd(a, b, acc);
    else
        return acc + a * b;
}

// An element of the caller's A, whose storage may be another type (bf16 pairs): read
// through memcpy, which the compiler turns into one load. Keyed on V like everything here
// (a plain inline function is a weak symbol the linker may take from an ISA file).
template <typename V>
inline float load_element(const float* p) {
    float x;
    std::memcpy(&x, p, sizeof x);
    return x;
}

// ROWS x NV vectors of C in registers; per k: NV loads of B, ROWS broadcasts of A and
// ROWS x NV independent FMAs (28 on AVX-512 with 14 x 2: enough to cover 4-cycle FMA
// latency on 2 ports 3.5 times over, and 31 of the 32 zmm registers). B's packed panel
// holds BLD floats per k (nr; the narrow tile reads the first NV vectors of each).
template <typename V, int MR, int NV, int ROWS, int BLD>
__attribute__((always_inline)) inline void micro_kernel_body(int kc, const float* __restrict a,
                                                             const float* __restrict b,
                                                             float* __restrict c,
                                                             std::ptrdiff_t ldc, bool accumulate,
                                                             const GemmPrefetch& pf) {
    using R = typename V::reg;
    constexpr int L = V::lanes;
    // The C tile is read and written only after the k loop, and between two visits the
    // rest of C passes through the caches: at 1024^2 and beyond C lives in L3 or DRAM
    // (~370 cycles away on a Xeon VM), which left unprefetched costs ~20% of a call. Asked
    // for at the start into L2 (an L1 prefetch there is evicted again by the A and B
    // panels streaming through L1 during the call), then into L1 32 k before the end:
    // +4-5% over one L1 prefetch at the start (Zen 4, 2048^3, one thread, same run).
    // Always inlined: GCC 12 found a lambda that only prefetches free of side effects
    // ("const"), and deleted its calls before inlining it, so every micro-kernel of two rows
    // or more had run without these prefetches (seen in the disassembly; its test now
    // counts them).
    const auto prefetch_c = [ c, ldc ]<int Locality>() __attribute__((always_inline)) {
#pragma GCC unroll 16
        for (int i = 0; i < ROWS; ++i) {
            __builtin_prefetch(c + i * ldc, 1, Locality);
            __builtin_prefetch(c + i * ldc + NV * L - 1, 1, Locality);
        }
    };
    prefetch_c.template operator()<2>();
    R acc[ROWS][NV];
#pragma GCC unroll 16
    for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) acc[i][j] = V::zero();
    // The caller's prefetch program (GemmPrefetch): a countdown to the next line, a column
    // within the row and the row. every = 0 never reaches zero again (2^31 steps).
    const float* pf_row = pf.at;
    const int pf_width = pf.width;
    const std::ptrdiff_t pf_ld = pf.ld;
    const int pf_every = pf.every;
    int pf_col = 0, pf_tick = pf_every;
    const auto step = [&] {
        if (--pf_tick == 0) {
            pf_tick = pf_every;
            __builtin_prefetch(pf_row + pf_col, 0, 2);
            pf_col += gemm_line_floats;
            if (pf_col == pf_width) {
                pf_col = 0;
                pf_row += pf_ld;
            }
        }
        // B's panel 16 k ahead into L1, one prefetch per line a step consumes (BLD floats:
        // two on AVX-512, one on AVX2). Nothing for A's panel, which stays in L1 across the
        // B block's panels. Each prefetch is an instruction in a step of only 12 FMAs on
        // AVX2: a second, redundant B prefetch and one for A per step had held the AVX2
        // GEMM at 0.73-0.81 of OpenBLAS's Haswell core on one thread (Zen 4, the AVX2 path
        // forced, interleaved, medians of 9-15 rounds; 512^3 to 2048^3, M = 64 and 256 x
        // 4096 x 4096); with neither, and two steps per iteration (below), 0.93-1.02 on one
        // thread and 1.04-1.17 on two. AVX-512 (28 FMAs a step) moved by 0-1 % either way.
#pragma GCC unroll 4
        for (int line = 0; line < BLD; line += gemm_line_floats)
            __builtin_prefetch(b + 16 * BLD + line, 0, 3);
        R bv[NV];
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) bv[j] = V::load(b + j * L);
#pragma GCC unroll 16
        for (int i = 0; i < ROWS; ++i) {
            const R av = V::set1(a[i]);
#pragma GCC unroll 4
            for (int j = 0; j < NV; ++j) acc[i][j] = V::fmadd(av, bv[j], acc[i][j]);
        }
        a += MR;
        b += BLD;
    };
    const int k_late = kc > 32 ? kc - 32 : 0;
    // gemm_k_unroll (2) steps per iteration: the loop's own increment, compare and branch
    // once per two (AVX2 above: 8-10 % of the GEMM; 4 steps were no faster).
#pragma GCC unroll gemm_k_unroll
    for (int k = 0; k < k_late; ++k) step();
    prefetch_c.template operator()<3>();
    for (int k = k_late; k < kc; ++k) step();
#pragma GCC unroll 16
    for (int i = 0; i < ROWS; ++i) {
        float* row = c + i * ldc;
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) {
            const R v = accumulate ? V::add(V::loadu(row + j * L), acc[i][j]) : acc[i][j];
            V::storeu(row + j * L, v);
        }
    }
}

template <typename V, int MR, int NV, int ROWS>
void micro_kernel(int kc, const float* __restrict a, const float* __restrict b, float* __restrict c,
                  std::ptrdiff_t ldc, bool accumulate, const GemmPrefetch& pf) {
    micro_kernel_body<V, MR, NV, ROWS, NV * V::lanes>(kc, a, b, c, ldc, accumulate, pf);
}

// Vectors per row of the narrow tile: half of NV (one when NV is one).
template <int NV>
inline constexpr int narrow_nv = NV / 2 > 0 ? NV / 2 : 1;

// ROWS x (nr / 2) of C from a packed panel nr wide, for a block's last panel with at most
// nr / 2 columns: the full tile would spend as many FMAs on its zero-padded columns.
template <typename V, int MR, int NV, int ROWS>
void micro_kernel_narrow(int kc, const float* __restrict a, const float* __restrict b,
                         float* __restrict c, std::ptrdiff_t ldc, bool accumulate,
                         const GemmPrefetch& pf) {
    micro_kernel_body<V, MR, narrow_nv<NV>, ROWS, NV * V::lanes>(kc, a, b, c, ldc, accumulate, pf);
}

// M (<= gemm_small_m) rows of C from unpacked A and B, for decode-like GEMMs whose bound
// is B's DRAM stream, and for small batches where packing B (a pass over all of B before
// any FMA) would run the stream and the FMAs one after the other instead of together:
// packing held one core near 8 GB/s (every packed line costs a fill buffer for its
// read-for-ownership) while plain reads of B's rows run at 10-15 GB/s.
// Columns go in chunks whose M x chunk block of C is accumulated in a contiguous tile in
// half of L1 (small_m_chunk, from this CPU's L1d) while KB = 4 rows of B at a time stream
// through the other half: each vector of the tile is loaded and stored once per 4 k. The
// tile is not C itself: C's rows, ldc apart, fall in the same L1 sets when ldc is a
// multiple of 4 KiB and evict each other once M passes the L1's ways (on Zen 4's 8-way
// L1, M = 12 to 32 ran at 10-12 GF/s in place). A's M x KB slice is copied for the same
// reason.
template <typename V, int M>
void small_m_kernel(const float* a, std::ptrdiff_t lda, const float* b, std::ptrdiff_t ldb,
                    float* c, std::ptrdiff_t ldc, int n, int k, bool accumulate) {
    using R = typename V::reg;
    constexpr int L = V::lanes;
    constexpr int KB = 4;
    // Rows per group: G x KB broadcasts + KB vectors of B + G accumulators in V::registers.
    constexpr int RB = (V::registers - KB) / (KB + 1) < M ? (V::registers - KB) / (KB + 1) : M;
    alignas(64) float tile[gemm_small_m_tile_floats];
    const int chunk = small_m_chunk(M);
    // B's rows ahead of use, into L2: a chunk of a row is a short stream (1 KiB at M = 16)
    // in its own page, too short for the hardware prefetchers to follow; 16 rows ahead is
    // ~4 chunk passes, several DRAM latencies. One prefetch per line of B.
    constexpr int prefetch_rows = 16;
    constexpr int line =
        64 / static_cast<int>(sizeof(float)) < L ? L : 64 / static_cast<int>(sizeof(float));
    const int k_main = k / KB * KB;
    for (int j0 = 0; j0 < n; j0 += chunk) {
        const int nb = n - j0 < chunk ? n - j0 : chunk;
        const int nv = nb / L * L;
        for (int i = 0; i < M * chunk; ++i) tile[i] = 0.0f;
        for (int kk = 0; kk < k_main; kk += KB) {
            const float* br = b + kk * ldb + j0;
            float as[M * KB];
            for (int i = 0; i < M; ++i)
                std::memcpy(as + i * KB, a + i * lda + kk, sizeof(float) * KB);
            // G rows at a time: their G x KB broadcasts of A held in registers across the
            // columns, beside KB vectors of B and G accumulators. All M rows at once made
            // the compiler hoist 4M broadcasts out of the column loop and spill them (M = 32
            // ran at half the speed of M = 40, whose row loop it did not unroll).
            const auto rows = [&]<int G>(int i0) {
                R av[G][KB];
#pragma GCC unroll 8
                for (int r = 0; r < G; ++r)
#pragma GCC unroll 4
                    for (int q = 0; q < KB; ++q) av[r][q] = V::set1(as[(i0 + r) * KB + q]);
                for (int j = 0; j < nv; j += L) {
                    R bv[KB];
#pragma GCC unroll 4
                    for (int q = 0; q < KB; ++q) bv[q] = V::loadu(br + q * ldb + j);
                    if (i0 == 0 && kk + prefetch_rows < k && j % line == 0)
#pragma GCC unroll 4
                        for (int q = 0; q < KB; ++q)
                            __builtin_prefetch(br + (prefetch_rows + q) * ldb + j, 0, 2);
#pragma GCC unroll 8
                    for (int r = 0; r < G; ++r) {
                        float* tp = tile + (i0 + r) * chunk + j;
                        R acc = V::loadu(tp);
#pragma GCC unroll 4
                        for (int q = 0; q < KB; ++q) acc = V::fmadd(av[r][q], bv[q], acc);
                        V::storeu(tp, acc);
                    }
                }
            };
            for (int i0 = 0; i0 + RB <= M; i0 += RB) rows.template operator()<RB>(i0);
            if constexpr (M % RB != 0) rows.template operator()<M % RB>(M / RB * RB);
            for (int j = nv; j < nb; ++j)
                for (int i = 0; i < M; ++i)
                    for (int q = 0; q < KB; ++q)
                        tile[i * chunk + j] =
                            scalar_fmadd<V>(as[i * KB + q], br[q * ldb + j], tile[i * chunk + j]);
        }
        for (int kk = k_main; kk < k; ++kk)
            for (int i = 0; i < M; ++i)
                for (int j = 0; j < nb; ++j)
                    tile[i * chunk + j] =
                        scalar_fmadd<V>(load_element<V>(a + i * lda + kk), b[kk * ldb + j0 + j],
                                        tile[i * chunk + j]);
        for (int i = 0; i < M; ++i) {
            float* row = c + i * ldc + j0;
            const float* t = tile + i * chunk;
            for (int j = 0; j < nb; ++j) row[j] = accumulate ? row[j] + t[j] : t[j];
        }
    }
}

// The portable packers, for an ISA without its own (see GemmImpl::pack_a / pack_b). Keyed
// on V too, like everything here: an instantiation compiled under one ISA's flags must not
// stand in for another's (and no std:: algorithm templates, whose instantiations would).
//
// A block (mc x kc, leading dimension lda) -> panels of mr rows, each kc x mr with the mr
// values of one k adjacent (what the micro-kernel broadcasts in turn). Rows past mc are
// zero, so the edge tile computes zeros it then discards.
template <typename V, int mr>
void pack_a_portable(const float* a, std::ptrdiff_t lda, int mc, int kc, float* ap) {
    for (int p = 0; p < mc; p += mr) {
        const int rows = mc - p < mr ? mc - p : mr;
        float* dst = ap + static_cast<std::ptrdiff_t>(p) * kc;
        for (int i = 0; i < rows; ++i) {
            const float* src = a + (p + i) * lda;
            for (int k = 0; k < kc; ++k) dst[k * mr + i] = src[k];
        }
        for (int i = rows; i < mr; ++i)
            for (int k = 0; k < kc; ++k) dst[k * mr + i] = 0.0f;
    }
}

// `rows` rows of a B block (kc x nc) -> its panels of nr columns, each kc x nr row by row
// (the micro-kernel's nr/lanes aligned loads per k). Columns past nc are zero. Row by row, so B is
// read sequentially: panel by panel (128 bytes from each of kc rows N x 4 bytes apart) it ran at
// half the read roof when this copy was a small batch's DRAM stream.
template <typename V, int nr>
void pack_b_portable(const float* b, std::ptrdiff_t ldb, int rows, int kc, int nc, float* bp) {
    const int full = nc / nr * nr;
    for (int k = 0; k < rows; ++k) {
        const float* row = b + k * ldb;
        for (int q = 0; q < full; q += nr)
            std::memcpy(bp + static_cast<std::ptrdiff_t>(q) * kc + k * nr, row + q,
                        sizeof(float) * static_cast<std::size_t>(nr));
        if (full < nc) {
            float* dst = bp + static_cast<std::ptrdiff_t>(full) * kc + k * nr;
            std::memcpy(dst, row + full, sizeof(float) * static_cast<std::size_t>(nc - full));
            for (int j = nc - full; j < nr; ++j) dst[j] = 0.0f;
        }
    }
}

template <typename V, std::size_t... Ms>
constexpr std::array<GemmSmallM, gemm_small_m> small_m_table(std::index_sequence<Ms...>) {
    return {{&small_m_kernel<V, static_cast<int>(Ms) + 1>...}};
}

// Aggregate-initialised (no std::array member functions instantiated under ISA flags).
template <typename V, int MR, int NV, std::size_t... Rows>
constexpr std::array<GemmMicroKernel, gemm_max_mr> micro_kernel_table(
    std::index_sequence<Rows...>) {
    return {{&micro_kernel<V, MR, NV, static_cast<int>(Rows) + 1>...}};
}
template <typename V, int MR, int NV, std::size_t... Rows>
constexpr std::array<GemmMicroKernel, gemm_max_mr> narrow_kernel_table(
    std::index_sequence<Rows...>) {
    return {{&micro_kernel_narrow<V, MR, NV, static_cast<int>(Rows) + 1>...}};
}

// Constant-evaluated (the ISA files declare their GemmImpl constinit): no code compiled for
// an ISA may run before the CPU check, and a dynamic initialiser in an AVX-512 file ran at
// start-up on an AVX2-only Zen 3 and died of SIGILL. The cache blocks, read from this CPU at
// run time, are filled in by gemm_impls() (gemm.cpp, compiled for every x86-64).
template <typename V, int MR, int NV>
constexpr GemmImpl make_gemm_impl(std::string_view isa, bool (*supported)(const CpuFeatures&),
                                  void (*pack_a)(const float*, std::ptrdiff_t, int, int, float*),
                                  void (*pack_b)(const float*, std::ptrdiff_t, int, int, int,
                                                 float*),
                                  std::string_view symbol) {
    static_assert(MR <= gemm_max_mr);
    return {isa,
            supported,
            MR,
            NV * V::lanes,
            0,
            0,
            0,
            micro_kernel_table<V, MR, NV>(std::make_index_sequence<MR>{}),
            symbol,
            pack_a ? pack_a : &pack_a_portable<V, MR>,
            pack_b ? pack_b : &pack_b_portable<V, NV * V::lanes>,
            small_m_table<V>(std::make_index_sequence<gemm_small_m_limit(MR)>{}),
            narrow_kernel_table<V, MR, NV>(std::make_index_sequence<MR>{}),
            narrow_nv<NV> * V::lanes};
}

}  // namespace ceiling::kernels::detail
