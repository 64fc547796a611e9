// Convolution cases for the registry: depthwise, dense and depthwise-separable 3x3,
// NHWC fp32, at N=8 H=W=112 C=128 (a MobileNet stage: 49 MiB in and out, DRAM-sized)
// and N=1 H=W=56 C=256 (3 MiB each way: cache-sized). Same channels in all three, so the
// suite can set the flops ratio (dense / separable = 9C / (9 + C)) beside the time ratio.
#include <cmath>

#include "kernels/common/array.hpp"
#include "kernels/common/check.hpp"
#include "kernels/common/family.hpp"
#include "kernels/common/libraries.hpp"
#include "kernels/common/prepared.hpp"
#include "kernels/common/random.hpp"
#include "kernels/conv/conv.hpp"
#include "kernels/conv/conv_dnnl.hpp"

namespace ceiling::kernels {
namespace {

constexpr std::string_view kernel = "conv";
constexpr std::string_view shape_form = "NxHxWxC (NHWC; 3x3, stride 1, pad 1, C in = C out)";
constexpr std::string_view problems[] = {"depthwise", "dense", "separable"};
constexpr Offer offers[] = {
    {"depthwise", Variant::naive}, {"depthwise", Variant::optimized}, {"depthwise", Variant::library},
    {"dense", Variant::naive},     {"dense", Variant::optimized},     {"dense", Variant::library},
    {"separable", Variant::naive}, {"separable", Variant::optimized}, {"separable", Variant::library},
};

ConvShape parse(std::string_view shape) {
    const auto d = parse_dims(shape, 4);
    if (d.empty()) bad_shape(kernel, shape, shape_form);
    for (auto v : d)
        if (v > (1 << 20)) bad_shape(kernel, shape, shape_form, "has a dimension above 2^20");
    return {static_cast<int>(d[0]), static_cast<int>(d[1]), static_cast<int>(d[2]),
            static_cast<int>(d[3])};
}

// Weights per problem (floats): depthwise 9C, dense 9C^2, separable 9C + C^2.
double weight_floats(std::string_view problem, double c) {
    return problem == "depthwise" ? 9 * c : problem == "dense" ? 9 * c * c : 9 * c + c * c;
}

// P = N H W output pixels, each with C channels. Multiply-adds per output: depthwise 9,
// dense 9C, separable 9 + C (9 for the depthwise stage, C for the 1x1), all 9 taps
// counted as frameworks count them (the zero-padded border taps are 3.5% of them at
// 112 x 112). Bytes: input and output once (4PC each) and the weights; the separable
// pair's intermediate (4PC) is in the working set but not compulsory (a fused
// implementation would never write it). E.g. 8x112x112x128: P = 100352; depthwise
// 231 MFLOP over 98 MiB (2.25 flop/byte); dense 29.6 GFLOP (128x the depthwise);
// separable 3.52 GFLOP: dense / separable = 9 x 128 / 137 = 8.4x fewer flops.
KernelWork conv_work(ConvShape s, std::string_view problem) {
    const double p = static_cast<double>(s.pixels()), c = s.c;
    const double macs = problem == "depthwise" ? 9 : problem == "dense" ? 9 * c : 9 + c;
    KernelWork w;
    w.ops = 2 * macs * c * p;
    w.compulsory_bytes = 4 * (2 * p * c + weight_floats(problem, c));
    w.working_set_bytes = w.compulsory_bytes + (problem == "separable" ? 4 * p * c : 0);
    w.written_bytes = 4 * p * c;  // the output
    return w;
}

struct Set {
    Array<float> in, out, mid;  // mid: the separable pair's depthwise output
};

// Weights: depthwise [kh][kw][c] at wt, dense [kh][kw][ci][co] at wt, separable the
// depthwise ones at wt and the 1x1 [ci][co] at wt + 9C.
struct Weights {
    Array<float> data;
};

struct Reference {
    ConvShape s;
    const float* in;
    const float* wt;
    // Depthwise output (p, ch) in double, and the sum of its terms' magnitudes.
    void depthwise(std::size_t p, int ch, double& v, double& mag) const {
        const int w = static_cast<int>(p % static_cast<std::size_t>(s.w));
        const int h = static_cast<int>(p / static_cast<std::size_t>(s.w) % static_cast<std::size_t>(s.h));
        v = mag = 0;
        for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 3; ++kw) {
                const int y = h + kh - 1, x = w + kw - 1;
                if (y < 0 || y >= s.h || x < 0 || x >= s.w) continue;
                const auto q = static_cast<std::ptrdiff_t>(p) + (kh - 1) * s.w + (kw - 1);
                const double t = static_cast<double>(in[q * s.c + ch]) * wt[(kh * 3 + kw) * s.c + ch];
                v += t;
                mag += std::abs(t);
            }
    }
    void dense(std::size_t p, int co, double& v, double& mag) const {
        const int w = static_cast<int>(p % static_cast<std::size_t>(s.w));
        const int h = static_cast<int>(p / static_cast<std::size_t>(s.w) % static_cast<std::size_t>(s.h));
        v = mag = 0;
        for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 3; ++kw) {
                const int y = h + kh - 1, x = w + kw - 1;
                if (y < 0 || y >= s.h || x < 0 || x >= s.w) continue;
                const auto q = static_cast<std::ptrdiff_t>(p) + (kh - 1) * s.w + (kw - 1);
                for (int ci = 0; ci < s.c; ++ci) {
                    const double t = static_cast<double>(in[q * s.c + ci]) *
                                     wt[((kh * 3 + kw) * s.c + ci) * s.c + co];
                    v += t;
                    mag += std::abs(t);
                }
            }
    }
    // The 1x1 over the exact depthwise output; the magnitude bounds both stages' rounding.
    void separable(std::size_t p, int co, double& v, double& mag) const {
        const float* pw = wt + 9 * s.c;
        v = mag = 0;
        for (int ci = 0; ci < s.c; ++ci) {
            double d, dm;
            depthwise(p, ci, d, dm);
            v += d * pw[ci * s.c + co];
            mag += dm * std::abs(pw[ci * s.c + co]);
        }
    }
};

