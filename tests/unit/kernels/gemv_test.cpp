#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/common/random.hpp"
#include "kernels/gemv/gemv.hpp"
#include "kernels/registry.hpp"
#include "tests/unit/kernels/kernel_test_support.hpp"

namespace ceiling::kernels {
namespace {

using test::expect_verifies;

// Tails in M (rows not a multiple of 4) and in K (not a multiple of 2 x 16 lanes).
const char* const odd_shapes[] = {"1x1", "1x7", "5x33", "7x100", "13x1000", "64x64"};

TEST(Gemv, EveryVariantVerifiesOnOddShapes) {
    for (const char* shape : odd_shapes) {
        for (Variant v : {Variant::naive, Variant::optimized, Variant::library})
            expect_verifies("gemv", "fp32", v, shape);
        for (const char* p : {"bf16", "int8"})
            for (Variant v : {Variant::naive, Variant::optimized}) expect_verifies("gemv", p, v, shape);
    }
}

// Per thread (two) two groups of the widest kernels' rows and a remainder of single rows;
// K past whole vectors and whole pairs of vectors (bf16 splits 2 x lanes weights into even
// and odd halves, then widens the tail).
TEST(Gemv, EveryIsaImplementationMatchesNaive) {
    const int m = 37, k = 77;
    std::vector<float> w(static_cast<std::size_t>(m) * k), x(k), scale(m);
    std::vector<Bf16> wb(w.size());
    std::vector<std::int8_t> wi(w.size());
    fill_uniform(w.data(), w.size(), 1, -1, 1, 1);
    fill_uniform_bf16(wb.data(), wb.size(), 1, -1, 1, 1);
    fill_uniform_int8(wi.data(), wi.size(), 1, -127, 127, 1);
    fill_uniform(x.data(), x.size(), 2, -1, 1, 1);
    fill_uniform(scale.data(), scale.size(), 3, 0.01f, 0.02f, 1);
    std::vector<float> ref(m), refb(m), refi(m), y(m);
    gemv_naive_fp32(w.data(), x.data(), ref.data(), m, k);
    gemv_naive_bf16(wb.data(), x.data(), refb.data(), m, k);
    gemv_naive_int8(wi.data(), scale.data(), x.data(), refi.data(), m, k);
    for (const auto* im : gemv_impls()) {
        if (!im->supported(cpu_features())) continue;
        SCOPED_TRACE(im->isa);
        gemv_fp32(*im, w.data(), x.data(), y.data(), m, k, 2);
        for (int i = 0; i < m; ++i) EXPECT_NEAR(y[i], ref[i], 1e-4);
        gemv_bf16(*im, wb.data(), x.data(), y.data(), m, k, 2);
        for (int i = 0; i < m; ++i) EXPECT_NEAR(y[i], refb[i], 1e-4);
        gemv_int8(*im, wi.data(), scale.data(), x.data(), y.data(), m, k, 2);
        for (int i = 0; i < m; ++i) EXPECT_NEAR(y[i], refi[i], 1e-3);
    }
}

// 2MK operations (fp32 FMAs for every weight type); bytes MK x {4, 2, 1} + 4K (x) + 4M (y)
// (+ 4M scales for int8).
TEST(GemvWork, CountsFlopsAndBytes) {
    const double m = 16384, k = 16384;
    const auto f = make_case("gemv", "fp32", Variant::optimized, "16384");
    EXPECT_EQ(f.shape, "16384x16384");
    EXPECT_DOUBLE_EQ(f.work.ops, 2 * m * k);                             // 0.537 GFLOP
    EXPECT_DOUBLE_EQ(f.work.compulsory_bytes, 4 * m * k + 4 * k + 4 * m);  // 1 GiB + 128 KiB
    EXPECT_EQ(f.work.precision, WorkPrecision::fp32);
    const auto b = make_case("gemv", "bf16", Variant::optimized, "16384");
    EXPECT_DOUBLE_EQ(b.work.ops, 2 * m * k);
    EXPECT_DOUBLE_EQ(b.work.compulsory_bytes, 2 * m * k + 4 * k + 4 * m);  // 512 MiB + 128 KiB
    const auto i8 = make_case("gemv", "int8", Variant::naive, "16384");
    EXPECT_DOUBLE_EQ(i8.work.compulsory_bytes, m * k + 4 * k + 8 * m);     // 256 MiB + 192 KiB
    // Intensity: 0.5, ~1 and ~2 flop/byte: the quantisation lever in numbers.
    EXPECT_NEAR(f.work.ops / f.work.compulsory_bytes, 0.5, 1e-3);
    EXPECT_NEAR(i8.work.ops / i8.work.compulsory_bytes, 2.0, 2e-3);
    const auto odd = make_case("gemv", "fp32", Variant::naive, "5x33");
    EXPECT_DOUBLE_EQ(odd.work.ops, 2.0 * 5 * 33);                            // 330
    EXPECT_DOUBLE_EQ(odd.work.compulsory_bytes, 4.0 * 5 * 33 + 4 * 33 + 4 * 5);  // 812
}

TEST(GemvCases, LibraryOnlyForFp32) {
    EXPECT_THROW(make_case("gemv", "int8", Variant::library, "64"), std::invalid_argument);
    EXPECT_THROW(make_case("gemv", "fp32", Variant::naive, "64x64x64"), std::invalid_argument);
}

}  // namespace
}  // namespace ceiling::kernels
