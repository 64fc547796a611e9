// GEMM cases for the registry: fp32 (naive, optimized, OpenBLAS) at square shapes and the
// batch sweep M = 1 .. 256 with N = K = 4096 (decode to prefill: bandwidth bound while B,
// 64 MiB, dominates the bytes, compute bound once 2MNK / 4(KN) = M/2 flop per byte passes
// the ridge point), bf16 (ours on AMX tiles or with vdpbf16ps, oneDNN matmul), and
// fp32-tiles / bf16-tiles: each GEMM's inner loop alone on resident panels, the ceiling its
// GEMMs are measured against (why the GEMM stops where it does: the loop itself, or the
// caches feeding it).
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "kernels/common/array.hpp"
#include "kernels/common/check.hpp"
#include "kernels/common/family.hpp"
#include "kernels/common/libraries.hpp"
#include "kernels/common/prepared.hpp"
#include "kernels/common/random.hpp"
#include "kernels/cpu_features.hpp"
#include "kernels/gemm/gemm.hpp"
#include "kernels/gemm/gemm_amx.hpp"
#include "kernels/gemm/gemm_bf16.hpp"
#include "kernels/gemm/gemm_dnnl.hpp"

namespace ceiling::kernels {
namespace {

constexpr std::string_view kernel = "gemm";
constexpr std::string_view shape_form = "MxNxK or S (square)";
constexpr std::string_view problems[] = {"fp32", "bf16", "fp32-tiles", "bf16-tiles"};
constexpr Offer offers[] = {
    {"fp32", Variant::naive},           {"fp32", Variant::optimized},
    {"fp32", Variant::library},         {"bf16", Variant::optimized},
    {"bf16", Variant::library},         {"fp32-tiles", Variant::optimized},
    {"bf16-tiles", Variant::optimized},
};

struct Dims {
    int m, n, k;
};

Dims parse(std::string_view shape) {
    auto d = parse_dims(shape);
    if (d.size() == 1) d = {d[0], d[0], d[0]};
    if (d.size() != 3) bad_shape(kernel, shape, shape_form);
    for (auto v : d)
        if (v > (1 << 30)) bad_shape(kernel, shape, shape_form, "has a dimension above 2^30");
    return {static_cast<int>(d[0]), static_cast<int>(d[1]), static_cast<int>(d[2])};
}

double mn(Dims d) { return static_cast<double>(d.m) * d.n; }
double mk(Dims d) { return static_cast<double>(d.m) * d.k; }
double kn(Dims d) { return static_cast<double>(d.k) * d.n; }

// One multiply-add per (i, j, k): 2MNK operations. A and B are read once and C written
// once (beta = 0, so C is not read): in_bytes x (MK + KN) + 4MN. Nothing else is touched,
// so the working set equals the compulsory bytes. E.g. 2048^3 fp32: 17.2 GFLOP over
// 4 x 3 x 2048^2 = 48 MiB, 341 flop/byte; M = 1, N = K = 4096: 33.6 MFLOP over 64 MiB,
// 0.5 flop/byte.
KernelWork gemm_work(Dims d, WorkPrecision p, WorkEngine e, double in_bytes) {
    KernelWork w;
    w.precision = p;
    w.engine = e;
    w.ops = 2.0 * mn(d) * d.k;
    w.compulsory_bytes = in_bytes * (mk(d) + kn(d)) + 4.0 * mn(d);
    w.working_set_bytes = w.compulsory_bytes;
    w.written_bytes = 4.0 * mn(d);  // C, fp32 in every problem
    return w;
}

// Sampled check against a double-precision reference. get_a(i, k) / get_b(k, j) return
// the inputs as the kernel saw them (bf16 values exactly), c the output.
template <typename GetA, typename GetB>
Verification verify_gemm(Dims d, GetA get_a, GetB get_b, const float* c) {
    ErrorCheck check(dot_tolerance_fp32, "|c - ref| / sum|a*b|");
    for (auto idx : sample_indices(static_cast<std::size_t>(mn(d)), 4096, kernel_data_seed)) {
        const auto i = static_cast<int>(idx / static_cast<std::size_t>(d.n));
        const auto j = static_cast<int>(idx % static_cast<std::size_t>(d.n));
        double ref = 0, scale = 0;
        for (int k = 0; k < d.k; ++k) {
            const double t = static_cast<double>(get_a(i, k)) * get_b(k, j);
            ref += t;
            scale += std::abs(t);
        }
        check.add(c[idx], ref, scale > 0 ? scale : 1.0, idx);
    }
    return check.result();
}

// The tile loops: every thread computes the same product into its own tile or block, and
// check(t) verifies thread t's. The first wrong one, else the worst.
template <typename Check>
Verification every_thread(int threads, Check check) {
    Verification worst;
    for (int t = 0; t < threads; ++t) {
        auto r = check(t);
        if (!r.ok) {
            r.detail = "thread " + std::to_string(t) + ": " + r.detail;
            return r;
        }
        if (t == 0 || r.max_error > worst.max_error) worst = r;
    }
    return worst;
}

std::size_t sz(double elems) { return static_cast<std::size_t>(elems); }

// ---- fp32 ------------------------------------------------------------------------------

struct Fp32Set {
    Array<float> a, b, c;
};

std::vector<Fp32Set> fp32_sets(Dims d, int sets, int threads) {
    std::vector<Fp32Set> v;
    for (int s = 0; s < sets; ++s) {
        Fp32Set set{Array<float>(sz(mk(d))), Array<float>(sz(kn(d))),
                    Array<float>(sz(mn(d)))};
        if (s == 0) {
            fill_uniform(set.a.data(), set.a.size(), kernel_data_seed + 1, -1, 1, threads);
            fill_uniform(set.b.data(), set.b.size(), kernel_data_seed + 2, -1, 1, threads);
        } else {
            parallel_copy(set.a.data(), v[0].a.data(), set.a.bytes(), threads);
            parallel_copy(set.b.data(), v[0].b.data(), set.b.bytes(), threads);
        }
        // NaN: an output the kernel forgets to write can never pass the check.
        fill_float(set.c.data(), set.c.size(), NAN, threads);
        v.push_back(std::move(set));
    }
    return v;
}

std::unique_ptr<PreparedKernel> setup_fp32(Dims d, Variant variant, const SetupOptions& o,
                                           int sets) {
    const int threads = variant == Variant::naive ? 1 : resolve_threads(o);
    auto k = std::make_unique<SetKernel<Fp32Set>>(threads, fp32_sets(d, sets, resolve_threads(o)));
    const auto args = [d](Fp32Set& s) {
        return GemmArgs{s.a.data(), d.k, s.b.data(), d.n, s.c.data(), d.n, d.m, d.n, d.k};
    };
    if (variant == Variant::naive) {
        k->run_fn = [args](Fp32Set& s) { gemm_naive(args(s)); };
    } else if (variant == Variant::optimized) {
        const auto& impl = best_gemm_impl();
        auto ws = std::make_shared<GemmWorkspace>(impl, threads);
        k->run_fn = [args, ws, &impl, threads](Fp32Set& s) {
            gemm_optimized(impl, args(s), *ws, threads);
        };
    } else {
        k->run_fn = [d, threads](Fp32Set& s) {
            openblas_set_threads(threads);
            openblas_sgemm(s.a.data(), s.b.data(), s.c.data(), d.m, d.n, d.k);
        };
    }
    k->verify_fn = [d](const Fp32Set& s) {
        return verify_gemm(
            d, [&](int i, int kk) { return s.a[static_cast<std::size_t>(i) * d.k + kk]; },
            [&](int kk, int j) { return s.b[static_cast<std::size_t>(kk) * d.n + j]; }, s.c.data());
    };
    return k;
}

// ---- fp32-tiles: the micro-kernel alone ------------------------------------------------

// A tile loop alone (fp32-tiles, bf16-tiles): its tile of C (M x N) over K, its operands
// resident, repeated: about 2^30 operations (2 per multiply-add) an execution, a few
// milliseconds (a few hundred microseconds on AMX).
int tile_repeats(Dims d) { return std::max(1, static_cast<int>(0x1p30 / (2.0 * d.m * d.n * d.k))); }

struct Fp32TileSet {
    Array<float> a, b;    // row-major mr x K and K x nr: what the check reads
    Array<float> ap, bp;  // the same, packed as the GEMM packs them
    Array<float> c;       // one mr x nr tile per thread
};

std::unique_ptr<PreparedKernel> setup_fp32_tiles(Dims d, const SetupOptions& o, int sets) {
    const auto& im = best_gemm_impl();
    const int repeats = tile_repeats(d);
    const int threads = std::min(resolve_threads(o), repeats);
    const auto tile = static_cast<std::size_t>(d.m) * d.n;
    std::vector<Fp32TileSet> v;
    for (int s = 0; s < sets; ++s) {
        Fp32TileSet set{Array<float>(sz(mk(d))), Array<float>(sz(kn(d))), Array<float>(sz(mk(d))),
                        Array<float>(sz(kn(d))),
                        Array<float>(tile * static_cast<std::size_t>(threads))};
        fill_uniform(set.a.data(), set.a.size(), kernel_data_seed + 1, -1, 1, 1);
        fill_uniform(set.b.data(), set.b.size(), kernel_data_seed + 2, -1, 1, 1);
        im.pack_a(set.a.data(), d.k, d.m, d.k, set.ap.data());
        im.pack_b(set.b.data(), d.n, d.k, d.k, d.n, set.bp.data());
        fill_float(set.c.data(), set.c.size(), NAN, 1);
        v.push_back(std::move(set));
    }
    auto k = std::make_unique<SetKernel<Fp32TileSet>>(threads, std::move(v));
    k->run_fn = [d, &im, repeats, threads](Fp32TileSet& s) {
        gemm_tile_loop(im, s.ap.data(), s.bp.data(), d.k, s.c.data(), repeats, threads);
    };
    k->verify_fn = [d, threads, tile](const Fp32TileSet& s) {
        return every_thread(threads, [&](int t) {
            return verify_gemm(
                d, [&](int i, int kk) { return s.a[static_cast<std::size_t>(i) * d.k + kk]; },
                [&](int kk, int j) { return s.b[static_cast<std::size_t>(kk) * d.n + j]; },
                s.c.data() + tile * static_cast<std::size_t>(t));
        });
    };
    return k;
}

// ---- bf16 ------------------------------------------------------------------------------

// A (M x K) and B (K x N) row-major bf16, c the kernel's fp32 output (ldc = N).
Verification verify_bf16_gemm(Dims d, const Array<Bf16>& a, const Array<Bf16>& b, const float* c) {
    return verify_gemm(
        d, [&](int i, int kk) { return bf16_to_float(a[static_cast<std::size_t>(i) * d.k + kk]); },
        [&](int kk, int j) { return bf16_to_float(b[static_cast<std::size_t>(kk) * d.n + j]); }, c);
}

struct Bf16Set {
    Array<Bf16> a, b;  // b: K x N row-major (the reference reads it; the kernels their packs)
    Array<float> c;
    std::unique_ptr<AmxPackedB> packed;   // optimized on AMX
    std::unique_ptr<Bf16PairedB> paired;  // optimized on AVX512-BF16
    std::unique_ptr<DnnlMatmulBf16> dnnl;
};

// The optimized bf16 GEMM: AMX tiles where the CPU has them, else vdpbf16ps on the fp32
// GEMM's loops (gemm_bf16.hpp), else none.
enum class Bf16Engine { amx, pairs, none };
Bf16Engine bf16_engine() {
    if (amx_bf16_supported()) return Bf16Engine::amx;
    return gemm_bf16_impl() ? Bf16Engine::pairs : Bf16Engine::none;
}
constexpr const char* bf16_unavailable =
    "this CPU (or its OS) offers neither AMX-BF16 tiles nor AVX512-BF16";

std::unique_ptr<PreparedKernel> setup_bf16(Dims d, Variant variant, const SetupOptions& o,
                                           int sets) {
    const Bf16Engine engine = variant == Variant::optimized ? bf16_engine() : Bf16Engine::none;
    if (variant == Variant::optimized && engine == Bf16Engine::none)
        throw KernelUnavailable(std::string("gemm/bf16: ") + bf16_unavailable);
    if (auto why = request_amx_permission(); !why.empty() && engine == Bf16Engine::amx)
        throw KernelUnavailable("gemm/bf16: " + why);
    const int threads = resolve_threads(o);
    std::vector<Bf16Set> v;
    for (int s = 0; s < sets; ++s) {
        Bf16Set set{Array<Bf16>(sz(mk(d))),
                    Array<Bf16>(sz(kn(d))),
                    Array<float>(sz(mn(d))),
                    nullptr,
                    nullptr,
                    nullptr};
        fill_uniform_bf16(set.a.data(), set.a.size(), kernel_data_seed + 1, -1, 1, threads);
        fill_uniform_bf16(set.b.data(), set.b.size(), kernel_data_seed + 2, -1, 1, threads);
        fill_float(set.c.data(), set.c.size(), NAN, threads);
        if (engine == Bf16Engine::amx)
            set.packed = std::make_unique<AmxPackedB>(set.b.data(), d.n, d.k, d.n);
        else if (engine == Bf16Engine::pairs)
            set.paired = std::make_unique<Bf16PairedB>(set.b.data(), d.n, d.k, d.n);
        else
            set.dnnl = std::make_unique<DnnlMatmulBf16>(d.m, d.n, d.k, set.b.data(), threads);
        v.push_back(std::move(set));
    }
    auto k = std::make_unique<SetKernel<Bf16Set>>(threads, std::move(v));
    if (k->set(0).dnnl) k->set_detail("oneDNN primitive " + k->set(0).dnnl->implementation());
    if (engine == Bf16Engine::amx) {
        auto ws = std::make_shared<AmxWorkspace>(d.m, d.k, threads);
        k->run_fn = [d, ws, threads](Bf16Set& s) {
            gemm_amx_bf16(s.a.data(), d.k, *s.packed, s.c.data(), d.n, d.m, *ws, threads);
        };
    } else if (engine == Bf16Engine::pairs) {
        const GemmImpl& im = *gemm_bf16_impl();
        auto ws = std::make_shared<Bf16GemmWorkspace>(im, d.m, d.k, threads);
        k->run_fn = [d, &im, ws, threads](Bf16Set& s) {
            gemm_bf16_pairs(im, s.a.data(), d.k, *s.paired, s.c.data(), d.n, d.m, *ws, threads);
        };
    } else {
        k->run_fn = [](Bf16Set& s) { s.dnnl->run(s.a.data(), s.c.data()); };
    }
    k->verify_fn = [d](const Bf16Set& s) { return verify_bf16_gemm(d, s.a, s.b, s.c.data()); };
    return k;
}

// ---- bf16-tiles: the tile loop alone ---------------------------------------------------

struct TileLoopSet {
    Array<Bf16> a, b;                     // row-major M x K and K x N: what the check reads
    Array<float> c;                       // one tile of C per thread
    std::unique_ptr<AmxPackedB> packed;   // AMX: B in tiles (A is read in place)
    Array<float> ap;                      // vdpbf16ps: A's pairs packed as the GEMM packs them
    std::unique_ptr<Bf16PairedB> paired;  // and B's pairs, one nr-column panel
};

std::unique_ptr<PreparedKernel> setup_bf16_tiles(Dims d, const SetupOptions& o, int sets) {
    const Bf16Engine engine = bf16_engine();
    if (engine == Bf16Engine::none)
        throw KernelUnavailable(std::string("gemm/bf16-tiles: ") + bf16_unavailable);
    if (auto why = request_amx_permission(); !why.empty() && engine == Bf16Engine::amx)
        throw KernelUnavailable("gemm/bf16-tiles: " + why);
    const int repeats = tile_repeats(d);
    const int threads = std::min(resolve_threads(o), repeats);
    const auto tile = static_cast<std::size_t>(d.m) * d.n;
    std::vector<TileLoopSet> v;
    for (int s = 0; s < sets; ++s) {
        TileLoopSet set{Array<Bf16>(sz(mk(d))),
                        Array<Bf16>(sz(kn(d))),
                        Array<float>(tile * static_cast<std::size_t>(threads)),
                        nullptr,
                        Array<float>(),
                        nullptr};
        fill_uniform_bf16(set.a.data(), set.a.size(), kernel_data_seed + 1, -1, 1, threads);
        fill_uniform_bf16(set.b.data(), set.b.size(), kernel_data_seed + 2, -1, 1, threads);
        fill_float(set.c.data(), set.c.size(), NAN, threads);
        if (engine == Bf16Engine::amx) {
            set.packed = std::make_unique<AmxPackedB>(set.b.data(), d.n, d.k, d.n);
        } else {
            // K is even (make() checks): A's rows are K / 2 pairs in place.
            const GemmImpl& im = *gemm_bf16_impl();
            set.ap = Array<float>(sz(mk(d)) / 2);
            im.pack_a(reinterpret_cast<const float*>(set.a.data()), d.k / 2, d.m, d.k / 2,
                      set.ap.data());
            set.paired = std::make_unique<Bf16PairedB>(set.b.data(), d.n, d.k, d.n);
        }
        v.push_back(std::move(set));
    }
    auto k = std::make_unique<SetKernel<TileLoopSet>>(threads, std::move(v));
    if (engine == Bf16Engine::amx) {
        k->run_fn = [repeats, threads](TileLoopSet& s) {
            amx_bf16_tile_loop(s.a.data(), *s.packed, s.c.data(), repeats, threads);
        };
    } else {
        const GemmImpl& im = *gemm_bf16_impl();
        k->run_fn = [d, &im, repeats, threads](TileLoopSet& s) {
            gemm_tile_loop(im, s.ap.data(), s.paired->pairs(), d.k / 2, s.c.data(), repeats,
                           threads);
        };
    }
    k->verify_fn = [d, threads, tile](const TileLoopSet& s) {
        return every_thread(threads, [&](int t) {
            return verify_bf16_gemm(d, s.a, s.b, s.c.data() + tile * static_cast<std::size_t>(t));
        });
    };
    return k;
}

// ---- cases -----------------------------------------------------------------------------

KernelCase make(std::string_view problem, Variant variant, std::string_view shape) {
    require_offer(kernel, offers, problem, variant);
    const Dims d = parse(shape);
    KernelCase c = base_case(kernel, problem, variant, dims_string({d.m, d.n, d.k}));
    if (problem == "fp32") {
        c.work = gemm_work(d, WorkPrecision::fp32, WorkEngine::vector, 4);
        c.bytes_per_set = static_cast<std::size_t>(c.work.working_set_bytes);
        c.setup = [d, variant](const SetupOptions& o, int sets) { return setup_fp32(d, variant, o, sets); };
        if (variant == Variant::naive) {
            c.implementation = "triple loop i, j, k; one thread";
        } else if (variant == Variant::optimized) {
            const auto& im = best_gemm_impl();
            c.implementation = gemm_description(im);
            c.bytes_per_thread = GemmWorkspace::bytes(im, 1);
        } else {
            const auto& lib = openblas_info();
            c.implementation = lib.description + ", cblas_sgemm";
            c.advice = lib.advice;
            if (!lib.available) c.unavailable = lib.description;
        }
    } else if (problem == "fp32-tiles") {
        const auto& im = best_gemm_impl();
        if (d.m != im.mr || d.n != im.nr || d.k < 1 || d.k > 16384)
            bad_shape(kernel, shape,
                      std::to_string(im.mr) + "x" + std::to_string(im.nr) + "xK, K <= 16384",
                      "is not one tile of this CPU's micro-kernel");
        // Per execution: the tile `repeats` times; the bytes are the packed panels once (they
        // stay resident), the working set the panels and one tile of C.
        c.work = gemm_work(d, WorkPrecision::fp32, WorkEngine::vector, 4);
        c.work.ops *= tile_repeats(d);
        c.work.compulsory_bytes = 4 * (mk(d) + kn(d) + mn(d));
        c.work.working_set_bytes = c.work.compulsory_bytes;
        c.bytes_per_set = static_cast<std::size_t>(8 * (mk(d) + kn(d)));
        c.bytes_per_thread = static_cast<std::size_t>(4 * mn(d));
        c.setup = [d](const SetupOptions& o, int sets) { return setup_fp32_tiles(d, o, sets); };
        c.implementation =
            "the fp32 GEMM's " + std::string(im.isa) + " " + std::to_string(im.mr) + "x" +
            std::to_string(im.nr) +
            " micro-kernel alone: one tile of C over K, its packed panels resident, " +
            std::to_string(tile_repeats(d)) + " times; the ceiling of that loop, not a GEMM";
    } else if (problem == "bf16-tiles") {
        // AMX: one 32 x 32 block of C (2 x 2 tiles); vdpbf16ps: the pair GEMM's mr x nr tile.
        const Bf16Engine engine = bf16_engine();
        const GemmImpl* pairs = engine == Bf16Engine::pairs ? gemm_bf16_impl() : nullptr;
        if (!pairs && (d.m != 32 || d.n != 32 || d.k % 32 != 0))
            bad_shape(kernel, shape, "32x32xK with K a multiple of 32",
                      "is not one 32 x 32 block of C over whole 32-deep tiles");
        if (pairs && (d.m != pairs->mr || d.n != pairs->nr || d.k % 2 != 0 || d.k > 32768))
            bad_shape(kernel, shape,
                      std::to_string(pairs->mr) + "x" + std::to_string(pairs->nr) +
                          "xK, K even, K <= 32768",
                      "is not one tile of this CPU's bf16-pair micro-kernel over whole pairs");
        // Per execution: the tile `repeats` times; the bytes are its operands once (they
        // stay resident: that is the point), the working set A (packed as pairs on
        // vdpbf16ps, the same bytes), packed B and one tile of C.
        const double repeats = tile_repeats(d);
        const double packed_b = pairs ? static_cast<double>(Bf16PairedB::bytes(d.k, d.n))
                                      : static_cast<double>(AmxPackedB::bytes(d.k, d.n));
        c.work =
            gemm_work(d, WorkPrecision::bf16, pairs ? WorkEngine::vector : WorkEngine::matrix, 2);
        c.work.ops *= repeats;
        c.work.working_set_bytes = 2 * mk(d) + packed_b + 4 * mn(d);
        c.bytes_per_set =  // A, B, C, packed B, and on vdpbf16ps A's packed pairs
            static_cast<std::size_t>((pairs ? 4 : 2) * mk(d) + 2 * kn(d) + 4 * mn(d) + packed_b);
        c.bytes_per_thread = static_cast<std::size_t>(4 * mn(d));
        c.setup = [d](const SetupOptions& o, int sets) { return setup_bf16_tiles(d, o, sets); };
        const std::string times = std::to_string(static_cast<int>(repeats)) +
                                  " times; the ceiling of that loop, not a GEMM";
        if (pairs)
            c.implementation = "the bf16 GEMM's vdpbf16ps " + std::to_string(pairs->mr) + "x" +
                               std::to_string(pairs->nr) +
                               " micro-kernel alone (k pairs): one tile of C over K, its packed "
                               "panels resident, " +
                               times;
        else
            c.implementation =
                "the bf16 GEMM's tile loop alone (2x2 blocks of 16x16 fp32 C tiles, "
                "tdpbf16ps): one 32x32 block of C over K, its panels resident, " +
                times;
        if (engine == Bf16Engine::none) c.unavailable = bf16_unavailable;
    } else {
        // oneDNN's matmul, like ours, runs on AMX where there is AMX.
        const bool amx = bf16_engine() == Bf16Engine::amx;
        c.work = gemm_work(d, WorkPrecision::bf16, amx ? WorkEngine::matrix : WorkEngine::vector, 2);
        // Per set: A, B, C and B's packed copy (AMX tiles, k pairs or oneDNN's layout; AMX's
        // tiles, padded to 32 x 32, are the largest).
        c.bytes_per_set = static_cast<std::size_t>(c.work.working_set_bytes) + AmxPackedB::bytes(d.k, d.n);
        c.setup = [d, variant](const SetupOptions& o, int sets) { return setup_bf16(d, variant, o, sets); };
        if (variant == Variant::optimized) {
            switch (bf16_engine()) {
                case Bf16Engine::amx:
                    c.implementation =
                        "AMX tiles, 2x2 blocks of 16x16 fp32 C tiles, tdpbf16ps; B pre-packed";
                    c.fixed_bytes = AmxWorkspace::bytes(d.m, d.k, 0);
                    c.bytes_per_thread = AmxWorkspace::bytes(1, 1, 1);
                    break;
                case Bf16Engine::pairs: {
                    const GemmImpl& im = *gemm_bf16_impl();
                    c.implementation =
                        "vdpbf16ps on k pairs, the fp32 GEMM's loops over pairs (kc in pairs): " +
                        gemm_description(im) + "; B pre-interleaved into k pairs";
                    c.fixed_bytes = Bf16GemmWorkspace::bytes(im, d.m, d.k, 0);
                    c.bytes_per_thread = GemmWorkspace::bytes(im, 1);
                    break;
                }
                case Bf16Engine::none:  // described all the same: what runs where it can
                    c.implementation =
                        "AMX tiles (tdpbf16ps) or vdpbf16ps on k pairs, whichever the CPU has";
                    c.unavailable = bf16_unavailable;
                    break;
            }
        } else {
            const auto& lib = dnnl_info();
            c.implementation = lib.description + ", matmul bf16 x bf16 -> f32";
            if (!lib.available) c.unavailable = lib.description;
        }
    }
    return c;
}

// Naive GEMM runs ~1 GFLOP/s: 512 (0.27 GFLOP) keeps the suite short; 1024 on request.
// OpenBLAS at 4096 only on request too: with Debian's default core choice (Prescott, on
// an AVX-512 CPU) one run takes ~17 s here, which would blow the default suite's budget;
// 2048 (2.4 s) already shows the trap.
constexpr StandardCase standard[] = {
    {"fp32", Variant::naive, "512", true, true},
    {"fp32", Variant::naive, "1024", false, false},
    {"fp32", Variant::optimized, "512", true, false},
    {"fp32", Variant::optimized, "1024", true, false},
    {"fp32", Variant::optimized, "2048", true, true},
    {"fp32", Variant::optimized, "4096", true, false},
    {"fp32", Variant::library, "512", true, false},
    {"fp32", Variant::library, "1024", true, false},
    {"fp32", Variant::library, "2048", true, true},
    {"fp32", Variant::library, "4096", false, false},
    {"bf16", Variant::optimized, "2048", true, true},
    {"bf16", Variant::optimized, "4096", true, false},
    {"bf16", Variant::library, "2048", true, true},
    {"bf16", Variant::library, "4096", true, false},
};
// Batch sweep M = 1, 2, 4 .. 256 at N = K = 4096; quick keeps every other point.
constexpr int batch_n_k = 4096;
constexpr int batch_max_m = 256;

// The micro-kernel alone at two depths: K = 128, its panels in L1 (AVX-512's 14 x 32 tile:
// 23 KiB; every x86 core since 2011 has at least 32 KiB of L1d), and the GEMM's own kc,
// as each call in the GEMM runs it (14 x 32 x 512: 92 KiB, from L2).
constexpr int tile_k_l1 = 128;

std::vector<KernelCase> family_cases() {
    std::vector<KernelCase> out = cases_of(standard, make);
    const auto& im = best_gemm_impl();
    for (int k : {tile_k_l1, im.kc}) {
        auto c = make("fp32-tiles", Variant::optimized, dims_string({im.mr, im.nr, k}));
        c.in_default = true;
        c.in_quick = k == tile_k_l1;
        out.push_back(std::move(c));
    }
    // The bf16 loop likewise. AMX: one 32 x 32 block with its panels in L1 (A and packed B
    // 16 KiB each) and in L2 (256 KiB each, as in the 4096 GEMM, whose A rows are 8 KiB
    // apart); where neither AMX nor AVX512-BF16 is here, those shapes say so. vdpbf16ps: the
    // tile at K = 256 (7 + 16 KiB, in L1) and at the GEMM's kc pairs (from L2).
    std::vector<std::string> bf16_tiles = {"32x32x256", "32x32x4096"};
    if (const GemmImpl* pairs = bf16_engine() == Bf16Engine::pairs ? gemm_bf16_impl() : nullptr)
        bf16_tiles = {dims_string({pairs->mr, pairs->nr, 2 * tile_k_l1}),
                      dims_string({pairs->mr, pairs->nr, 2 * pairs->kc})};
    for (const auto& shape : bf16_tiles) {
        auto c = make("bf16-tiles", Variant::optimized, shape);
        c.in_default = true;
        c.in_quick = shape == bf16_tiles.front();
        out.push_back(std::move(c));
    }
    for (Variant v : {Variant::optimized, Variant::library})
        for (int m = 1, i = 0; m <= batch_max_m; m *= 2, ++i) {
            auto c = make("fp32", v, dims_string({m, batch_n_k, batch_n_k}));
            c.series = "batch";
            c.in_default = true;
            c.in_quick = i % 2 == 0;
            out.push_back(std::move(c));
        }
    return out;
}

}  // namespace

const KernelFamily& gemm_family() {
    static const KernelFamily f{kernel, problems, shape_form, family_cases, make};
    return f;
}

}  // namespace ceiling::kernels
