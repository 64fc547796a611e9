#include "kernels/gemm/gemm.hpp"

#include <algorithm>
#include <string>

#include "kernels/parallel.hpp"

namespace ceiling::kernels {

// Constants of the ISA files, without cache blocks (make_gemm_impl, gemm_impl.hpp).
extern const GemmImpl gemm_avx512;
extern const GemmImpl gemm_avx2;
extern const GemmImpl gemm_scalar;

namespace {

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

int round_up(int x, int m) { return (x + m - 1) / m * m; }

// The five loops around the micro-kernel in BLIS's order (pc, ic, jc, ir, jr), on the
// calling thread: an mc x kc block of A packed into mr-row panels (in L3), a kc x nc block
// of B packed into nr-column panels (in L2), and each A panel swept past all of the B
// block's panels (gemm.hpp says why this order and these blocks). B comes packed (pre) or is
// packed from g.b into bp once per (pc, ic, jc): once in all when the rows fit one A block.
void blocked(const GemmImpl& im, const GemmArgs& g, float* ap, float* bp, const PackedB* pre) {
    alignas(64) float tile[gemm_max_mr * 64];
    if (g.k == 0) {
        if (!g.accumulate)
            for (int i = 0; i < g.m; ++i) std::fill(g.c + i * g.ldc, g.c + i * g.ldc + g.n, 0.0f);
        return;
    }
    constexpr int line_floats = 64 / sizeof(float);
    // A blocks of equal height (a multiple of mr, at most im.mc): one short last block would
    // repack all of B for a few rows.
    const int a_blocks = (g.m + im.mc - 1) / im.mc;
    const int mc_block = round_up((g.m + a_blocks - 1) / a_blocks, im.mr);
    for (int pc = 0; pc < g.k; pc += im.kc) {
        const int kc = std::min(im.kc, g.k - pc);
        const bool accumulate = g.accumulate || pc > 0;
        for (int ic = 0; ic < g.m; ic += mc_block) {
            const int mc = std::min(mc_block, g.m - ic);
            im.pack_a(g.a + ic * g.lda + pc, g.lda, mc, kc, ap);
            for (int jc = 0; jc < g.n; jc += im.nc) {
                const int nc = std::min(im.nc, g.n - jc);
                // The whole block packed before its calls, row by row (pack_b: 22 lines of
                // each row in turn). The order before this one had the first A panel's calls
                // pack it, each reading its 32-column strip of B's rows (16 KiB apart) and
                // storing the packed panel as it went; with B from DRAM this one is faster on
                // a Xeon VM (AVX-512 + AMX; medians of 8-15 runs interleaved in one process):
                // M x 4096 x 4096 on two threads 1.42x at M = 33, 1.21x at 48, 1.17x at 64,
                // 1.23x at 96, 1.07-1.11x at 128, 1.12x at 192, 1.06x at 256, on one thread
                // 1.08-1.16x; the squares 1.00-1.04x. perf at M = 128: the strips read B at
                // ~3.5 GB/s per core, pack_b at ~7.5. On Zen 5 (one thread, an earlier loop
                // order) the strips had been 2-5% faster; not measured there since.
                if (!pre) im.pack_b(g.b + pc * g.ldb + jc, g.ldb, kc, nc, bp);
                // Nothing prefetches the next B block's source: it cost more than it hid on
                // Intel. Done by the calls of each block spread evenly (one column of lines,
                // kc rows ldb apart, per call), it had gained 5-7% on Zen 5 with B (64 MiB)
                // from DRAM (64 and 128 x 4096 x 4096 1.22-1.25 and 1.09-1.10 of OpenBLAS ->
                // 1.30-1.32 and 1.15-1.17, one thread). On Xeon VMs (AVX-512 + AMX, one
                // thread, against OpenBLAS in one process) it lost wherever B came from: 8-32%
                // with B in a 504 MiB L3, and with B from DRAM behind a 105 MiB L3 as slow as
                // DRAM, 64 / 128 / 256 x 4096 x 4096 0.82-0.91 / 0.88-0.93 / 0.91-0.98 with it
                // against 1.22-1.53 / 1.17-1.29 / 1.10-1.14 without (three runs each). Fewer
                // prefetches per call (a quarter or an eighth of a column) or lines walked in
                // row order (contiguous segments, the pattern that reads B's 32-column strips
                // at 8 GB/s where whole-column strips read 4.5) were no better than none.
                for (int ir = 0; ir < mc; ir += im.mr) {
                    const int rows = std::min(im.mr, mc - ir);
                    const float* apanel = ap + static_cast<std::ptrdiff_t>(ir) * kc;
                    const auto kernel = im.kernels[static_cast<std::size_t>(rows - 1)];
                    float* crow = g.c + (ic + ir) * g.ldc + jc;
                    for (int jr = 0; jr < nc; jr += im.nr) {
                        const int nr = std::min(im.nr, nc - jr);
                        float* own_panel =
                            pre ? nullptr : bp + static_cast<std::ptrdiff_t>(jr) * kc;
                        const float* bpanel = pre ? pre->micro_panel(jc + jr, pc) : own_panel;
                        // An A panel's last call brings the next A panel into L2 (one line per
                        // k), from the packed block in L3.
                        const bool pf_a = jr + im.nr >= nc && ir + im.mr < mc;
                        const float* pf_at =
                            pf_a ? apanel + static_cast<std::ptrdiff_t>(im.mr) * kc : bpanel;
                        const std::ptrdiff_t pf_ld = pf_a ? line_floats : 0;
                        float* c = crow + jr;
                        if (nr == im.nr) {
                            kernel(kc, apanel, bpanel, c, g.ldc, accumulate, pf_at, pf_ld);
                            continue;
                        }
                        // Right edge: a full or narrow tile into a scratch tile, then the
                        // valid columns.
                        const bool narrow = nr <= im.narrow_nr;
                        (narrow ? im.narrow_kernels[static_cast<std::size_t>(rows - 1)] : kernel)(
                            kc, apanel, bpanel, tile, im.nr, false, pf_at, pf_ld);
                        for (int i = 0; i < rows; ++i)
                            for (int j = 0; j < nr; ++j)
                                c[i * g.ldc + j] = accumulate
                                                       ? c[i * g.ldc + j] + tile[i * im.nr + j]
                                                       : tile[i * im.nr + j];
                    }
                }
            }
        }
    }
}

}  // namespace

std::span<const GemmImpl* const> gemm_impls() { return impls(); }

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
           " rows (L3), B blocks of " + n(im.nc) + " columns (L2); M <= " + n(gemm_small_m) +
           ": B unpacked, C in an L1 tile";
}