Verification verify_conv(std::string_view problem, ConvShape s, const float* in, const float* wt,
                         const float* out) {
    const Reference ref{s, in, wt};
    ErrorCheck check(dot_tolerance_fp32, "|out - ref| / sum|in*w|");
    // Fewer samples for the dense and separable checks: each costs 9C (or 9C) terms.
    const std::size_t samples = problem == "depthwise" ? 8192 : 2048;
    for (auto idx : sample_indices(s.elements(), samples, kernel_data_seed)) {
        const std::size_t p = idx / static_cast<std::size_t>(s.c);
        const int ch = static_cast<int>(idx % static_cast<std::size_t>(s.c));
        double v = 0, mag = 0;
        if (problem == "depthwise")
            ref.depthwise(p, ch, v, mag);
        else if (problem == "dense")
            ref.dense(p, ch, v, mag);
        else
            ref.separable(p, ch, v, mag);
        check.add(out[idx], v, mag > 0 ? mag : 1.0, idx);
    }
    return check.result();
}

std::unique_ptr<PreparedKernel> setup(ConvShape s, std::string problem, Variant variant,
                                      const SetupOptions& o, int sets, double working_set) {
    const int all = resolve_threads(o);
    const int threads = variant == Variant::naive ? 1 : all;
    const bool separable = problem == "separable";
    auto weights = std::make_shared<Weights>(
        Weights{Array<float>(static_cast<std::size_t>(weight_floats(problem, s.c)))});
    // Weights ~ U(-1, 1) / sqrt(fan-in) keep outputs of order 1 whatever C is.
    const float depth_scale = 1.0f / 3.0f;
    const float dense_scale = 1.0f / std::sqrt(9.0f * static_cast<float>(s.c));
    if (problem == "dense") {
        fill_uniform(weights->data.data(), weights->data.size(), kernel_data_seed + 3, -dense_scale,
                     dense_scale, 1);
    } else {
        fill_uniform(weights->data.data(), 9 * static_cast<std::size_t>(s.c), kernel_data_seed + 3,
                     -depth_scale, depth_scale, 1);
        if (separable) {
            const float pw = 1.0f / std::sqrt(static_cast<float>(s.c));
            fill_uniform(weights->data.data() + 9 * s.c, static_cast<std::size_t>(s.c) * s.c,
                         kernel_data_seed + 4, -pw, pw, 1);
        }
    }
    std::vector<Set> v;
    for (int i = 0; i < sets; ++i) {
        Set set{Array<float>(s.elements()), Array<float>(s.elements()),
                Array<float>(separable ? s.elements() : 0)};
        if (i == 0)
            fill_uniform(set.in.data(), set.in.size(), kernel_data_seed + 1, -1, 1, all);
        else
            parallel_copy(set.in.data(), v[0].in.data(), set.in.bytes(), all);
        fill_float(set.out.data(), set.out.size(), NAN, all);
        if (separable) fill_zero(set.mid.data(), set.mid.bytes(), all);
        v.push_back(std::move(set));
    }
    auto k = std::make_unique<SetKernel<Set>>(threads, std::move(v));
    const float* wt = weights->data.data();
    const float* pw = wt + 9 * s.c;
    // Non-temporal output stores when the output cannot stay in cache anyway.
    const bool stream = working_set >= static_cast<double>(o.last_level_cache_bytes);
    const auto& dw = best_depthwise_impl();
    const auto& gemm = best_gemm_impl();
    if (variant == Variant::naive) {
        if (problem == "depthwise")
            k->run_fn = [weights, s](Set& x) { depthwise_naive(x.in.data(), weights->data.data(), x.out.data(), s); };
        else if (problem == "dense")
            k->run_fn = [weights, s](Set& x) { dense_naive(x.in.data(), weights->data.data(), x.out.data(), s); };
        else
            k->run_fn = [weights, s, wt, pw](Set& x) {
                depthwise_naive(x.in.data(), wt, x.mid.data(), s);
                const int p = static_cast<int>(s.pixels());
                gemm_naive({x.mid.data(), s.c, pw, s.c, x.out.data(), s.c, p, s.c, s.c});
            };
    } else if (variant == Variant::optimized) {
        if (problem == "depthwise") {
            k->run_fn = [weights, s, &dw, threads, stream](Set& x) {
                depthwise_optimized(dw, x.in.data(), weights->data.data(), x.out.data(), s, threads, stream);
            };
        } else if (problem == "dense") {
            auto conv = std::make_shared<DenseConv>(gemm, wt, s.c, threads);
            k->run_fn = [weights, conv, s, threads](Set& x) { conv->run(x.in.data(), x.out.data(), s, threads); };
        } else {
            auto ws = std::make_shared<GemmWorkspace>(gemm, threads);
            k->run_fn = [weights, ws, s, &dw, &gemm, threads, stream, wt, pw](Set& x) {
                depthwise_optimized(dw, x.in.data(), wt, x.mid.data(), s, threads, stream);
                pointwise_optimized(gemm, x.mid.data(), pw, x.out.data(), s, *ws, threads);
            };
        }
    } else {
        if (problem == "separable") {
            auto d1 = std::make_shared<DnnlConv>(DnnlConvKind::depthwise, s, wt, threads);
            auto d2 = std::make_shared<DnnlConv>(DnnlConvKind::pointwise, s, pw, threads);
            k->set_detail("oneDNN primitives " + d1->implementation() + " + " + d2->implementation());
            k->run_fn = [weights, d1, d2](Set& x) {
                d1->run(x.in.data(), x.mid.data());
                d2->run(x.mid.data(), x.out.data());
            };
        } else {
            const auto kind = problem == "depthwise" ? DnnlConvKind::depthwise : DnnlConvKind::dense;
            auto d = std::make_shared<DnnlConv>(kind, s, wt, threads);
            k->set_detail("oneDNN primitive " + d->implementation());
            k->run_fn = [weights, d](Set& x) { d->run(x.in.data(), x.out.data()); };
        }
    }
    k->verify_fn = [weights, problem, s](const Set& x) {
        return verify_conv(problem, s, x.in.data(), weights->data.data(), x.out.data());
    };
    return k;
}

