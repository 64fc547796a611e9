#include <gtest/gtest.h>

#include <vector>

#include "kernels/nms/nms.hpp"
#include "kernels/registry.hpp"
#include "tests/unit/kernels/kernel_test_support.hpp"

namespace ceiling::kernels {
namespace {

using test::expect_verifies;

// Every implementation on the same input: naive, reference, optimized on each ISA the
// CPU runs, and OpenCV when built in. Returns the reference's answer after checking that
// all agree exactly.
std::vector<int> all_agree(const std::vector<Box>& boxes, const std::vector<float>& scores,
                           float threshold = 0.0f) {
    std::vector<int> ref, got;
    nms_reference(boxes, scores, threshold, ref);
    nms_naive(boxes, scores, threshold, got);
    EXPECT_EQ(got, ref) << "naive";
    NmsWorkspace ws(boxes.size());
    for (const auto* im : nms_impls()) {
        if (!im->supported(cpu_features())) continue;
        nms_optimized(*im, boxes, scores, threshold, got, ws);
        EXPECT_EQ(got, ref) << im->isa;
    }
#ifdef CEILING_HAVE_OPENCV
    OpenCvNms cv(boxes, scores, threshold);
    cv.run(got);
    EXPECT_EQ(got, ref) << "OpenCV";
#endif
    return ref;
}

TEST(Nms, NoBoxes) { EXPECT_TRUE(all_agree({}, {}).empty()); }

TEST(Nms, OneBox) { EXPECT_EQ(all_agree({{10, 20, 30, 40}}, {0.7f}), std::vector<int>{0}); }

TEST(Nms, AllIdenticalBoxesKeepTheBest) {
    std::vector<Box> boxes(40, Box{100, 100, 50, 60});
    std::vector<float> scores;
    for (int i = 0; i < 40; ++i) scores.push_back(0.01f * static_cast<float>((i * 7) % 40 + 1));
    // Score 0.40 belongs to i with (7i mod 40) = 39: i = 17.
    EXPECT_EQ(all_agree(boxes, scores), std::vector<int>{17});
    // Equal scores: the first index wins (a stable sort's order, as OpenCV's).
    EXPECT_EQ(all_agree(boxes, std::vector<float>(40, 0.5f)), std::vector<int>{0});
}

TEST(Nms, ExactlyHalfIoUIsKept) {
    // 10x10 boxes shifted by 10/3 would not be integers; use 30x10 shifted by 10 in x:
    // intersection 20x10 = 200, union 300 + 300 - 200 = 400, IoU = 0.5 exactly: kept
    // (suppression needs IoU > 0.5). Shifted by 9: IoU = 210 / 390 > 0.5: suppressed.
    EXPECT_EQ(all_agree({{0, 0, 30, 10}, {10, 0, 30, 10}}, {0.9f, 0.8f}), (std::vector<int>{0, 1}));
    EXPECT_EQ(all_agree({{0, 0, 30, 10}, {9, 0, 30, 10}}, {0.9f, 0.8f}), (std::vector<int>{0}));
}

TEST(Nms, ThresholdAndEmptyBoxes) {
    // Score threshold: only scores above it take part (0.25 itself is out).
    EXPECT_EQ(all_agree({{0, 0, 10, 10}, {100, 0, 10, 10}, {200, 0, 10, 10}}, {0.3f, 0.25f, 0.1f}, 0.25f),
              std::vector<int>{0});
    // Two empty boxes count as overlapping (OpenCV's convention); an empty and a full one do not.
    EXPECT_EQ(all_agree({{5, 5, 0, 0}, {5, 5, 0, 0}, {0, 0, 10, 10}}, {0.9f, 0.8f, 0.7f}),
              (std::vector<int>{0, 2}));
}

TEST(Nms, GeneratedBoxesAllVariantsAgree) {
    std::vector<Box> boxes;
    std::vector<float> scores;
    generate_boxes(1500, 42, boxes, scores);
    for (const auto& b : boxes) {
        ASSERT_GE(b.x, 0);
        ASSERT_GE(b.y, 0);
        ASSERT_LE(b.x + b.w, nms_frame_width);
        ASSERT_LE(b.y + b.h, nms_frame_height);
        ASSERT_GT(b.w * b.h, 0);
    }
    const auto keep = all_agree(boxes, scores);
    EXPECT_GT(keep.size(), 30u);   // about one per object (30) plus background
    EXPECT_LT(keep.size(), 600u);
    // Prefiltering keeps the subset of the same boxes whose score passes.
    const auto pre = all_agree(boxes, scores, 0.25f);
    std::vector<int> expected;
    for (int i : keep)
        if (scores[static_cast<std::size_t>(i)] > 0.25f) expected.push_back(i);
    EXPECT_EQ(pre, expected);
}

TEST(Nms, EveryVariantVerifiesThroughTheRegistry) {
    for (const char* p : {"greedy", "prefilter"})
        for (Variant v : {Variant::naive, Variant::optimized, Variant::library})
            expect_verifies("nms", p, v, "2000");
}

// ops = 13 x the tests greedy NMS must make; bytes 20 per box + 4 per kept index.
TEST(NmsWork, CountsFromTheData) {
    const auto c = make_case("nms", "greedy", Variant::optimized, "10000");
    EXPECT_FALSE(c.multithreaded);
    std::vector<Box> boxes;
    std::vector<float> scores;
    std::vector<int> keep;
    std::size_t tests = 0;
    generate_boxes(10000, 0x5eed'2024'c0ffeeULL, boxes, scores);
    nms_reference(boxes, scores, 0.0f, keep, &tests);
    EXPECT_DOUBLE_EQ(c.work.ops, 13.0 * static_cast<double>(tests));
    EXPECT_DOUBLE_EQ(c.work.compulsory_bytes, 20.0 * 10000 + 4.0 * static_cast<double>(keep.size()));
    // Prefiltering cuts the tests (fewer candidates, fewer kept boxes to test against).
    const auto pre = make_case("nms", "prefilter", Variant::optimized, "10000");
    EXPECT_LT(pre.work.ops, c.work.ops);
    EXPECT_THROW(make_case("nms", "greedy", Variant::naive, "100x100"), std::invalid_argument);
}

}  // namespace
}  // namespace ceiling::kernels
