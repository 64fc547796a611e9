#include "kernels/gemm/gemm.hpp"

#include <algorithm>
#include <string>

#include "kernels/parallel.hpp"

namespace ceiling::kernels {

extern const GemmImpl gemm_avx512;
extern const GemmImpl gemm_avx2;
extern const GemmImpl gemm_scalar;

namespace {

const std::array<const GemmImpl*, 3> impls = {&gemm_avx512, &gemm_avx2, &gemm_scalar};

int round_up(int x, int m) { return (x + m - 1) / m * m; }

// Packs columns [q0, q1) of a kc-row slice of B (q0 a multiple of nr) into their panels
// of the packed block bp (panel q at bp + q * kc).
void pack_b_columns(const GemmImpl& im, const float* b, std::ptrdiff_t ldb, int kc, int q0, int q1,
                    float* bp) {
    im.pack_b(b + q0, ldb, kc, q1 - q0, bp + static_cast<std::ptrdiff_t>(q0) * kc);
}

// B panels packed per group, just before the first A block uses them, while the group
// after is prefetched by the micro-kernel calls on this one (one line per k step, a
// column of lines down the kc rows per call): packing all of a block first ran B's DRAM
// stream (a copy at 10-13 GB/s on one core) and the FMAs one after the other, 6% of
// 256 x 4096 x 4096 and 25% of 64 x 4096 x 4096. Panels per group: the group packed and
// the group prefetched in a quarter of L2, beside the A block's 60% (two 64 KiB panels at
// kc = 512 with a 1 MiB L2).
int pack_group_panels(const GemmImpl& im, int kc) {
    const auto panel_bytes = sizeof(float) * static_cast<std::size_t>(kc) * static_cast<std::size_t>(im.nr);
    return std::max(1, static_cast<int>(cache_sizes().l2 / 8 / panel_bytes));
}

// Rows (of one thread) up to which blocked() runs half as deep and twice as tall.
int shallow_rows(const GemmImpl& im) { return 2 * im.mc; }

// The five loops around the micro-kernel (jc, pc, ic, jr, ir), on the calling thread.
// B comes packed (pre) or is packed from g.b into bp, group by group during the first A
// block of each (jc, pc) and reused by the others.
void blocked(const GemmImpl& im, const GemmArgs& g, float* ap, float* bp, const PackedB* pre) {
    alignas(64) float tile[gemm_max_mr * 64];
    if (g.k == 0) {
        if (!g.accumulate)
            for (int i = 0; i < g.m; ++i)
                std::fill(g.c + i * g.ldc, g.c + i * g.ldc + g.n, 0.0f);
        return;
    }
    constexpr int line_floats = 64 / sizeof(float);
    // Half as deep and twice as tall (the same A buffer) when the rows fit one such block,
    // as in the batch sweep's M x 4096 x 4096: each B panel then serves few A tiles and B's
    // stream weighs more than C's updates (measured on Zen 4 when the full depth was 1024:
    // M = 64-256 2.5-10% faster at 512; 512-4096 square 1.5-4% slower; at the full depth of
    // 512 on Zen 5 the batch sweep's M = 64-256 run at 1.07-1.38x OpenBLAS this way). A
    // packed B keeps the depth it was packed at.
    const bool shallow = !pre && g.m <= shallow_rows(im);
    const int kc_block = shallow ? std::max(1, im.kc / 2) : im.kc;
    const int mc_block = shallow ? 2 * im.mc : im.mc;
    for (int jc = 0; jc < g.n; jc += im.nc) {
        const int nc = std::min(im.nc, g.n - jc);
        for (int pc = 0; pc < g.k; pc += kc_block) {
            const int kc = std::min(kc_block, g.k - pc);
            const float* bsrc = pre ? nullptr : g.b + pc * g.ldb + jc;
            const float* block = pre ? pre->panel(jc, pc) : bp;
            const bool accumulate = g.accumulate || pc > 0;
            for (int ic = 0; ic < g.m; ic += mc_block) {
                const int mc = std::min(mc_block, g.m - ic);
                im.pack_a(g.a + ic * g.lda + pc, g.lda, mc, kc, ap);
                const bool packing = bsrc && ic == 0;
                const int group = packing ? pack_group_panels(im, kc) * im.nr : nc;
                if (packing) pack_b_columns(im, bsrc, g.ldb, kc, 0, std::min(group, nc), bp);
                // The next A block's rows (this pc's next ic, else the next pc's first) are
                // prefetched into L2, one row's kc floats per call over this block's last
                // calls (when a call is not prefetching B): packing an A block from L3 or
                // DRAM otherwise stalls the core while nothing computes. Interleaved in one
                // process on Zen 4, B and A cold: 512^3 +1.5-2 %, 64-128 x 4096 x 4096 +2.4-4 %
                // on two threads, 2048-4096 within +-1 %.
                const float* a_next = nullptr;
                int a_next_rows = 0;
                if (ic + mc < g.m) {
                    a_next = g.a + (ic + mc) * g.lda + pc;
                    a_next_rows = std::min(mc_block, g.m - ic - mc);
                } else if (g.k - pc - kc >= kc) {  // (a shorter last kc: its rows are not prefetched)
                    a_next = g.a + pc + kc;
                    a_next_rows = std::min(mc_block, g.m);
                }
                const int block_calls = (nc + im.nr - 1) / im.nr * ((mc + im.mr - 1) / im.mr);
                const int a_first_call = std::max(0, block_calls - a_next_rows);
                int block_call = 0;
                for (int g0 = 0; g0 < nc; g0 += group) {
                    const int g1 = std::min(nc, g0 + group);
                    // The next group's lines of one row, prefetched one column of lines per call.
                    const int next_lines = packing ? (std::min(nc, g1 + group) - g1 + line_floats - 1) / line_floats : 0;
                    int call = 0;
                    for (int jr = g0; jr < g1; jr += im.nr) {
                        const int nr = std::min(im.nr, nc - jr);
                        const float* bpanel = block + static_cast<std::ptrdiff_t>(jr) * kc;
                        for (int ir = 0; ir < mc; ir += im.mr, ++call, ++block_call) {
                            const int rows = std::min(im.mr, mc - ir);
                            const float* apanel = ap + static_cast<std::ptrdiff_t>(ir) * kc;
                            float* c = g.c + (ic + ir) * g.ldc + jc + jr;
                            const bool pf = call < next_lines;
                            const int a_row = block_call - a_first_call;
                            const bool pfa = !pf && a_row >= 0 && a_row < a_next_rows;
                            const float* pf_at = pf ? bsrc + g1 + call * line_floats
                                                    : pfa ? a_next + a_row * g.lda : bpanel;
                            const std::ptrdiff_t pf_ld = pf ? g.ldb : pfa ? 1 : 0;
                            const auto kernel = im.kernels[static_cast<std::size_t>(rows - 1)];
                            if (nr == im.nr) {
                                kernel(kc, apanel, bpanel, c, g.ldc, accumulate, pf_at, pf_ld);
                                continue;
                            }
                            // Right edge: the full tile into a scratch tile, then the valid columns.
                            kernel(kc, apanel, bpanel, tile, im.nr, false, pf_at, pf_ld);
                            for (int i = 0; i < rows; ++i)
                                for (int j = 0; j < nr; ++j)
                                    c[i * g.ldc + j] = accumulate ? c[i * g.ldc + j] + tile[i * im.nr + j]
                                                                  : tile[i * im.nr + j];
                        }
                    }
                    if (packing && g1 < nc) pack_b_columns(im, bsrc, g.ldb, kc, g1, std::min(nc, g1 + group), bp);
                }
            }
        }
    }
}

}  // namespace

std::span<const GemmImpl* const> gemm_impls() { return impls; }

int small_m_chunk(int m) {
    const auto floats = std::min<std::size_t>(cache_sizes().l1d / 2 / sizeof(float), gemm_small_m_tile_floats);
    return std::max(64, static_cast<int>(floats / static_cast<std::size_t>(m)) / 64 * 64);
}

GemmBlocks gemm_blocks(int mr, int nr) {
    const auto& caches = cache_sizes();
    constexpr int kc = 512;
    const auto panel_bytes = sizeof(float) * kc;  // one row of A or column of B in a block
    const int mc = std::max(1, static_cast<int>(caches.l2 * 6 / 10 / panel_bytes) / mr) * mr;
    const auto cpus = static_cast<std::size_t>(std::max(1, available_cpus()));
    const int nc_fit = static_cast<int>(caches.l3 / 2 / cpus / panel_bytes) / nr * nr;
    return {kc, mc, std::clamp(nc_fit, nr, 4096 / nr * nr)};
}

std::string gemm_description(const GemmImpl& im) {
    const auto n = [](int v) { return std::to_string(v); };
    return std::string(im.isa) + " " + n(im.mr) + "x" + n(im.nr) + " micro-kernel, packed panels, blocks kc " +
           n(im.kc) + " mc " + n(im.mc) + " nc " + n(im.nc) + " (kc " + n(im.kc / 2) + " mc " +
           n(2 * im.mc) + " when a thread's rows are at most " + n(shallow_rows(im)) + "); M <= " +
           n(gemm_small_m) + ": B unpacked, C in an L1 tile";
}

const GemmImpl& best_gemm_impl() {
    for (const auto* im : impls)
        if (im->supported(cpu_features())) return *im;
    return gemm_scalar;
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
    return sizeof(float) * static_cast<std::size_t>(std::max(k, 1)) * round_up(std::max(n, 1), im.nr);
}

// Blocks in (jc, pc) order; block (jb, pb) holds kc_p x round_up(nc_j, nr) floats, so its
// offset is jc * K + pc * round_up(nc_j, nr) when every block before it in jc is full.
PackedB::PackedB(const GemmImpl& im, const float* b, std::ptrdiff_t ldb, int k, int n)
    : k_(k), n_(n), kc_(im.kc), nc_(im.nc), nr_(im.nr),
      data_(static_cast<std::size_t>(std::max(k, 1)) * round_up(std::max(n, 1), im.nr)) {
    for (int jc = 0; jc < n; jc += nc_) {
        const int nc = std::min(nc_, n - jc);
        for (int pc = 0; pc < k; pc += kc_) {
            const int kc = std::min(kc_, k - pc);
            im.pack_b(b + pc * ldb + jc, ldb, kc, nc, data_.data() + (panel(jc, pc) - data_.data()));
        }
    }
}

const float* PackedB::panel(int jc, int pc) const {
    const int nc_padded = round_up(std::min(nc_, n_ - jc), nr_);
    return data_.data() + static_cast<std::ptrdiff_t>(jc) * k_ +
           static_cast<std::ptrdiff_t>(pc) * nc_padded;
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
            if (n1 > n0) kernel(g.a, g.lda, g.b + n0, g.ldb, g.c + n0, g.ldc, n1 - n0, g.k, g.accumulate);
        });
        return;
    }
    const int n_panels = (g.n + im.nr - 1) / im.nr;
    const int m_panels = (g.m + im.mr - 1) / im.mr;
    // Splitting N makes every thread read and pack all of A, splitting M all of B: split
    // the dimension whose operand is larger (N for decode-like GEMMs, whose B dominates; M
    // for square ones, as A's packing is a transpose and B's a copy, and for a 1x1
    // convolution, P x C by C x C), when each thread gets at least two panels.
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

void gemm_prepacked(const GemmImpl& im, const GemmArgs& g, const PackedB& b, GemmWorkspace& ws,
                    int slot) {
    blocked(im, g, ws.a_block(slot), nullptr, &b);
}

}  // namespace ceiling::kernels