const GemmImpl& best_gemm_impl() {
    for (const auto* im : impls())
        if (im->supported(cpu_features())) return *im;
    return *impls().back();
}

std::size_t GemmWorkspace::bytes(const GemmImpl& im, int threads) {
    const auto per_thread = static_cast<std::size_t>(round_up(im.mc, im.mr)) * im.kc +
                            static_cast<std::size_t>(im.kc) * round_up(im.nc, im.nr);
    return per_thread * sizeof(float) * static_cast<std::size_t>(threads);
}

GemmWorkspace::GemmWorkspace(const GemmImpl& im, int threads) {
    for (int t = 0; t < threads; ++t) {
        a_.emplace_back(static_cast<std::size_t>(round_up(im.mc, im.mr)) * im.kc);
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
            im.pack_b(b + pc * ldb + jc, ldb, kc, nc,
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
    if (g.m >= 1 && g.m <= gemm_small_m && g.n > 0) {
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
    const int n_panels = (g.n + im.nr - 1) / im.nr;
    const int m_panels = (g.m + im.mr - 1) / im.mr;
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
        blocked(im, sub, ws.a_block(t), ws.b_panel(t), nullptr);
    };
    run_on_threads(threads, work);
}

void gemm_tile_loop(const GemmImpl& im, const float* ap, const float* bp, int k, float* c,
                    int repeats, int threads) {
    const auto kernel = im.kernels[static_cast<std::size_t>(im.mr - 1)];
    run_on_threads(threads, [&](int t) {
        float* tile = c + static_cast<std::ptrdiff_t>(t) * im.mr * im.nr;
        // Its one prefetch per k goes to the B panel itself (resident: costs a load slot, as
        // in the GEMM, and fetches nothing).
        for (int r = repeats * t / threads; r < repeats * (t + 1) / threads; ++r)
            kernel(k, ap, bp, tile, im.nr, false, bp, 0);
    });
}

void gemm_prepacked(const GemmImpl& im, const GemmArgs& g, const PackedB& b, GemmWorkspace& ws,
                    int slot) {
    blocked(im, g, ws.a_block(slot), nullptr, &b);
}

}  // namespace ceiling::kernels
