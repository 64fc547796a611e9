#include "kernels/nms/nms.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

#include "kernels/common/random.hpp"

namespace ceiling::kernels {

extern const NmsImpl nms_avx512;
extern const NmsImpl nms_avx2;
extern const NmsImpl nms_scalar;

namespace {

const std::array<const NmsImpl*, 3> impls = {&nms_avx512, &nms_avx2, &nms_scalar};

// Padding after the last kept box: a vector load at any index < count stays in bounds.
constexpr std::size_t kept_padding = 16;

struct Corners {
    std::int32_t x1, y1, x2, y2, area;
};
Corners corners(const Box& b) { return {b.x, b.y, b.x + b.w, b.y + b.h, b.w * b.h}; }

// The exact integer test of nms.hpp: IoU > 1/2, or two empty boxes.
bool overlaps(const Corners& a, const Corners& b) {
    const std::int64_t iw = std::max(0, std::min(a.x2, b.x2) - std::max(a.x1, b.x1));
    const std::int64_t ih = std::max(0, std::min(a.y2, b.y2) - std::max(a.y1, b.y1));
    const std::int64_t sum = std::int64_t{a.area} + b.area;
    return 3 * iw * ih > sum || sum == 0;
}

// Candidates (score > threshold) in decreasing score, ties in index order.
void sorted_candidates(std::span<const float> scores, float threshold, std::vector<int>& order) {
    order.clear();
    for (std::size_t i = 0; i < scores.size(); ++i)
        if (scores[i] > threshold) order.push_back(static_cast<int>(i));
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return scores[static_cast<std::size_t>(a)] > scores[static_cast<std::size_t>(b)];
    });
}

}  // namespace

NmsKept::NmsKept(std::size_t capacity) { reserve(capacity); }

void NmsKept::reserve(std::size_t capacity) {
    for (auto* v : {&x1, &y1, &x2, &y2, &area}) v->assign(capacity + kept_padding, 0);
}

NmsWorkspace::NmsWorkspace(std::size_t n) : order(n), tmp(n), kept(n) {}

std::span<const NmsImpl* const> nms_impls() { return impls; }

const NmsImpl& best_nms_impl() {
    for (const auto* im : impls)
        if (im->supported(cpu_features())) return *im;
    return nms_scalar;
}

void generate_boxes(std::size_t n, std::uint64_t seed, std::vector<Box>& boxes,
                    std::vector<float>& scores) {
    boxes.resize(n);
    scores.resize(n);
    const std::size_t objects = std::max<std::size_t>(1, n / 50);
    const std::size_t background = n / 10;
    std::uint64_t i = 0;
    const auto uniform = [&](float lo, float hi) { return random_float(seed, i++, lo, hi); };
    std::vector<Box> object(objects);
    std::vector<float> confidence(objects);
    for (std::size_t o = 0; o < objects; ++o) {
        const int w = static_cast<int>(uniform(24, 320)), h = static_cast<int>(uniform(24, 320));
        object[o] = {static_cast<int>(uniform(0, static_cast<float>(nms_frame_width - w))),
                     static_cast<int>(uniform(0, static_cast<float>(nms_frame_height - h))), w, h};
        confidence[o] = uniform(0.3f, 1.0f);
    }
    const auto clip = [](int v, int lo, int hi) { return std::clamp(v, lo, hi); };
    for (std::size_t b = 0; b < n; ++b) {
        if (b < n - background) {
            const std::size_t o = b % objects;
            const Box& ob = object[o];
            const float jx = uniform(-0.25f, 0.25f) * static_cast<float>(ob.w);
            const float jy = uniform(-0.25f, 0.25f) * static_cast<float>(ob.h);
            int w = static_cast<int>(static_cast<float>(ob.w) * uniform(0.75f, 1.3f));
            int h = static_cast<int>(static_cast<float>(ob.h) * uniform(0.75f, 1.3f));
            w = clip(w, 4, nms_frame_width);
            h = clip(h, 4, nms_frame_height);
            const int x = clip(ob.x + static_cast<int>(jx) + (ob.w - w) / 2, 0, nms_frame_width - w);
            const int y = clip(ob.y + static_cast<int>(jy) + (ob.h - h) / 2, 0, nms_frame_height - h);
            boxes[b] = {x, y, w, h};
            scores[b] = confidence[o] * uniform(0.2f, 1.0f);
        } else {
            const int w = static_cast<int>(uniform(8, 200)), h = static_cast<int>(uniform(8, 200));
            boxes[b] = {static_cast<int>(uniform(0, static_cast<float>(nms_frame_width - w))),
                        static_cast<int>(uniform(0, static_cast<float>(nms_frame_height - h))), w, h};
            scores[b] = uniform(0.001f, 0.3f);
        }
    }
}

