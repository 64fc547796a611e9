#include "kernels/gemm/gemm.hpp"

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "kernels/gemm/gemm_bf16.hpp"
#include "kernels/parallel.hpp"

namespace ceiling::kernels {

// Constants of the ISA files, without cache blocks (make_gemm_impl, gemm_impl.hpp).
extern const GemmImpl gemm_avx512;
extern const GemmImpl gemm_avx2;
extern const GemmImpl gemm_scalar;
extern const GemmImpl gemm_avx512_bf16;  // bf16 pairs (gemm_bf16.hpp)

namespace {

// A micro-kernel call prefetches a line of the next B block every 2 to 4 k steps
// (blocked()). In a harness (one core of a Xeon VM) an FMA loop prefetching a DRAM line
// every 4 steps, its lines copied after the next call, ran as fast as the loop alone, and
// the same lines copied cold took it ~35 % longer; in the GEMM, every 2 steps where 4 left
// rows unfetched gained 7-10 % more at M = 33-64 x 4096 x 4096, every step no more.
constexpr int gemm_slice_every_min = 2, gemm_slice_every_max = 4;

// Each ISA's implementation with this CPU's cache blocks, made on first use here, in code
// compiled for every x86-64.
GemmImpl with_blocks(GemmImpl im) {
    const GemmBlocks b = gemm_blocks(im.mr, im.nr);
    im.kc = b.kc;
    im.mc = b.mc;
    im.nc = b.nc;
    return im;
}
const std::array<const GemmImpl*, 3>& impls() {
    static const std::array<GemmImpl, 3> all = {with_blocks(gemm_avx512), with_blocks(gemm_avx2),
                                                with_blocks(gemm_scalar)};
    static const std::array<const GemmImpl*, 3> widest_first = {&all[0], &all[1], &all[2]};
    return widest_first;
}

int ceil_div(int x, int d) { return (x + d - 1) / d; }
int round_up(int x, int m) { return ceil_div(x, m) * m; }

// A block of mc rows of A in as few panels as mr-row ones, of equal height (the first ones a
// row taller where the count does not divide mc): a last panel of a few rows runs its
// micro-kernel at a fraction of its rate (128 rows as 9 x 14 + 2: the 2-row calls took
// 4.2 % of the time for 1.6 % of the work, perf, two threads). Against mr-row panels,
// interleaved in one process (Xeon VM, M x 4096 x 4096): two threads 1.045x at M = 33, 1.04x
// at 48, 1.06x at 128 (8 x 13 + 2 x 12), 1.02x at 192; one thread 1.02x at 128. Panel p: rows
// [start, start + rows), packed at ap + p * mr * kc.
struct APanels {
    int count, base, extra;
    APanels(const GemmImpl& im, int mc)
        : count(ceil_div(mc, im.mr)), base(mc / count), extra(mc % count) {}
    int start(int p) const { return p * base + std::min(p, extra); }
    int rows(int p) const { return base + (p < extra ? 1 : 0); }
};

void pack_a_panels(const GemmImpl& im, const float* a, std::ptrdiff_t lda, int mc, int kc,
                   float* ap) {
    const APanels panels(im, mc);
    for (int p = 0; p < panels.count; ++p)
        im.pack_a(a + panels.start(p) * lda, lda, panels.rows(p), kc,
                  ap + static_cast<std::ptrdiff_t>(p) * im.mr * kc);
}

// One block of the loops: rows [pc, pc + kc) of K, A's rows [ic, ic + mc), B's columns
// [jc, jc + nc).
struct Block {
    int pc, kc, ic, mc, jc, nc;
};

// The calls of one block: each A panel (packed in ap) swept past all of the B block's
// panels, B packed (pre) or in bp, whose first `packed` rows are there already (the rest are
// packed first). While they run, the calls pack `next` (the block this thread runs next, if
// any) into bp_next; returns how many of its rows they packed.
int run_block(const GemmImpl& im, const GemmArgs& g, const float* ap, const Block& cur, float* bp,
              int packed, const Block* next, float* bp_next, const PackedB* pre) {
    alignas(64) float tile[gemm_max_mr * 64];
    const auto [pc, kc, ic, mc, jc, nc] = cur;
    const bool accumulate = g.accumulate || pc > 0;
    const std::ptrdiff_t nr = im.nr;
    if (!pre && packed < kc)
        im.pack_b(g.b + (pc + packed) * g.ldb + jc, g.ldb, kc - packed, kc, nc, bp + packed * nr);
    // The block this thread runs next is packed during this block's calls: each call brings a
    // slice of its source rows into L2 (one line every `every` k steps, among the FMAs), and
    // the slice call after next packs them from there (the next one would find the last lines
    // still in flight). On a Xeon VM (AVX-512 + AMX, B from DRAM; medians of 8-12 runs
    // interleaved in one process against packing each block whole when it starts): M x 4096 x
    // 4096 on two threads 1.12x at M = 33 and 48, 1.13x at 64, 1.21x at 96, 1.09x at 128, 1.19x
    // at 192, 1.07x at 256; on one thread 1.15-1.21x at 64-256; then a line every 2 steps where
    // 4 left rows unfetched, 1.07-1.10x more at M = 33-64. perf at M = 128: pack_b 23 % of the
    // time -> 6 %. Packed whole when it starts, a block from DRAM is read at ~4.5 GB/s per
    // core, with nothing to overlap (gemm.hpp). Earlier orders had the first A panel's calls
    // pack the block from B's 32-column strips (2-5 % faster on Zen 5; here pack_b was
    // 1.06-1.42x faster), and prefetched the next block a whole column of lines per call, which
    // lost 8-32 % on Xeon VMs: likely because lines 16 KiB apart share 8 of a 2 MiB L2's 2048
    // sets, so a column of 512 evicts itself. Issued in a burst between calls instead of
    // spread, 110 prefetches cost an FMA loop ~1 us a call, as if it had read those lines at ~7
    // GB/s (harness).
    const int next_kc = next ? next->kc : 0;
    const int next_nc = next ? next->nc : 0;
    const float* next_src = next ? g.b + next->pc * g.ldb + next->jc : nullptr;
    const int next_lines = ceil_div(next_nc, gemm_line_floats);
    // Slice calls: all but each A panel's last, which prefetches the next A panel. A line every
    // 4 k steps, down to 2 where 4 would leave rows unfetched (every step was no faster); rows
    // no slice covers are packed when the block starts, as the first block is.
    const APanels panels(im, mc);
    const int a_panels = panels.count;
    const int slice_calls = a_panels * ceil_div(nc, im.nr) - (a_panels - 1);
    const int rows_wanted = ceil_div(next_kc, slice_calls);
    const int every = next ? std::clamp(kc / std::max(1, rows_wanted * next_lines),
                                        gemm_slice_every_min, gemm_slice_every_max)
                           : 0;
    const int slice_rows = next ? std::min(rows_wanted, kc / every / next_lines) : 0;
    int fetched = 0, landed = 0, copied = 0;  // rows: prefetched, two calls ago, packed
    const auto pack_rows = [&](int upto) {
        if (copied < upto)
            im.pack_b(next_src + copied * g.ldb, g.ldb, upto - copied, next_kc, next_nc,
                      bp_next + copied * nr);
        copied = upto;
    };
    for (int p = 0; p < a_panels; ++p) {
        const int ir = panels.start(p), rows = panels.rows(p);
        const float* apanel = ap + static_cast<std::ptrdiff_t>(p) * im.mr * kc;
        const auto kernel = im.kernels[static_cast<std::size_t>(rows - 1)];
        float* crow = g.c + (ic + ir) * g.ldc + jc;
        for (int jr = 0; jr < nc; jr += im.nr) {
            const int cols = std::min(im.nr, nc - jr);
            const float* bpanel =
                pre ? pre->micro_panel(jc + jr, pc) : bp + static_cast<std::ptrdiff_t>(jr) * kc;
            GemmPrefetch pf;
            if (jr + im.nr >= nc && p + 1 < a_panels) {
                // An A panel's last call brings the next A panel into L2 (one line per k),
                // from the packed block in L3.
                pf = {apanel + static_cast<std::ptrdiff_t>(im.mr) * kc, 0, 0, 1};
            } else if (slice_rows > 0 && fetched < next_kc) {
                pack_rows(landed);
                landed = fetched;
                pf = {next_src + fetched * g.ldb, g.ldb, next_lines * gemm_line_floats, every};
                fetched = std::min(next_kc, fetched + slice_rows);
            }
            float* c = crow + jr;
            if (cols == im.nr) {
                kernel(kc, apanel, bpanel, c, g.ldc, accumulate, pf);
                continue;
            }
            // Right edge: a full or narrow tile into a scratch tile, then the valid columns.
            const bool narrow = cols <= im.narrow_nr;
            (narrow ? im.narrow_kernels[static_cast<std::size_t>(rows - 1)] : kernel)(
                kc, apanel, bpanel, tile, im.nr, false, pf);
            for (int i = 0; i < rows; ++i)
                for (int j = 0; j < cols; ++j)
                    c[i * g.ldc + j] =
                        accumulate ? c[i * g.ldc + j] + tile[i * im.nr + j] : tile[i * im.nr + j];
        }
    }
    pack_rows(fetched);
    return copied;
}

bool zero_k(const GemmArgs& g) {
    if (g.k > 0) return false;
    if (!g.accumulate)
        for (int i = 0; i < g.m; ++i) std::fill(g.c + i * g.ldc, g.c + i * g.ldc + g.n, 0.0f);
    return true;
}

// A blocks of equal height (a multiple of mr, at most im.mc): one short last block would
// repack all of B for a few rows.
int a_block_rows(const GemmImpl& im, int m) {
    const int a_blocks = ceil_div(m, im.mc);
    return round_up(ceil_div(m, a_blocks), im.mr);
}

// The five loops around the micro-kernel in BLIS's order (pc, ic, jc, ir, jr), on the
// calling thread: an mc x kc block of A packed into panels of up to mr rows (in L3), a kc x nc
// block of B packed into nr-column panels (in L2), and each A panel swept past all of the B block's
// panels (gemm.hpp says why this order and these blocks). B comes packed (pre) or is packed from
// g.b once per (pc, ic, jc), once in all when the rows fit one A block: into two buffers in turn,
// each block's calls packing the next (run_block).
void blocked(const GemmImpl& im, const GemmArgs& g, float* ap, float* bp_cur, float* bp_next,
             const PackedB* pre) {
    if (zero_k(g)) return;
    const int mc_block = a_block_rows(im, g.m);
    const auto block = [&](int pc, int ic, int jc) {
        return Block{pc, std::min(im.kc, g.k - pc), ic, std::min(mc_block, g.m - ic),
                     jc, std::min(im.nc, g.n - jc)};
    };
    int packed = 0;  // rows of the current block already in bp_cur
    for (int pc = 0; pc < g.k; pc += im.kc)
        for (int ic = 0; ic < g.m; ic += mc_block) {
            const Block first = block(pc, ic, 0);
            pack_a_panels(im, g.a + ic * g.lda + pc, g.lda, first.mc, first.kc, ap);
            for (int jc = 0; jc < g.n; jc += im.nc) {
                // The next block the loops visit (its B block: the same for every A block).
                int next_pc = pc, next_jc = jc + im.nc;
                if (next_jc >= g.n) {
                    next_jc = 0;
                    if (ic + mc_block >= g.m) next_pc = pc + im.kc;
                }
                const Block next = block(next_pc, 0, next_jc);
                const bool has_next = !pre && next_pc < g.k;
                packed = run_block(im, g, ap, block(pc, ic, jc), bp_cur, packed,
                                   has_next ? &next : nullptr, bp_next, pre);
                std::swap(bp_cur, bp_next);
            }
        }
}

// Split N over threads by B blocks taken from a shared queue, for a GEMM whose rows fit one
// A block: (pc, jc) blocks in the loops' order, each thread taking the next one when it
// starts one (so its calls can pack it), and waiting, before a block, for the same columns'
// block of the k step before (C accumulates over k). The thread holding the lowest
// unfinished block never waits, so none waits for ever. With a fixed half of N each, the
// faster thread sat idle at the end for a median 5 % (M = 128 x 4096 x 4096), 26 % (256)
// and 13 % (2048) of the GEMM on a 2-vCPU Xeon VM whose host ran its vCPUs unevenly; from
// the queue, interleaved in one process against the halves: M = 48 1.02x, 64 0.99-1.07x,
// 96 1.21x, 128 1.07-1.09x, 256 1.07-1.27x, 2048 1.12x.
void blocked_shared_n(const GemmImpl& im, const GemmArgs& g, GemmWorkspace& ws, int threads) {
    if (zero_k(g)) return;
    const int n_jc = ceil_div(g.n, im.nc), n_pc = ceil_div(g.k, im.kc);
    const int total = n_pc * n_jc;
    const auto block = [&](int i) {
        const int pc = i / n_jc * im.kc, jc = i % n_jc * im.nc;
        return Block{pc, std::min(im.kc, g.k - pc), 0, g.m, jc, std::min(im.nc, g.n - jc)};
    };
    std::atomic<int> taken{0};
    // k steps finished per column block.
    std::vector<std::atomic<int>> steps_done(static_cast<std::size_t>(n_jc));  // zeros (C++20)
    run_on_threads(threads, [&](int t) {
        float* ap = ws.a_block(t);
        float* bp_cur = ws.b_panel(t, 0);
        float* bp_next = ws.b_panel(t, 1);
        int packed = 0, a_pc = -1;
        for (int i = taken.fetch_add(1); i < total;) {
            const int after = taken.fetch_add(1);
            const Block cur = block(i);
            if (cur.pc != a_pc) {
                pack_a_panels(im, g.a + cur.pc, g.lda, g.m, cur.kc, ap);
                a_pc = cur.pc;
            }
            auto& done = steps_done[static_cast<std::size_t>(i % n_jc)];
            while (done.load(std::memory_order_acquire) < i / n_jc) std::this_thread::yield();
            const Block next = block(std::min(after, total - 1));
            packed = run_block(im, g, ap, cur, bp_cur, packed, after < total ? &next : nullptr,
                               bp_next, nullptr);
            done.store(i / n_jc + 1, std::memory_order_release);
            std::swap(bp_cur, bp_next);
            i = after;
        }
    });
}

}  // namespace

std::span<const GemmImpl* const> gemm_impls() { return impls(); }

// Blocks as for fp32: a pair of bf16 is 4 bytes, like a float.
const GemmImpl* gemm_bf16_impl() {
    static const GemmImpl impl = with_blocks(gemm_avx512_bf16);
    return impl.supported(cpu_features()) ? &impl : nullptr;
}

int small_m_chunk(int m) {
    const auto floats =
        std::min<std::size_t>(cache_sizes().l1d / 2 / sizeof(float), gemm_small_m_tile_floats);
    return std::max(64, static_cast<int>(floats / static_cast<std::size_t>(m)) / 64 * 64);
}

GemmBlocks gemm_blocks(int mr, int nr) {
    const auto& caches = cache_sizes();
    constexpr int kc = 512;
    const auto panel_bytes = sizeof(float) * kc;  // one row of A or column of B in a block
    const int nc = std::max(nr, static_cast<int>(caches.l2 * 35 / 100 / panel_bytes) / nr * nr);
    const auto cpus = static_cast<std::size_t>(std::max(1, available_cpus()));
    const int mc_fit = static_cast<int>(caches.l3 / 2 / cpus / panel_bytes) / mr * mr;
    return {kc, std::clamp(mc_fit, mr, round_up(4096, mr)), nc};
}

std::string gemm_description(const GemmImpl& im) {
    const auto n = [](int v) { return std::to_string(v); };
    return std::string(im.isa) + " " + n(im.mr) + "x" + n(im.nr) +
           " micro-kernel, packed panels, kc " + n(im.kc) + ", A blocks of up to " + n(im.mc) +
           " rows (L3), B blocks of " + n(im.nc) +
           " columns (L2); M <= " + n(gemm_small_m_limit(im.mr)) + ": B unpacked, C in an L1 tile";
}

const GemmImpl& best_gemm_impl() {
    for (const auto* im : impls())
        if (im->supported(cpu_features())) return *im;
    return *impls().back();
}

std::size_t GemmWorkspace::bytes(const GemmImpl& im, int threads) {
    const auto per_thread = static_cast<std::size_t>(round_up(im.mc, im.mr)) * im.kc +
                            2 * static_cast<std::size_t>(im.kc) * round_up(im.nc, im.nr);
    return per_thread * sizeof(float) * static_cast<std::size_t>(threads);
}

GemmWorkspace::GemmWorkspace(const GemmImpl& im, int threads) {
    for (int t = 0; t < threads; ++t) {
        a_.emplace_back(static_cast<std::size_t>(round_up(im.mc, im.mr)) * im.kc);
        for (int which = 0; which < 2; ++which)
            b_.emplace_back(static_cast<std::size_t>(im.kc) * round_up(im.nc, im.nr));
    }
}

std::size_t PackedB::bytes(const GemmImpl& im, int k, int n) {
    return sizeof(float) * static_cast<std::size_t>(std::max(k, 1)) *
           round_up(std::max(n, 1), im.nr);
}

// Blocks in (jc, pc) order; block (jb, pb) holds kc_p x round_up(nc_j, nr) floats, so its
// offset is jc * K + pc * round_up(nc_j, nr) when every block before it in jc is full.
PackedB::PackedB(const GemmImpl& im, const float* b, std::ptrdiff_t ldb, int k, int n)
    : k_(k),
      n_(n),
      kc_(im.kc),
      nc_(im.nc),
      nr_(im.nr),
      data_(static_cast<std::size_t>(std::max(k, 1)) * round_up(std::max(n, 1), im.nr)) {
    for (int jc = 0; jc < n; jc += nc_) {
        const int nc = std::min(nc_, n - jc);
        for (int pc = 0; pc < k; pc += kc_) {
            const int kc = std::min(kc_, k - pc);
            im.pack_b(b + pc * ldb + jc, ldb, kc, kc, nc,
                      data_.data() + (panel(jc, pc) - data_.data()));
        }
    }
}

const float* PackedB::panel(int jc, int pc) const {
    const int nc_padded = round_up(std::min(nc_, n_ - jc), nr_);
    return data_.data() + static_cast<std::ptrdiff_t>(jc) * k_ +
           static_cast<std::ptrdiff_t>(pc) * nc_padded;
}

const float* PackedB::micro_panel(int j, int pc) const {
    const int jc = j / nc_ * nc_;
    return panel(jc, pc) + static_cast<std::ptrdiff_t>(j - jc) * std::min(kc_, k_ - pc);
}

void gemm_naive(const GemmArgs& g) {
    for (int i = 0; i < g.m; ++i)
        for (int j = 0; j < g.n; ++j) {
            float s = g.accumulate ? g.c[i * g.ldc + j] : 0.0f;
            for (int k = 0; k < g.k; ++k) s += g.a[i * g.lda + k] * g.b[k * g.ldb + j];
            g.c[i * g.ldc + j] = s;
        }
}

void gemm_optimized(const GemmImpl& im, const GemmArgs& g, GemmWorkspace& ws, int threads) {
    threads = std::clamp(threads, 1, ws.threads());
    // Decode-like: B streamed unpacked, columns split over threads (each reads its part of
    // every row of B once).
    if (g.m >= 1 && g.m <= gemm_small_m_limit(im.mr) && g.n > 0) {
        const auto kernel = im.small_m[static_cast<std::size_t>(g.m - 1)];
        const int vecs = (g.n + 63) / 64;  // split on 64-column (256-byte) boundaries
        threads = std::clamp(threads, 1, vecs);
        run_on_threads(threads, [&](int t) {
            const int n0 = std::min(g.n, 64 * (vecs * t / threads));
            const int n1 = std::min(g.n, 64 * (vecs * (t + 1) / threads));
            if (n1 > n0)
                kernel(g.a, g.lda, g.b + n0, g.ldb, g.c + n0, g.ldc, n1 - n0, g.k, g.accumulate);
        });
        return;
    }
    const int n_panels = ceil_div(g.n, im.nr);
    const int m_panels = ceil_div(g.m, im.mr);
    // Splitting N makes every thread read and pack all of A, splitting M all of B: split
    // the dimension whose operand is larger (N for decode-like GEMMs, whose B dominates; M
    // for square ones, as A's packing is a transpose and B's a copy, and for a 1x1
    // convolution, P x C by C x C), when each thread gets at least two panels. Two threads
    // packing each B block together into one shared buffer (half each, then a wait) was no
    // faster on a Zen 5 guest (512-4096 and the batch sweep, within the noise, 1024^3 1-3%
    // slower): each thread then reads the other's half from the other core.
    const bool m_ok = m_panels >= 2 * threads, n_ok = n_panels >= 2 * threads;
    const bool split_n = n_ok && !(m_ok && g.m >= g.n);
    if (!split_n && !m_ok) threads = 1;
    // One A block and at least two B blocks per thread: the shared queue (blocked_shared_n).
    if (split_n && threads > 1 && a_block_rows(im, g.m) >= g.m &&
        ceil_div(g.n, im.nc) >= 2 * threads) {
        blocked_shared_n(im, g, ws, threads);
        return;
    }
    const auto work = [&](int t) {
        GemmArgs sub = g;
        if (split_n) {
            const int p0 = n_panels * t / threads, p1 = n_panels * (t + 1) / threads;
            const int n0 = p0 * im.nr, n1 = std::min(g.n, p1 * im.nr);
            sub.b = g.b + n0;
            sub.c = g.c + n0;
            sub.n = n1 - n0;
        } else {
            const int p0 = m_panels * t / threads, p1 = m_panels * (t + 1) / threads;
            const int m0 = p0 * im.mr, m1 = std::min(g.m, p1 * im.mr);
            sub.a = g.a + m0 * g.lda;
            sub.c = g.c + m0 * g.ldc;
            sub.m = m1 - m0;
        }
        if (sub.m <= 0 || sub.n <= 0) return;
        blocked(im, sub, ws.a_block(t), ws.b_panel(t, 0), ws.b_panel(t, 1), nullptr);
    };
    run_on_threads(threads, work);
}

void gemm_tile_loop(const GemmImpl& im, const float* ap, const float* bp, int k, float* c,
                    int repeats, int threads) {
    const auto kernel = im.kernels[static_cast<std::size_t>(im.mr - 1)];
    run_on_threads(threads, [&](int t) {
        float* tile = c + static_cast<std::ptrdiff_t>(t) * im.mr * im.nr;
        // Nothing to prefetch (GemmPrefetch{}): in the GEMM most calls prefetch a line every
        // few k steps, which the loop alone leaves out.
        for (int r = repeats * t / threads; r < repeats * (t + 1) / threads; ++r)
            kernel(k, ap, bp, tile, im.nr, false, GemmPrefetch{});
    });
}

void gemm_prepacked(const GemmImpl& im, const GemmArgs& g, const PackedB& b, GemmWorkspace& ws,
                    int slot) {
    blocked(im, g, ws.a_block(slot), nullptr, nullptr, &b);
}

}  // namespace ceiling::kernels
