#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "kernels/common/random.hpp"
#include "kernels/registry.hpp"
#include "kernels/resize/resize.hpp"
#include "tests/unit/kernels/kernel_test_support.hpp"

namespace ceiling::kernels {
namespace {

using test::expect_verifies;

// To 1x1 and 1xN / Nx1 (every coordinate clamps), upscales (weights on both taps, rows
// reused), widths not a multiple of 8 or 16 (SIMD tails), and the suite's own shapes.
const char* const shapes[] = {"7x5-1x1",     "33x17-1x9",   "9x1-20x3",      "40x30-17x13",
                              "64x48-100x77", "100x60-33x33", "1920x1080-224x224"};

TEST(Resize, EveryVariantVerifiesWithinOneLevel) {
    for (const char* shape : shapes)
        for (Variant v : {Variant::naive, Variant::optimized, Variant::library})
            expect_verifies("resize", "bilinear", v, shape);
}

// Every ISA's passes compute the same integers as the scalar fixed point (bit-exact).
TEST(Resize, EveryIsaIsBitExact) {
    for (const ResizeShape s : {ResizeShape{97, 61, 43, 29}, ResizeShape{50, 40, 131, 77}}) {
        std::vector<std::uint8_t> src(3 * static_cast<std::size_t>(s.src_w) * s.src_h + 64);
        fill_uniform_uint8(src.data(), src.size(), 7, 1);
        const ResizeTables t(s);
        ResizeWorkspace ws(t, 2);
        const auto n = 3 * static_cast<std::size_t>(s.dst_w) * s.dst_h;
        std::vector<std::uint8_t> ref(n), out(n), naive(n);
        resize_optimized(*resize_impls().back(), t, src.data(), ref.data(), ws, 1);  // scalar
        resize_naive(s, src.data(), naive.data());
        for (const auto* im : resize_impls()) {
            if (!im->supported(cpu_features())) continue;
            SCOPED_TRACE(im->isa);
            resize_optimized(*im, t, src.data(), out.data(), ws, 2);
            EXPECT_EQ(out, ref);
        }
        for (std::size_t i = 0; i < n; ++i) ASSERT_LE(std::abs(ref[i] - naive[i]), 1) << i;
    }
}

// Constant images stay constant (weights of each pass sum to ~2048 = 1).
TEST(Resize, ConstantImageStaysConstant) {
    const ResizeShape s{30, 20, 7, 11};
    std::vector<std::uint8_t> src(3 * 30 * 20 + 64, 200), out(3 * 7 * 11);
    const ResizeTables t(s);
    ResizeWorkspace ws(t, 1);
    resize_optimized(best_resize_impl(), t, src.data(), out.data(), ws, 1);
    for (auto v : out) EXPECT_NEAR(v, 200, 1);
}

// ops: 8 per output value (4 taps, a multiply-add each: the one convention for every
// resize, kernels/registry.hpp); bytes: source lines read + output.
TEST(ResizeWork, CountsOpsAndBytes) {
    const auto c = make_case("resize", "bilinear", Variant::optimized, "640x640");
    EXPECT_EQ(c.shape, "1920x1080-640x640");
    EXPECT_DOUBLE_EQ(c.work.ops, 640.0 * 640 * 3 * 8);  // 9.8 Mop
    EXPECT_DOUBLE_EQ(c.work.compulsory_bytes, 1920.0 * 1080 * 3 + 640.0 * 640 * 3);  // 7.45 MB
    EXPECT_EQ(c.work.precision, WorkPrecision::int8);
    const auto small = make_case("resize", "bilinear", Variant::naive, "1920x1080-224x224");
    // 1080 -> 224: 2 rows per output row, none shared (scale 4.82): 448 rows read, each in
    // full (a 64-byte line holds 2.5 sampled pixels at 8.57 pixels per output).
    EXPECT_DOUBLE_EQ(small.work.ops, 224.0 * 224 * 3 * 8);
    EXPECT_DOUBLE_EQ(small.work.compulsory_bytes, 448.0 * 5760 + 224.0 * 224 * 3);
    EXPECT_THROW(make_case("resize", "bilinear", Variant::naive, "1920x1080-0x10"), std::invalid_argument);
}

}  // namespace
}  // namespace ceiling::kernels
