// Resize cases for the registry: a 1920x1080 RGB frame to a detector's 640x640 input and
// a classifier's 224x224, bilinear. Source and output (6.2 MB + 1.2 MB) fit the LLC, as a
// freshly decoded frame would be; results must be within 1 level of OpenCV's.
#include <cmath>

#include "kernels/common/array.hpp"
#include "kernels/common/check.hpp"
#include "kernels/common/family.hpp"
#include "kernels/common/libraries.hpp"
#include "kernels/common/prepared.hpp"
#include "kernels/common/random.hpp"
#include "kernels/resize/resize.hpp"

namespace ceiling::kernels {
namespace {

constexpr std::string_view kernel = "resize";
constexpr std::string_view shape_form = "WxH-WxH (source-destination) or WxH (from 1920x1080)";
constexpr std::string_view problems[] = {"bilinear"};
constexpr Offer offers[] = {
    {"bilinear", Variant::naive}, {"bilinear", Variant::optimized}, {"bilinear", Variant::library}};

ResizeShape parse(std::string_view shape) {
    const auto dash = shape.find('-');
    auto src = dash == std::string_view::npos ? std::vector<std::int64_t>{1920, 1080}
                                              : parse_dims(shape.substr(0, dash), 2);
    auto dst = parse_dims(dash == std::string_view::npos ? shape : shape.substr(dash + 1), 2);
    if (src.empty() || dst.empty()) bad_shape(kernel, shape, shape_form);
    for (auto v : {src[0], src[1], dst[0], dst[1]})
        if (v > (1 << 15)) bad_shape(kernel, shape, shape_form, "has a side above 32768");
    return {static_cast<int>(src[0]), static_cast<int>(src[1]), static_cast<int>(dst[0]),
            static_cast<int>(dst[1])};
}

// Ops: bilinear_ops_per_output per output value (registry.hpp), the convention every resize
// is counted by. The separable method does about as many: each source row the mapping reads
// resized horizontally once (3 per output column and channel), then 3 per output value to
// blend two such rows. Integer arithmetic on 8-bit data: counted as int8 work, the nearest
// roof. Bytes: the source lines the mapping reads (rows x touched 64-byte lines) and the
// output written once. E.g. 1920x1080 -> 640x640: 9.8 Mop over 6.2 MB + 1.2 MB; -> 224x224:
// 1.2 Mop over 2.6 MB + 0.15 MB.
KernelWork resize_work(const ResizeTables& t) {
    const ResizeShape& s = t.s;
    const double out_values = 3.0 * s.dst_w * s.dst_h;
    KernelWork w;
    w.precision = WorkPrecision::int8;
    w.ops = bilinear_ops_per_output * out_values;
    w.compulsory_bytes = t.source_bytes_read() + out_values;
    // Plus two horizontally resized rows (int16 RGBX) per thread: negligible.
    w.working_set_bytes = w.compulsory_bytes;
    w.written_bytes = out_values;
    return w;
}

struct Set {
    Array<std::uint8_t> src, dst;
};

std::unique_ptr<PreparedKernel> setup(ResizeShape s, Variant variant, const SetupOptions& o,
                                      int sets) {
    const int all = resolve_threads(o);
    const int threads = variant == Variant::naive ? 1 : all;
    const auto src_bytes = 3 * static_cast<std::size_t>(s.src_w) * static_cast<std::size_t>(s.src_h);
    const auto dst_bytes = 3 * static_cast<std::size_t>(s.dst_w) * static_cast<std::size_t>(s.dst_h);
    std::vector<Set> v;
    for (int i = 0; i < sets; ++i) {
        // 64 bytes of slack: the gathers read 4 bytes for the last 3-byte pixel.
        Set set{Array<std::uint8_t>(src_bytes + 64), Array<std::uint8_t>(dst_bytes)};
        if (i == 0)
            fill_uniform_uint8(set.src.data(), set.src.size(), kernel_data_seed + 1, all);
        else
            parallel_copy(set.src.data(), v[0].src.data(), set.src.bytes(), all);
        fill_zero(set.dst.data(), set.dst.bytes(), 1);
        v.push_back(std::move(set));
    }
    // The expected image: OpenCV's when built in (the yardstick), else the float
    // reference.
    auto expected = std::make_shared<std::vector<std::uint8_t>>(dst_bytes);
    if (opencv_info().available)
        OpenCvResize(s).run(v[0].src.data(), expected->data(), all);
    else
        resize_naive(s, v[0].src.data(), expected->data());
    auto k = std::make_unique<SetKernel<Set>>(threads, std::move(v));
    if (variant == Variant::naive) {
        k->run_fn = [s](Set& x) { resize_naive(s, x.src.data(), x.dst.data()); };
    } else if (variant == Variant::optimized) {
        auto t = std::make_shared<ResizeTables>(s);
        auto ws = std::make_shared<ResizeWorkspace>(*t, threads);
        const auto& impl = best_resize_impl();
        k->run_fn = [t, ws, &impl, threads](Set& x) {
            resize_optimized(impl, *t, x.src.data(), x.dst.data(), *ws, threads);
        };
    } else {
        auto cv = std::make_shared<OpenCvResize>(s);
        k->run_fn = [cv, threads](Set& x) { cv->run(x.src.data(), x.dst.data(), threads); };
    }
    const bool vs_opencv = opencv_info().available;
    k->verify_fn = [expected, vs_opencv](const Set& x) {
        ErrorCheck check(image_tolerance_levels,
                         vs_opencv ? "|out - OpenCV| levels" : "|out - float bilinear| levels");
        for (std::size_t i = 0; i < expected->size(); ++i) check.add(x.dst[i], (*expected)[i], 1.0, i);
        return check.result();
    };
    return k;
}

KernelCase make(std::string_view problem, Variant variant, std::string_view shape) {
    require_offer(kernel, offers, problem, variant);
    const ResizeShape s = parse(shape);
    KernelCase c = base_case(kernel, problem, variant,
                             dims_string({s.src_w, s.src_h}) + "-" + dims_string({s.dst_w, s.dst_h}));
    const ResizeTables t(s);
    c.work = resize_work(t);
    const double src = 3.0 * s.src_w * s.src_h, dst = 3.0 * s.dst_w * s.dst_h;
    c.bytes_per_set = static_cast<std::size_t>(src + dst + 64);
    c.fixed_bytes = static_cast<std::size_t>(dst) + 64 * static_cast<std::size_t>(s.dst_w);
    if (variant != Variant::naive) c.bytes_per_thread = 16 * static_cast<std::size_t>(t.d_row);
    c.setup = [s, variant](const SetupOptions& o, int sets) { return setup(s, variant, o, sets); };
    if (variant == Variant::naive) {
        c.implementation = "float bilinear per output value; one thread";
    } else if (variant == Variant::optimized) {
        c.implementation = std::string(best_resize_impl().isa) +
                           " separable fixed point (OpenCV's 11-bit weights), gathered pixel "
                           "pairs and vpmaddwd, rows split over threads";
    } else {
        const auto& lib = opencv_info();
        c.implementation = lib.description + ", cv::resize INTER_LINEAR";
        if (!lib.available) c.unavailable = lib.description;
    }
    return c;
}

std::vector<KernelCase> family_cases() {
    std::vector<KernelCase> out;
    for (const char* shape : {"1920x1080-640x640", "1920x1080-224x224"})
        for (Variant v : {Variant::naive, Variant::optimized, Variant::library}) {
            auto c = make("bilinear", v, shape);
            c.in_default = true;
            c.in_quick = true;
            out.push_back(std::move(c));
        }
    return out;
}

}  // namespace

const KernelFamily& resize_family() {
    static const KernelFamily f{kernel, problems, shape_form, family_cases, make};
    return f;
}

}  // namespace ceiling::kernels
