#include <gtest/gtest.h>

#include <vector>

#include "kernels/common/random.hpp"
#include "kernels/conv/conv.hpp"
#include "kernels/registry.hpp"
#include "tests/unit/kernels/kernel_test_support.hpp"

namespace ceiling::kernels {
namespace {

using test::expect_verifies;

// 1x1 images (every tap but the centre is padding), widths 1 and 2 (no interior), odd
// channel counts (vector tails: 3, 17 = 16 + 1, 33), and a multiple of 16 (the streamed
// path when DRAM-sized).
const char* const odd_shapes[] = {"1x1x1x1", "1x1x2x3", "2x3x1x17", "1x5x7x33", "2x6x9x32"};

TEST(Conv, EveryVariantVerifiesOnOddShapes) {
    for (const char* shape : odd_shapes)
        for (const char* p : {"depthwise", "dense", "separable"})
            for (Variant v : {Variant::naive, Variant::optimized, Variant::library})
                expect_verifies("conv", p, v, shape);
}

TEST(Conv, StreamingStoresWhenDramSized) {
    // 2 x 40 x 40 x 64 x 4 B = 800 KiB per tensor, 1.6 MB in and out: with a "cache" of
    // 1 MiB the output is written with non-temporal stores over ceil(4 MiB / 1.6 MB) = 3
    // rotated buffer sets, and every run must still verify.
    const auto c = make_case("conv", "depthwise", Variant::optimized, "2x40x40x64");
    SetupOptions o;
    o.last_level_cache_bytes = 1 << 20;
    auto k = prepare(c, o);
    EXPECT_EQ(k->buffer_sets(), 3);
    for (int i = 0; i < 3; ++i) {
        k->run();
        EXPECT_TRUE(k->verify().ok) << k->verify().detail;
    }
}

// Channels 37 (no strips: C not a multiple of the lanes), 32 (strips of 8 pixels and a
// remainder of 3), 512 (strips of 4, remainder 3), 1024 (none: 4 KiB stride).
TEST(Conv, EveryDepthwiseIsaMatchesNaive) {
    for (const ConvShape s : {ConvShape{2, 5, 6, 37}, ConvShape{1, 3, 13, 32}, ConvShape{1, 3, 11, 512},
                              ConvShape{1, 2, 7, 1024}}) {
        SCOPED_TRACE(s.c);
        std::vector<float> in(s.elements()), wt(9 * static_cast<std::size_t>(s.c)), ref(s.elements()),
            out(s.elements());
        fill_uniform(in.data(), in.size(), 1, -1, 1, 1);
        fill_uniform(wt.data(), wt.size(), 2, -1, 1, 1);
        depthwise_naive(in.data(), wt.data(), ref.data(), s);
        for (const auto* im : depthwise_impls()) {
            if (!im->supported(cpu_features())) continue;
            SCOPED_TRACE(im->isa);
            depthwise_optimized(*im, in.data(), wt.data(), out.data(), s, 2, false);
            for (std::size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], ref[i], 1e-5) << i;
        }
    }
}

// P = N H W pixels. depthwise: 2 x 9 x C x P ops, 4 x (2PC + 9C) bytes; dense:
// 2 x 9C x C x P, 4 x (2PC + 9C^2); separable: 2 x (9 + C) x C x P, 4 x (2PC + 9C + C^2)
// compulsory, plus the 4PC intermediate in the working set.
TEST(ConvWork, CountsFlopsAndBytes) {
    const double p = 8.0 * 112 * 112, c = 128;  // P = 100352
    const auto dw = make_case("conv", "depthwise", Variant::optimized, "8x112x112x128");
    EXPECT_DOUBLE_EQ(dw.work.ops, 2 * 9 * c * p);                        // 231.2 MFLOP
    EXPECT_DOUBLE_EQ(dw.work.compulsory_bytes, 4 * (2 * p * c + 9 * c));  // 102.8 MB
    EXPECT_DOUBLE_EQ(dw.work.working_set_bytes, dw.work.compulsory_bytes);
    const auto dense = make_case("conv", "dense", Variant::library, "8x112x112x128");
    EXPECT_DOUBLE_EQ(dense.work.ops, 2 * 9 * c * c * p);                          // 29.6 GFLOP
    EXPECT_DOUBLE_EQ(dense.work.compulsory_bytes, 4 * (2 * p * c + 9 * c * c));
    const auto sep = make_case("conv", "separable", Variant::optimized, "8x112x112x128");
    EXPECT_DOUBLE_EQ(sep.work.ops, 2 * (9 + c) * c * p);                          // 3.52 GFLOP
    EXPECT_DOUBLE_EQ(sep.work.compulsory_bytes, 4 * (2 * p * c + 9 * c + c * c));
    EXPECT_DOUBLE_EQ(sep.work.working_set_bytes, sep.work.compulsory_bytes + 4 * p * c);
    // The flops ratio the suite prints beside the time ratio: 9C / (9 + C) = 8.41.
    EXPECT_NEAR(dense.work.ops / sep.work.ops, 9 * c / (9 + c), 1e-9);
    const auto small = make_case("conv", "depthwise", Variant::naive, "1x56x56x256");
    EXPECT_DOUBLE_EQ(small.work.ops, 2 * 9 * 256 * 56 * 56.0);  // 14.5 MFLOP
    EXPECT_THROW(make_case("conv", "depthwise", Variant::naive, "8x112x112"), std::invalid_argument);
}

}  // namespace
}  // namespace ceiling::kernels
