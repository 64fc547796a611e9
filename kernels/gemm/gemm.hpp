#pragma once
// Single-precision GEMM, row-major, C (M x N) = A (M x K) * B (K x N), or C += A * B.
//
// optimized: the BLIS structure. A is packed into panels MR rows tall (kc x MR, a block of
// up to MC rows kept in L3), B into panels NR columns wide (kc x NR, a block of NC columns
// kept in L2); each A panel is swept past all of the B block's panels in turn. The
// micro-kernel holds an MR x NR tile of C in registers and does MR x NR/lanes FMAs per k
// with NR/lanes loads of B and MR broadcasts of A (a block's last panel of at most NR/2
// columns runs a half-width one). Threads split N (or M when N is too narrow), each with
// its own packing buffers; where A's rows fit one block, they take N's blocks from a shared
// queue, waiting only for the same columns' previous k step (gemm.cpp). The same loops run
// the bf16 GEMM of CPUs with AVX512-BF16 and no AMX, over pairs of k (gemm_bf16.hpp).
//
// Bound and measured (2-core KVM guests, shared and noisy; ratios from the same run):
// - Compute bound. Peak per core = FMA ports x lanes x 2 flop x the clock `ceiling machine`
//   measures: 117 GFLOP/s on a Zen 4 guest (one 512-bit FMA per cycle at 3.67 GHz). The
//   micro-kernel alone, panels in L1/L2, runs 112 (96%). In the blocked loops on one core:
//   2048^3 and 4096^3 at 105-109 (90-93%), OpenBLAS 0.3.21 (Cooperlake core, its own
//   choice here) 98-105 in the same runs; on two cores 200-215 (OpenBLAS 176-212). Zen 4
//   runs 256-bit FMAs at the same 32 flop/cycle, and OpenBLAS's Haswell core is 3-10%
//   faster than its Cooperlake one here: against it 2048-4096 are at 0.99, 512 and
//   M = 64 at 1.03, M = 256 x 4096 x 4096 at 0.92. What the blocking
//   changed, each measured alone: kc 256 -> 512 (+5-12%; 1024 is no longer better, see
//   gemm_blocks), the C tile prefetched into L2 at the start
//   and into L1 32 k before the end (+4-5%), nc 1024 -> 4096 (A packed once per kc step
//   instead of four times: pack_a fell from 5% to under 1% of the time), B and A micro-
//   panels prefetched 16 k ahead (+1-3%), B packed two panels at a time while the micro-
//   kernel prefetches the next two (B from DRAM: 48-64 x 4096 x 4096 +14-20% on two
//   cores; on one core within the noise), the next A block's rows prefetched during the
//   current block's last calls (512^3 +1.5-2 %, 64-128 x 4096 x 4096 on two cores +2-4 %:
//   A's pack had stalled on L3 or DRAM). What remains (perf, 4096^3, one thread):
//   the micro-kernel is 98% of the time (pack_a 1.1%, pack_b 0.7%) and runs ~2-4% slower in
//   place than alone, most of it spread evenly over the FMA loop, ~3% on the C update;
//   prefetching C into L1 96 or 256 k before the end instead of 32 changed nothing (+-1%).
//   (Those Zen 4 figures were taken without the C prefetches, lost to the compiler; see
//   gemm_impl.hpp.) Zen 5 guest (two 512-bit FMA pipes, 236-241 GFLOP/s per core): the
//   micro-kernel alone in L1 236-243, its panels in L2 225-232; in the suite 2048-4096 at
//   87-90% of the roof on one and two threads, OpenBLAS's SkylakeX core 87-91%. The same
//   GEMM with A, B and C on 4 KiB pages instead of huge pages ran 193 against 229 (4096^3,
//   one thread, kc 512: page walks of C's rows, 16 KiB apart, and of A's and B's blocks).
//   The figures above were taken in the loop order before the present one (gemm_blocks
//   says what changed and what it gave); its B groups packed between calls and its A rows
//   prefetched for the next block went with it, replaced by the next B block's source
//   prefetched during the block before (since dropped: gemm.cpp says why). perf (software
//   clock) on 512^3, one thread, Zen 5, new order: the micro-kernels 94-96% of the time,
//   pack_a 5.4% -> 2.4-3.1% once its transpose stayed in registers and it prefetched its rows
//   (gemm_avx512.cpp), pack_b 1.6-1.7% with its rows prefetched 8 ahead (2.0% in one run
//   without: within this measure's noise). At 64 x 4096 x 4096 pack_b was 13-14% (B's
//   64 MiB copied for 64 rows); the first A panel's calls then read B's rows themselves and
//   stored the packed panel as they went (~12% slower than a plain call): 64 x 4096 x 4096
//   174 -> 188 GFLOP/s (AVX2 forced: 90 -> 96), against OpenBLAS in one process 1.30 ->
//   1.32-1.37, the squares 1.00-1.04 -> 1.02-1.06. On a Xeon VM that order lost 6-30% to
//   pack_b's (gemm.cpp gives the figures), which packs every block again.
//   On a 2-vCPU Xeon VM with AMX (2026-12-03) the micro-kernel alone (the suite's
//   gemm/fp32-tiles) ran at 64-76 % of the FMA roof on two threads (four suite runs) and
//   at 94-100 % on one (two runs; 66-82 % in a harness earlier that day: the host's share
//   of a core moves), its panels in L1 or L2 alike. The GEMM ran at 51-73 % on two threads,
//   so there the loop is the limit, and at 64-80 % on one (OpenBLAS 54-80 %), cases some
//   20 s apart. Fed in a harness as the GEMM feeds it (C tiles walked with ldc 4096 in
//   blocks of 352 columns, A panels walked through an 8 MiB block with the next one
//   prefetched, B panels through an L2 block) the loop lost 0-10 %, and it held its rate
//   over 2 s without decay. The one-thread gap was the host moving between the cases: a
//   harness timing the FMA roof, the loop alone, this GEMM and OpenBLAS's in turns, round
//   after round, had 2048^3 at 0.93 of the loop alone on one thread and on two (10-12
//   rounds, 0.90-0.96 in steady ones) and 4096^3 on one at 0.99, while the roof moved from
//   92 to 140 GF/s (one thread) between rounds and the loop alone from 71 to 118. On two
//   threads the loop alone held 0.77 of the roof round after round (200 of 263 GF/s): that
//   ceiling is the loop's on this host, its loads beside the FMAs; 256 x 4096 x 4096 (B
//   from DRAM) reached 0.85-0.91 of it, its B-packing calls (one A panel in 18) 16 % of the
//   time (perf), bound by B's stream: a second prefetch of the next panel's source lines
//   lost 4-6 %, prefetching 8 or 32 rows ahead instead of 16 changed nothing, none lost
//   19 %. The suite now measures the roofs in turns with each shape (suite/suite.cpp),
//   and judged so 4096^3 on one thread reached 86 % of the roof beside it. A plain
//   intrinsics loop of the same 14 x 2 tile without prefetches, 12 or 8 rows, or its k loop
//   unrolled by 4 were no faster (harness). A second, farther prefetch of B's source rows in the
//   packing calls (48 or 96 k ahead, into L2 or L3) lost at 256 x 4096 x 4096 on two threads
//   (1.31-1.39 of OpenBLAS without, 1.13-1.27 with).
//   Since B is packed by pack_b again (gemm.cpp), perf at 256 x 4096 x 4096 on two threads
//   (same VM, 160 GFLOP/s at that moment): the micro-kernel 77 % of the time (so ~200 in
//   place, 75 % of the roof), pack_b 13.6 % (B's 32 MiB per thread at ~4.5 GB/s; the likely
//   limit, not counted here: 16 lines in flight per core, its L1 fill buffers, against DRAM
//   ~370 cycles away allow ~5.5), pack_a 1.8 %, the threads' wait at the end 3.4 %.
//   Prefetching pack_b's rows into L2 instead of L1, 16 rows ahead, or not at all: within
//   2 % (M = 128, interleaved). Now each block's calls fetch the next block's rows a slice
//   at a time among their FMAs (gemm.cpp): at M = 128 pack_b fell from 23 % to 6 % of the
//   time, and M = 128 ran at 184-188 GFLOP/s on two threads (68-70 % of the roof; OpenBLAS
//   91) where the build before ran 118-132 in the same minute.
// - Small M (below two of the tile's row panels, gemm_small_m_limit; decode-like at M = 1):
//   B's DRAM stream overlapped with the FMAs instead of packed first (see small_m_kernel).
//   Batch sweep M x 4096 x 4096 on Zen 4, B from DRAM: M = 1 streams ~21 GB/s on one core
//   and 43 on two (OpenBLAS 5-10); M = 8 to 32 at 45-80 GFLOP/s on one core, 90-150 on two,
//   1.3-2.5x OpenBLAS (before the limit below). The small-M kernel keeps a group of rows'
//   broadcasts in registers (5 rows on AVX-512's 32, 2 on AVX2's 16), so its loads and stores per
//   FMA grow as the registers shrink, and the packed path overtakes it once M fills two row panels.
//   Zen 4 VM (2026-12-03), both paths timed in turns with OpenBLAS in one process (medians of
//   9-11), small / packed as a multiple of OpenBLAS: AVX2 (6-row tile, Haswell core) M = 8
//   1.20 / 1.10 on one thread, 12 1.03 / 1.02 (two threads 2.42 / 2.97), 16 0.95 / 1.08,
//   32 0.77 / 1.06 (two 1.34 / 1.63); AVX-512 (14 rows, SkylakeX core) M = 24 1.87 / 1.75,
//   28 1.66 / 1.75 (two 1.95 / 1.94), 32 1.45 / 1.72 (two 1.78 / 2.15).

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/common/array.hpp"
#include "kernels/cpu_features.hpp"

