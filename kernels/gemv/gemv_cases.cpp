// GEMV cases for the registry: y = W x with W fp32, bf16 or int8 (per-row fp32 scales),
// fp32 activations and accumulation. M = K = 16384: W is 1 GiB / 512 MiB / 256 MiB, far
// beyond the last-level cache, so every run streams W from DRAM; 4096 (64 / 32 / 16 MiB)
// as the contrast that may live in the LLC (the working set says which, per machine).
#include <cmath>

#include "kernels/common/array.hpp"
#include "kernels/common/check.hpp"
#include "kernels/common/family.hpp"
#include "kernels/common/libraries.hpp"
#include "kernels/common/prepared.hpp"
#include "kernels/common/random.hpp"
#include "kernels/gemv/gemv.hpp"

namespace ceiling::kernels {
namespace {

constexpr std::string_view kernel = "gemv";
constexpr std::string_view shape_form = "MxK or S (square)";
constexpr std::string_view problems[] = {"fp32", "bf16", "int8"};
constexpr Offer offers[] = {
    {"fp32", Variant::naive}, {"fp32", Variant::optimized}, {"fp32", Variant::library},
    {"bf16", Variant::naive}, {"bf16", Variant::optimized},
    {"int8", Variant::naive}, {"int8", Variant::optimized},
};

struct Dims {
    int m, k;
};

Dims parse(std::string_view shape) {
    auto d = parse_dims(shape);
    if (d.size() == 1) d = {d[0], d[0]};
    if (d.size() != 2) bad_shape(kernel, shape, shape_form);
    for (auto v : d)
        if (v > (1 << 30)) bad_shape(kernel, shape, shape_form, "has a dimension above 2^30");
    return {static_cast<int>(d[0]), static_cast<int>(d[1])};
}

// Bytes per weight, per problem.
double weight_bytes(std::string_view problem) {
    return problem == "fp32" ? 4.0 : problem == "bf16" ? 2.0 : 1.0;
}

// One multiply-add per weight: 2MK operations, all fp32 (bf16 and int8 weights are widened
// to fp32 in registers: weight-only quantisation changes the bytes, not the arithmetic).
// Bytes: W once (MK x bytes per weight), x once (4K), y written once (4M), and for int8
// the per-row scales (4M). E.g. fp32 16384^2: 0.537 GFLOP over 1 GiB + 128 KiB,
// 0.5 flop/byte; int8: the same flops over 256 MiB + 192 KiB, ~2 flop/byte.
KernelWork gemv_work(Dims d, std::string_view problem) {
    KernelWork w;
    w.precision = WorkPrecision::fp32;
    w.engine = WorkEngine::vector;
    const double mk = static_cast<double>(d.m) * d.k;
    w.ops = 2.0 * mk;
    w.compulsory_bytes = mk * weight_bytes(problem) + 4.0 * d.k + 4.0 * d.m +
                         (problem == "int8" ? 4.0 * d.m : 0.0);
    w.working_set_bytes = w.compulsory_bytes;
    w.written_bytes = 4.0 * d.m;  // y
    return w;
}

template <typename W>
struct Set {
    Array<W> w;
    Array<float> x, y, scale;
};

// Row i's reference in double; scale = sum |w x| (for int8 times the row scale).
template <typename W, typename Get>
Verification verify_gemv(Dims d, const Set<W>& s, Get get_w) {
    ErrorCheck check(dot_tolerance_fp32, "|y - ref| / sum|w*x|");
    for (auto i : sample_indices(static_cast<std::size_t>(d.m), 2048, kernel_data_seed)) {
        double ref = 0, scale = 0;
        const std::size_t row = i * static_cast<std::size_t>(d.k);
        for (int j = 0; j < d.k; ++j) {
            const double t = static_cast<double>(get_w(s.w[row + j])) * s.x[j];
            ref += t;
            scale += std::abs(t);
        }
        const double row_scale = s.scale.size() ? s.scale[i] : 1.0;
        check.add(s.y[i], ref * row_scale, (scale > 0 ? scale : 1.0) * row_scale, i);
    }
    return check.result();
}

template <typename W>
std::vector<Set<W>> make_sets(Dims d, int sets, int threads, bool scales) {
    const auto mk = static_cast<std::size_t>(d.m) * static_cast<std::size_t>(d.k);
    std::vector<Set<W>> v;
    for (int s = 0; s < sets; ++s) {
        Set<W> set{Array<W>(mk), Array<float>(static_cast<std::size_t>(d.k)),
                   Array<float>(static_cast<std::size_t>(d.m)),
                   Array<float>(scales ? static_cast<std::size_t>(d.m) : 0)};
        if (s > 0) {
            parallel_copy(set.w.data(), v[0].w.data(), set.w.bytes(), threads);
        } else if constexpr (std::is_same_v<W, float>) {
            fill_uniform(set.w.data(), mk, kernel_data_seed + 1, -1, 1, threads);
        } else if constexpr (std::is_same_v<W, Bf16>) {
            fill_uniform_bf16(set.w.data(), mk, kernel_data_seed + 1, -1, 1, threads);
        } else {
            fill_uniform_int8(set.w.data(), mk, kernel_data_seed + 1, -127, 127, threads);
        }
        fill_uniform(set.x.data(), set.x.size(), kernel_data_seed + 2, -1, 1, 1);
        // Scales as a quantiser would pick them for weights of magnitude up to ~1: 1/127 x
        // a per-row spread.
        if (scales) fill_uniform(set.scale.data(), set.scale.size(), kernel_data_seed + 3, 0.004f, 0.012f, 1);
        fill_float(set.y.data(), set.y.size(), NAN, 1);
        v.push_back(std::move(set));
    }
    return v;
}

std::unique_ptr<PreparedKernel> setup(Dims d, std::string_view problem, Variant variant,
                                      const SetupOptions& o, int sets) {
    const int all = resolve_threads(o);
    const int threads = variant == Variant::naive ? 1 : all;
    const auto& im = best_gemv_impl();
    if (problem == "fp32") {
        auto k = std::make_unique<SetKernel<Set<float>>>(threads, make_sets<float>(d, sets, all, false));
        using Run = void (*)(const GemvImpl&, Set<float>&, Dims, int);
        static constexpr Run runs[] = {
            [](const GemvImpl&, Set<float>& s, Dims dd, int) {
                gemv_naive_fp32(s.w.data(), s.x.data(), s.y.data(), dd.m, dd.k);
            },
            [](const GemvImpl& i, Set<float>& s, Dims dd, int t) {
                gemv_fp32(i, s.w.data(), s.x.data(), s.y.data(), dd.m, dd.k, t);
            },
            [](const GemvImpl&, Set<float>& s, Dims dd, int t) {
                openblas_set_threads(t);
                openblas_sgemv(s.w.data(), s.x.data(), s.y.data(), dd.m, dd.k);
            },
        };
        const Run run = runs[static_cast<std::size_t>(variant)];
        k->run_fn = [run, &im, d, threads](Set<float>& s) { run(im, s, d, threads); };
        k->verify_fn = [d](const Set<float>& s) { return verify_gemv(d, s, [](float w) { return w; }); };
        return k;
    }
    if (problem == "bf16") {
        auto k = std::make_unique<SetKernel<Set<Bf16>>>(threads, make_sets<Bf16>(d, sets, all, false));
        if (variant == Variant::naive)
            k->run_fn = [d](Set<Bf16>& s) { gemv_naive_bf16(s.w.data(), s.x.data(), s.y.data(), d.m, d.k); };
        else
            k->run_fn = [&im, d, threads](Set<Bf16>& s) {
                gemv_bf16(im, s.w.data(), s.x.data(), s.y.data(), d.m, d.k, threads);
            };
        k->verify_fn = [d](const Set<Bf16>& s) { return verify_gemv(d, s, bf16_to_float); };
        return k;
    }
    auto k = std::make_unique<SetKernel<Set<std::int8_t>>>(threads, make_sets<std::int8_t>(d, sets, all, true));
    if (variant == Variant::naive)
        k->run_fn = [d](Set<std::int8_t>& s) {
            gemv_naive_int8(s.w.data(), s.scale.data(), s.x.data(), s.y.data(), d.m, d.k);
        };
    else
        k->run_fn = [&im, d, threads](Set<std::int8_t>& s) {
            gemv_int8(im, s.w.data(), s.scale.data(), s.x.data(), s.y.data(), d.m, d.k, threads);
        };
    k->verify_fn = [d](const Set<std::int8_t>& s) {
        return verify_gemv(d, s, [](std::int8_t w) { return static_cast<float>(w); });
    };
    return k;
}

KernelCase make(std::string_view problem, Variant variant, std::string_view shape) {
    require_offer(kernel, offers, problem, variant);
    const Dims d = parse(shape);
    KernelCase c = base_case(kernel, problem, variant, dims_string({d.m, d.k}));
    c.work = gemv_work(d, problem);
    c.bytes_per_set = static_cast<std::size_t>(c.work.working_set_bytes);
    const std::string p(problem);
    c.setup = [d, p, variant](const SetupOptions& o, int sets) { return setup(d, p, variant, o, sets); };
    if (variant == Variant::naive) {
        c.implementation = "one accumulator per row, k in order; one thread";
    } else if (variant == Variant::optimized) {
        const auto& im = best_gemv_impl();
        const std::string isa(im.isa);
        const std::string ahead = ", W prefetched " + std::to_string(im.prefetch_bytes) +
                                  " bytes ahead into L2; fp32 FMAs, rows split over threads";
        if (p == "fp32")
            c.implementation = isa + ", " + std::to_string(im.fp32_rows) + " rows x " +
                               std::to_string(im.fp32_vecs) +
                               " vectors of fp32 FMAs per step, rows split over threads";
        else if (p == "bf16" && im.bf16_method == Bf16Method::dot)
            c.implementation = isa + ", " + std::to_string(im.bf16_rows) +
                               " rows per step, vdpbf16ps on each line of bf16 weights against x "
                               "split into two bf16 parts (16 of its 24 mantissa bits), W "
                               "prefetched " +
                               std::to_string(im.prefetch_bytes) +
                               " bytes ahead into L2; fp32 sums, rows split over threads";
        else if (p == "bf16" && im.bf16_method == Bf16Method::halves)
            c.implementation = isa + ", " + std::to_string(im.bf16_rows) +
                               " rows per step, each load of bf16 weights split into even and odd "
                               "fp32 halves (shift, mask) against a deinterleaved x" +
                               ahead;
        else if (p == "bf16")
            c.implementation = isa + ", bf16 weights widened to fp32 in registers" + ahead;
        else if (im.int8_method == Int8Method::vnni)
            c.implementation = isa + ", " + std::to_string(im.int8_rows) +
                               " rows per step, vpdpbusd on each line of int8 weights against x "
                               "split into three 8-bit parts (to 2^-22 of max|x|), W prefetched " +
                               std::to_string(im.prefetch_bytes) +
                               " bytes ahead into L2; int32 sums, a scale per row, rows split "
                               "over threads";
        else
            c.implementation = isa + ", " + std::to_string(im.int8_rows) + " rows x " +
                               std::to_string(im.int8_vecs) +
                               " vectors of int8 weights per step, widened to fp32 in registers, "
                               "a scale per row" +
                               ahead;
    } else {
        const auto& lib = openblas_info();
        c.implementation = lib.description + ", cblas_sgemv";
        c.advice = lib.advice;
        if (!lib.available) c.unavailable = lib.description;
    }
    return c;
}

constexpr StandardCase standard[] = {
    {"fp32", Variant::naive, "16384", true, false},
    {"fp32", Variant::optimized, "16384", true, true},
    {"fp32", Variant::library, "16384", true, true},
    {"bf16", Variant::naive, "16384", true, false},
    {"bf16", Variant::optimized, "16384", true, true},
    {"int8", Variant::naive, "16384", true, false},
    {"int8", Variant::optimized, "16384", true, true},
    {"fp32", Variant::naive, "4096", true, true},
    {"fp32", Variant::optimized, "4096", true, true},
    {"fp32", Variant::library, "4096", true, false},
    {"bf16", Variant::naive, "4096", false, false},
    {"bf16", Variant::optimized, "4096", true, false},
    {"int8", Variant::naive, "4096", false, false},
    {"int8", Variant::optimized, "4096", true, false},
};

std::vector<KernelCase> family_cases() {
    return cases_of(standard, make);
}

}  // namespace

const KernelFamily& gemv_family() {
    static const KernelFamily f{kernel, problems, shape_form, family_cases, make};
    return f;
}

}  // namespace ceiling::kernels
