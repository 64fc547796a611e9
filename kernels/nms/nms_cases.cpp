// NMS cases for the registry: 10,000 detector-like boxes clustered in a 1920x1080 frame
// (fixed seed), greedy IoU 0.5; "greedy" takes every positive score, "prefilter" only
// scores above 0.25 first (a typical confidence threshold: the "change the problem"
// lever, fewer candidates and the same boxes kept among them).
#include <map>
#include <mutex>

#include "kernels/common/check.hpp"
#include "kernels/common/family.hpp"
#include "kernels/common/libraries.hpp"
#include "kernels/common/prepared.hpp"
#include "kernels/common/random.hpp"
#include "kernels/nms/nms.hpp"

namespace ceiling::kernels {
namespace {

constexpr std::string_view kernel = "nms";
constexpr std::string_view shape_form = "N (boxes in a 1920x1080 frame)";
constexpr std::string_view problems[] = {"greedy", "prefilter"};
constexpr Offer offers[] = {
    {"greedy", Variant::naive},    {"greedy", Variant::optimized},    {"greedy", Variant::library},
    {"prefilter", Variant::naive}, {"prefilter", Variant::optimized}, {"prefilter", Variant::library},
};
constexpr float prefilter_threshold = 0.25f;
float threshold(std::string_view problem) { return problem == "prefilter" ? prefilter_threshold : 0.0f; }

// Per candidate-versus-kept test: 4 min/max for the intersection's corners, 2
// subtractions, 2 clamps at 0, 1 multiply (intersection area), 1 add (the two areas),
// 2 for 3 x intersection and 1 compare: 13 integer operations on 32-bit lanes.
constexpr double ops_per_test = 13;

// The problem's data and its answer, made once per (n, problem): the work depends on
// the data (how many tests the greedy algorithm needs), so the case needs it too.
struct Problem {
    std::vector<Box> boxes;
    std::vector<float> scores;
    std::vector<int> keep;       // the reference answer
    std::size_t tests = 0;       // candidate-versus-kept tests the reference made
    std::size_t candidates = 0;  // scores above the threshold
};

std::shared_ptr<const Problem> problem_data(std::size_t n, std::string_view problem) {
    static std::mutex m;
    static std::map<std::pair<std::size_t, float>, std::shared_ptr<const Problem>> cache;
    const float t = threshold(problem);
    std::lock_guard lock(m);
    auto& slot = cache[{n, t}];
    if (!slot) {
        auto p = std::make_shared<Problem>();
        generate_boxes(n, kernel_data_seed, p->boxes, p->scores);
        nms_reference(p->boxes, p->scores, t, p->keep, &p->tests);
        for (float s : p->scores) p->candidates += s > t ? 1 : 0;
        slot = std::move(p);
    }
    return slot;
}

// ops: 13 per test the greedy algorithm with early exit must make (data-dependent,
// counted by the reference); the naive variant makes many more, which is its loss.
// Precision fp32 and the vector engine: the integer lanes use the same ports, and no
// int32 roof is measured. Bytes: boxes (16 B) and scores (4 B) read once, kept indices
// (4 B) written once; the working set adds the sort keys (2 x 8 B per box) and the kept
// boxes' corners (20 B each).
KernelWork nms_work(const Problem& p) {
    const double n = static_cast<double>(p.boxes.size()), kept = static_cast<double>(p.keep.size());
    KernelWork w;
    w.ops = ops_per_test * static_cast<double>(p.tests);
    w.compulsory_bytes = 20 * n + 4 * kept;
    w.working_set_bytes = w.compulsory_bytes + 16 * n + 20 * kept;
    w.written_bytes = 4 * kept;
    return w;
}

Verification compare(const std::vector<int>& got, const std::vector<int>& expected) {
    Verification v;
    v.tolerance = 0;
    std::size_t diff = 0, first = std::min(got.size(), expected.size());
    for (std::size_t i = 0; i < std::min(got.size(), expected.size()); ++i)
        if (got[i] != expected[i]) {
            if (diff++ == 0) first = i;
        }
    diff += std::max(got.size(), expected.size()) - std::min(got.size(), expected.size());
    v.max_error = static_cast<double>(diff);
    v.ok = diff == 0;
    v.detail = "kept " + std::to_string(got.size()) + " boxes, expected " +
               std::to_string(expected.size()) + " (max error: positions that differ)";
    if (!v.ok && first < got.size() && first < expected.size())
        v.detail += "; first difference at position " + std::to_string(first) + ": box " +
                    std::to_string(got[first]) + " instead of " + std::to_string(expected[first]);
    return v;
}

struct Set {
    std::vector<int> keep;
};

std::unique_ptr<PreparedKernel> setup(std::shared_ptr<const Problem> p, std::string problem,
                                      Variant variant) {
    const float t = threshold(problem);
    std::vector<Set> sets(1);
    sets[0].keep.reserve(p->boxes.size());
    auto k = std::make_unique<SetKernel<Set>>(1, std::move(sets));
    if (variant == Variant::naive) {
        k->run_fn = [p, t](Set& s) { nms_naive(p->boxes, p->scores, t, s.keep); };
    } else if (variant == Variant::optimized) {
        auto ws = std::make_shared<NmsWorkspace>(p->boxes.size());
        const auto& impl = best_nms_impl();
        k->run_fn = [p, t, ws, &impl](Set& s) { nms_optimized(impl, p->boxes, p->scores, t, s.keep, *ws); };
    } else {
        auto cv = std::make_shared<OpenCvNms>(p->boxes, p->scores, t);
        k->run_fn = [p, cv](Set& s) { cv->run(s.keep); };
    }
    k->verify_fn = [p](const Set& s) { return compare(s.keep, p->keep); };
    return k;
}

KernelCase make(std::string_view problem, Variant variant, std::string_view shape) {
    require_offer(kernel, offers, problem, variant);
    const auto d = parse_dims(shape, 1);
    if (d.empty()) bad_shape(kernel, shape, shape_form);
    if (d[0] > (1 << 24)) bad_shape(kernel, shape, shape_form, "has more than 2^24 boxes");
    const auto n = static_cast<std::size_t>(d[0]);
    KernelCase c = base_case(kernel, problem, variant, std::to_string(n));
    // Greedy NMS is sequential (each decision needs the previous ones): one thread for all.
    c.multithreaded = false;
    auto p = problem_data(n, problem);
    c.work = nms_work(*p);
    c.bytes_per_set = 4 * n;
    c.fixed_bytes = static_cast<std::size_t>(c.work.working_set_bytes);
    const std::string pr(problem);
    c.setup = [p, pr, variant](const SetupOptions&, int) { return setup(p, pr, variant); };
    if (variant == Variant::naive) {
        c.implementation = "while boxes remain: take the best, drop its overlaps (IoU in double)";
    } else if (variant == Variant::optimized) {
        c.implementation = "radix sort of scores, then " + std::string(best_nms_impl().isa) +
                           " exact integer IoU test against the kept boxes, first overlap exits";
    } else {
        const auto& lib = opencv_info();
        c.implementation = lib.description + ", cv::dnn::NMSBoxes";
        if (!lib.available) c.unavailable = lib.description;
    }
    return c;
}

std::vector<KernelCase> family_cases() {
    std::vector<KernelCase> out;
    for (std::string_view problem : problems)
        for (Variant v : {Variant::naive, Variant::optimized, Variant::library}) {
            auto c = make(problem, v, "10000");
            c.in_default = true;
            c.in_quick = problem == "greedy" || v == Variant::optimized;
            out.push_back(std::move(c));
        }
    return out;
}

}  // namespace

const KernelFamily& nms_family() {
    static const KernelFamily f{kernel, problems, shape_form, family_cases, make};
    return f;
}

}  // namespace ceiling::kernels