namespace ceiling::kernels {

// Lines a micro-kernel call brings into L2 for what comes after it, one every `every` k
// steps (0: none): `width` floats (whole 64-byte lines) from `at`, then the same from
// at + ld, and so on; `width` 0 walks one contiguous run. The caller's next A panel, one
// line a step, or a slice of rows of the next B block's source, spread thin enough that
// the FMAs hide their DRAM latency (blocked(), gemm.cpp).
struct GemmPrefetch {
    const float* at = nullptr;
    std::ptrdiff_t ld = 0;
    int width = 0;
    int every = 0;
};

// C tile of `rows` x nr (rows <= mr) from packed panels: a advances by mr floats per k,
// b by nr. accumulate: C += A * B, else C = A * B.
using GemmMicroKernel = void (*)(int kc, const float* a, const float* b, float* c,
                                 std::ptrdiff_t ldc, bool accumulate, const GemmPrefetch& pf);

inline constexpr int gemm_max_mr = 16;
inline constexpr int gemm_line_floats = 16;  // one 64-byte cache line
inline constexpr int gemm_k_unroll = 2;      // k steps per iteration of the micro-kernel's loop

// Rows [0, m) (m <= gemm_small_m) of C = A * B (or C += A * B) without packing: every row
// of B streams once, in chunks of columns whose m-row block of C stays in L1. The optimized
// GEMM takes this path for M up to gemm_small_m_limit(mr).
using GemmSmallM = void (*)(const float* a, std::ptrdiff_t lda, const float* b, std::ptrdiff_t ldb,
                            float* c, std::ptrdiff_t ldc, int n, int k, bool accumulate);
inline constexpr int gemm_small_m = 32;  // the most rows a small-M kernel is made for
// The largest M the optimized GEMM runs on the small-M path for a tile of mr rows: below two
// of its row panels, where the packed path overtakes it (top of this file).
constexpr int gemm_small_m_limit(int mr) {
    return 2 * mr - 1 < gemm_small_m ? 2 * mr - 1 : gemm_small_m;
}

// Columns per chunk of the small-M kernel with m rows: its m x chunk tile of C in half of
// this CPU's L1d (and in gemm_small_m_tile_floats), a multiple of 64, at least 64.
inline constexpr int gemm_small_m_tile_floats = 16384;  // 64 KiB on the stack
int small_m_chunk(int m);

// Cache blocks for an mr x nr micro-kernel, from this CPU's caches (cache_sizes()):
//   kc = 512: the C tile is loaded and stored once per kc steps of 2 x mr x nr flop, its
//     lines prefetched while the FMAs run. On Zen 4 (32 KiB L1d, 1 MiB L2), 2048^3 on
//     one thread ran 5-12% faster at kc 512 than at 256 (384 in between). kc 1024 was the
//     rule for a while (+1.5-4% on Zen 4), measured when the C prefetches had silently
//     dropped out of the micro-kernel (gemm_impl.hpp), so longer blocks amortised exposed C
//     misses; with them back, on a Zen 5 guest (48 KiB L1d, 1 MiB L2, two 512-bit FMA
//     pipes), 4096^3 on one thread ran 214 GFLOP/s at kc 1024, 229 at 512 and 226-227 at
//     384 and 768. In the present loop order kc 192, 256, 384 and 512 were within the
//     noise of each other there (0.99-1.03 of OpenBLAS); 512 keeps the C updates rarest;
//   nc: the kc x nc B block in 35% of a core's L2 (Zen 5: 30-40% within the noise, 160
//     columns, measured while the next block's source was prefetched beside it);
//   mc: the mc x kc A block in this CPU's share of half of L3, at most 4096 rows (rounded
//     up to whole panels): B is packed again for each A block, so M up to that is one.
//   The order: A panels swept past a B block in L2. The one before it (A block of 294 rows
//   in 60% of L2, B block of 4096 columns in L3, one 64 KiB B panel swept by every A panel)
//   was slower at 2048-4096. Per k both orders read A's and B's bytes from L2 (at kc 512
//   the A panel, 28 KiB, and a B panel, 64 KiB, pass through a 48 KiB L1d between two uses
//   of a line; at kc 256, where an A panel would stay in L1, the speed was the same); what
//   differs is what else L2 holds, 320 KiB of B against 588 KiB of A plus the B panels
//   being packed, which is the likely cause (no PMU here to count L2 misses). Interleaved
//   with OpenBLAS in one process (Zen 5, one thread, two
//   rounds of seven), old order then new: 512^3 0.997-1.020 -> 1.017-1.022, 2048^3
//   0.961-0.987 -> 1.024-1.031, 4096^3 0.955-0.975 -> 1.011-1.013, 256 x 4096 x 4096
//   1.005-1.007 -> 1.063-1.067; the batch sweep's M = 48-128 within the noise of before.
struct GemmBlocks {
    int kc, mc, nc;
};
GemmBlocks gemm_blocks(int mr, int nr);

struct GemmImpl {
    std::string_view isa;  // "avx512", "avx2", "scalar"
    bool (*supported)(const CpuFeatures&);
    int mr, nr;      // register tile
    // Cache blocks (gemm_blocks): set by gemm_impls() from this CPU's caches, 0 in each
    // ISA file's constant (make_gemm_impl says why).
    int kc, mc, nc;
    std::array<GemmMicroKernel, gemm_max_mr> kernels;  // kernels[r - 1] computes r rows
    std::string_view symbol;  // the full-tile micro-kernel, for reading its disassembly
    // Packs an mc x kc block of A into mr-row panels: the ISA's own, else the portable one
    // (make_gemm_impl, gemm_impl.hpp). Always set.
    void (*pack_a)(const float* a, std::ptrdiff_t lda, int mc, int kc, float* ap) = nullptr;
    // Packs `rows` rows of a kc x nc block of B into its nr-column panels (kc rows tall):
    // b and bp at the first of those rows (bp = block + row * nr). Always set, likewise.
    void (*pack_b)(const float* b, std::ptrdiff_t ldb, int rows, int kc, int nc,
                   float* bp) = nullptr;
    // small_m[m - 1] for m = 1 .. gemm_small_m_limit(mr), null beyond: decode-like GEMMs.
    std::array<GemmSmallM, gemm_small_m> small_m{};
    // narrow_kernels[r - 1]: r rows by narrow_nr columns (about nr / 2) of a packed panel,
    // for a block's last panel when its columns fit: zero-padded columns cost FMAs too.
    std::array<GemmMicroKernel, gemm_max_mr> narrow_kernels{};
    int narrow_nr = 0;
};

std::span<const GemmImpl* const> gemm_impls();  // widest first
// What the optimized variant runs with this implementation, for the suite's label: the
// tile, the blocks and the rules that pick them (stated where the rules are).
std::string gemm_description(const GemmImpl& impl);
const GemmImpl& best_gemm_impl();  // the widest this CPU runs

// Packing buffers of `threads` threads for one implementation.
class GemmWorkspace {
  public:
    GemmWorkspace(const GemmImpl& impl, int threads);
    float* a_block(int thread) { return a_[static_cast<std::size_t>(thread)].data(); }
    // Two B blocks per thread: the calls of one pack the next (gemm.cpp).
    float* b_panel(int thread, int which = 0) {
        return b_[static_cast<std::size_t>(2 * thread + which)].data();
    }
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
    // The nr-column micro-panel of columns [j, j + nr) (j a multiple of nr), rows [pc, pc + kc).
    const float* micro_panel(int j, int pc) const;
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

// The loop every optimized GEMM runs, alone: `repeats` calls of the full-tile micro-kernel
// (split over `threads`) on one packed A panel (impl.mr x k, pack_a's layout) and one packed
// B panel (k x impl.nr, pack_b's) that stay resident; thread t writes C = A * B into its
// tile at c + t * mr * nr (mr x nr, row-major). The suite's gemm/fp32-tiles: the ceiling of
// that loop on this core, between the FMA roof and the whole GEMM.
void gemm_tile_loop(const GemmImpl& impl, const float* ap, const float* bp, int k, float* c,
                    int repeats, int threads);

// With B already packed (g.b, g.ldb ignored), on the calling thread with workspace slot
// `slot`: for callers that parallelise over independent GEMMs themselves.
void gemm_prepacked(const GemmImpl& impl, const GemmArgs& g, const PackedB& b, GemmWorkspace& ws,
                    int slot);

}  // namespace ceiling::kernels