KernelCase make(std::string_view problem, Variant variant, std::string_view shape) {
    require_offer(kernel, offers, problem, variant);
    const ConvShape s = parse(shape);
    KernelCase c = base_case(kernel, problem, variant, dims_string({s.n, s.h, s.w, s.c}));
    c.work = conv_work(s, problem);
    const double weights = 4 * weight_floats(problem, s.c);
    c.bytes_per_set = static_cast<std::size_t>(c.work.working_set_bytes - weights);
    c.fixed_bytes = static_cast<std::size_t>(weights);
    const std::string p(problem);
    const double ws = c.work.working_set_bytes;
    c.setup = [s, p, variant, ws](const SetupOptions& o, int sets) {
        return setup(s, p, variant, o, sets, ws);
    };
    const auto& gemm = best_gemm_impl();
    if (variant == Variant::naive) {
        c.implementation = "direct loops with bounds checks; one thread";
    } else if (variant == Variant::optimized) {
        const std::string dw = std::string(best_depthwise_impl().isa) +
                               " depthwise over channel vectors in strips of 4-8 pixels (by C), rows split over threads, "
                               "non-temporal output stores when DRAM-sized";
        const std::string gm = std::string(gemm.isa) + " GEMM micro-kernel";
        c.implementation = problem == "depthwise" ? dw
                           : problem == "dense"   ? "9 shifted GEMMs per output row (" + gm + ", taps pre-packed)"
                                                  : dw + "; then 1x1 as a GEMM (" + gm + ")";
        if (problem != "depthwise")
            c.fixed_bytes += problem == "dense" ? 9 * PackedB::bytes(gemm, s.c, s.c) : 0;
        if (problem != "depthwise") c.bytes_per_thread = GemmWorkspace::bytes(gemm, 1);
    } else {
        const auto& lib = dnnl_info();
        c.implementation = lib.description + (problem == "separable" ? ", two convolution primitives"
                                                                     : ", convolution primitive");
        if (!lib.available) c.unavailable = lib.description;
        c.fixed_bytes += static_cast<std::size_t>(weights);  // oneDNN's reordered copy
    }
    return c;
}