void nms_naive(std::span<const Box> boxes, std::span<const float> scores, float score_threshold,
               std::vector<int>& keep) {
    keep.clear();
    std::vector<int> remaining;
    for (std::size_t i = 0; i < boxes.size(); ++i)
        if (scores[i] > score_threshold) remaining.push_back(static_cast<int>(i));
    const auto area = [](const Box& b) { return static_cast<double>(b.w) * b.h; };
    while (!remaining.empty()) {
        // The best remaining box (the first of equal scores, as a stable sort would have it).
        std::size_t best = 0;
        for (std::size_t r = 1; r < remaining.size(); ++r)
            if (scores[static_cast<std::size_t>(remaining[r])] > scores[static_cast<std::size_t>(remaining[best])]) best = r;
        const int b = remaining[best];
        keep.push_back(b);
        const Box& kb = boxes[static_cast<std::size_t>(b)];
        std::size_t out = 0;
        for (std::size_t r = 0; r < remaining.size(); ++r) {
            if (r == best) continue;
            const Box& o = boxes[static_cast<std::size_t>(remaining[r])];
            const double iw = std::max(0, std::min(kb.x + kb.w, o.x + o.w) - std::max(kb.x, o.x));
            const double ih = std::max(0, std::min(kb.y + kb.h, o.y + o.h) - std::max(kb.y, o.y));
            const double inter = iw * ih, uni = area(kb) + area(o) - inter;
            const double iou = uni > 0 ? inter / uni : 1.0;  // two empty boxes: identical
            if (iou <= 0.5) remaining[out++] = remaining[r];
        }
        remaining.resize(out);
    }
}

void nms_reference(std::span<const Box> boxes, std::span<const float> scores,
                   float score_threshold, std::vector<int>& keep, std::size_t* tests) {
    keep.clear();
    std::vector<int> order;
    sorted_candidates(scores, score_threshold, order);
    std::vector<Corners> kept;
    std::size_t count = 0;
    for (int i : order) {
        const Corners c = corners(boxes[static_cast<std::size_t>(i)]);
        bool suppressed = false;
        for (const auto& k : kept) {
            ++count;
            if (overlaps(c, k)) {
                suppressed = true;
                break;
            }
        }
        if (!suppressed) {
            kept.push_back(c);
            keep.push_back(i);
        }
    }
    if (tests) *tests = count;
}

void nms_optimized(const NmsImpl& impl, std::span<const Box> boxes, std::span<const float> scores,
                   float score_threshold, std::vector<int>& keep, NmsWorkspace& ws) {
    keep.clear();
    // Keys: a float's bits made to order like the float (sign bit set for positives,
    // all bits flipped for negatives, -0 as +0), then flipped for decreasing order; the
    // index in the low half stays in order within equal keys (LSD radix sort is stable).
    // Four passes of 8 bits over the key half only: O(n), where a comparison sort of the
    // 10,000 candidates costs more than the whole suppression.
    std::size_t n = 0;
    for (std::size_t i = 0; i < scores.size(); ++i) {
        if (!(scores[i] > score_threshold)) continue;
        const std::uint32_t bits = scores[i] == 0.0f ? 0u : std::bit_cast<std::uint32_t>(scores[i]);
        const std::uint32_t ordered = (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
        ws.order[n++] = (std::uint64_t{~ordered} << 32) | i;
    }
    std::uint64_t* src = ws.order.data();
    std::uint64_t* dst = ws.tmp.data();
    for (int shift = 32; shift < 64; shift += 8) {
        std::array<std::uint32_t, 257> count{};
        for (std::size_t j = 0; j < n; ++j) ++count[((src[j] >> shift) & 0xff) + 1];
        for (std::size_t b = 0; b < 256; ++b) count[b + 1] += count[b];
        for (std::size_t j = 0; j < n; ++j) dst[count[(src[j] >> shift) & 0xff]++] = src[j];
        std::swap(src, dst);
    }
    // Four passes: the sorted keys are back in ws.order.
    NmsKept& k = ws.kept;
    const KeptColumns cols{k.x1.data(), k.y1.data(), k.x2.data(), k.y2.data(), k.area.data()};
    int kept = 0;
    for (std::size_t j = 0; j < n; ++j) {
        const auto i = static_cast<std::size_t>(ws.order[j] & 0xffffffffu);
        const Corners c = corners(boxes[i]);
        if (impl.any_overlap(cols, kept, c.x1, c.y1, c.x2, c.y2, c.area)) continue;
        const auto at = static_cast<std::size_t>(kept++);
        k.x1[at] = c.x1;
        k.y1[at] = c.y1;
        k.x2[at] = c.x2;
        k.y2[at] = c.y2;
        k.area[at] = c.area;
        keep.push_back(static_cast<int>(i));
    }
}

}  // namespace ceiling::kernels