// Naive dense runs ~1 GFLOP/s: 29.6 GFLOP at 8x112x112x128 would take half a minute, so
// it is only offered on request.
constexpr StandardCase standard[] = {
    {"depthwise", Variant::naive, "8x112x112x128", true, false},
    {"depthwise", Variant::optimized, "8x112x112x128", true, true},
    {"depthwise", Variant::library, "8x112x112x128", true, true},
    {"dense", Variant::optimized, "8x112x112x128", true, false},
    {"dense", Variant::library, "8x112x112x128", true, false},
    {"separable", Variant::optimized, "8x112x112x128", true, false},
    {"separable", Variant::library, "8x112x112x128", true, false},
    {"depthwise", Variant::naive, "1x56x56x256", true, true},
    {"depthwise", Variant::optimized, "1x56x56x256", true, true},
    {"depthwise", Variant::library, "1x56x56x256", true, true},
    {"dense", Variant::naive, "1x56x56x256", false, false},
    {"dense", Variant::optimized, "1x56x56x256", true, true},
    {"dense", Variant::library, "1x56x56x256", true, true},
    {"separable", Variant::naive, "1x56x56x256", false, false},
    {"separable", Variant::optimized, "1x56x56x256", true, true},
    {"separable", Variant::library, "1x56x56x256", true, true},
};

std::vector<KernelCase> family_cases() {
    return cases_of(standard, make);
}

}  // namespace

const KernelFamily& conv_family() {
    static const KernelFamily f{kernel, problems, shape_form, family_cases, make};
    return f;
}

}  // namespace ceiling::kernels
