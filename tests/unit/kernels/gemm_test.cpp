#include "kernels/gemm/gemm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/common/bf16.hpp"
#include "kernels/common/random.hpp"
#include "kernels/gemm/gemm_amx.hpp"
#include "kernels/gemm/gemm_bf16.hpp"
#include "kernels/parallel.hpp"
#include "kernels/registry.hpp"
#include "tests/unit/kernels/kernel_test_support.hpp"

namespace ceiling::kernels {
namespace {

using test::expect_verifies;

// C (m rows, ldc apart, non-zero) += A (m x k) * B (k x n) on random data, with the naive
// loop's answer: what the optimized paths are checked against.
struct AccumulateCase {
    int m, n, k, ldc;
    std::vector<float> a, b, c0, ref;
    AccumulateCase(int m_, int n_, int k_, int ldc_)
        : m(m_),
          n(n_),
          k(k_),
          ldc(ldc_),
          a(static_cast<std::size_t>(m) * k),
          b(static_cast<std::size_t>(k) * n),
          c0(static_cast<std::size_t>(m) * ldc) {
        fill_uniform(a.data(), a.size(), 1, -1, 1, 1);
        fill_uniform(b.data(), b.size(), 2, -1, 1, 1);
        fill_uniform(c0.data(), c0.size(), 3, -1, 1, 1);
        ref = c0;
        gemm_naive(args(ref.data()));
    }
    GemmArgs args(float* c) const { return {a.data(), k, b.data(), n, c, ldc, m, n, k, true}; }
    // The same with B already packed (its pointer unused).
    GemmArgs prepacked_args(float* c) const {
        return {a.data(), k, nullptr, 0, c, ldc, m, n, k, true};
    }
};

// Odd sizes hit every edge: 1x1x1 (one element), tails in M (17 = 14 + 3 rows), N (33 =
// 32 + 1 columns) and K (65 = not a multiple of any block), and shapes crossing the kc and
// nc cache blocks (1100 > 2 x kc = 1024; 4200 columns > many B blocks of a few hundred
// columns). A blocks (up to 4096 rows) are crossed with shrunk blocks in
// BlockedLoopsCrossEveryBlockBoundary.
const char* const odd_shapes[] = {"1x1x1",      "17x33x65",    "1x4096x64",
                                  "31x17x1100", "1300x70x260", "40x4200x1100"};

TEST(GemmFp32, EveryVariantVerifiesOnOddShapes) {
    for (const char* shape : odd_shapes)
        for (Variant v : {Variant::naive, Variant::optimized, Variant::library})
            expect_verifies("gemm", "fp32", v, shape);
}

// 64x200x100 splits N over the threads; 300x40x1100 splits M (three threads: uneven
// shares; K > 2 x kc: three blocks). Each thread packs the B it needs.
TEST(GemmFp32, OptimizedVerifiesOnOneAndTwoThreads) {
    for (int threads : {1, 2, 3})
        for (const char* shape : {"64x200x100", "300x40x1100"})
            expect_verifies("gemm", "fp32", Variant::optimized, shape, threads);
}

// Each ISA's micro-kernels (every row count 1..mr) against the naive loop, accumulating
// into a non-zero C so the accumulate path is checked too.
TEST(GemmFp32, EveryIsaImplementationMatchesNaive) {
    const AccumulateCase t(37, 53, 301, 53);
    int tested = 0;
    for (const auto* impl : gemm_impls()) {
        if (!impl->supported(cpu_features())) continue;
        SCOPED_TRACE(impl->isa);
        auto c = t.c0;
        GemmWorkspace ws(*impl, 2);
        gemm_optimized(*impl, t.args(c.data()), ws, 2);
        for (std::size_t i = 0; i < c.size(); ++i) ASSERT_NEAR(c[i], t.ref[i], 1e-3) << i;
        auto c2 = t.c0;
        const PackedB packed(*impl, t.b.data(), t.n, t.k, t.n);
        gemm_prepacked(*impl, t.prepacked_args(c2.data()), packed, ws, 0);
        for (std::size_t i = 0; i < c2.size(); ++i) ASSERT_NEAR(c2[i], t.ref[i], 1e-3) << i;
        ++tested;
    }
    EXPECT_GE(tested, 1);  // the scalar fallback runs everywhere
}

// The blocked loops with blocks shrunk to a few tiles, so that one small GEMM crosses every
// boundary: several kc steps (the last one short, and kc not a multiple of the packers' 16),
// several A blocks of balanced height with a row tail, several B blocks with a column tail
// (each block's packing and the next one's prefetch), on one and two threads (a wide C split
// by columns, a tall one by rows), and a prepacked B read panel by panel across its blocks.
TEST(GemmFp32, BlockedLoopsCrossEveryBlockBoundary) {
    for (const auto* full : gemm_impls()) {
        if (!full->supported(cpu_features())) continue;
        SCOPED_TRACE(full->isa);
        GemmImpl impl = *full;
        impl.kc = 40;
        impl.nc = 2 * impl.nr;
        const int k = 3 * impl.kc + 9;
        // A blocks of 2 panels leave most of each next B block to be packed when it starts;
        // of 8, the calls' slices cover all of it (run_block, gemm.cpp). The last: rows in
        // one A block and 5 B blocks, which two threads take from a shared queue
        // (blocked_shared_n).
        for (const auto& [m, n, mc] : {std::tuple{5 * impl.mr + 3, 5 * impl.nr + 7, 2 * impl.mr},
                                       std::tuple{11 * impl.mr + 5, 3 * impl.nr + 7, 2 * impl.mr},
                                       std::tuple{11 * impl.mr + 5, 3 * impl.nr + 7, 8 * impl.mr},
                                       std::tuple{3 * impl.mr + 5, 9 * impl.nr + 7, 8 * impl.mr}}) {
            impl.mc = mc;
            SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                         ", mc " + std::to_string(mc));
            const AccumulateCase t(m, n, k, n);
            GemmWorkspace ws(impl, 2);
            for (int threads : {1, 2}) {
                SCOPED_TRACE(std::to_string(threads) + " thread(s)");
                auto c = t.c0;
                gemm_optimized(impl, t.args(c.data()), ws, threads);
                for (std::size_t i = 0; i < c.size(); ++i) ASSERT_NEAR(c[i], t.ref[i], 1e-3) << i;
            }
            auto c = t.c0;
            const PackedB packed(impl, t.b.data(), n, k, n);
            gemm_prepacked(impl, t.prepacked_args(c.data()), packed, ws, 0);
            for (std::size_t i = 0; i < c.size(); ++i) ASSERT_NEAR(c[i], t.ref[i], 1e-3) << i;
        }
    }
}

TEST(GemmBf16, EveryVariantVerifiesOnOddShapes) {
    for (const char* shape : {"1x1x1", "17x33x65", "48x64x96", "33x100x40"})
        for (Variant v : {Variant::optimized, Variant::library})
            expect_verifies("gemm", "bf16", v, shape);
}

// The vdpbf16ps GEMM (gemm_bf16.hpp) against a double-precision sum of the same bf16
// values, on each path of the fp32 loops it runs over k pairs: the small-M kernel for every
// M (K odd: the last pair half zero, A copied and padded; N with a tail), the packed path
// with every row count of the tile, and blocks shrunk so that one GEMM crosses every kc, mc
// and nc boundary, on one and two threads.
struct Bf16Case {
    int m, n, k;
    Array<Bf16> a, b;
    std::vector<double> ref;
    Bf16Case(int m_, int n_, int k_)
        : m(m_),
          n(n_),
          k(k_),
          a(static_cast<std::size_t>(m) * k),
          b(static_cast<std::size_t>(k) * n),
          ref(static_cast<std::size_t>(m) * n) {
        fill_uniform_bf16(a.data(), a.size(), 1, -1, 1, 1);
        fill_uniform_bf16(b.data(), b.size(), 2, -1, 1, 1);
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) {
                double sum = 0;
                for (int kk = 0; kk < k; ++kk)
                    sum += double{bf16_to_float(a[static_cast<std::size_t>(i) * k + kk])} *
                           bf16_to_float(b[static_cast<std::size_t>(kk) * n + j]);
                ref[static_cast<std::size_t>(i) * n + j] = sum;
            }
    }
    void check(const GemmImpl& impl, int threads) const {
        const Bf16PairedB paired(b.data(), n, k, n);
        Bf16GemmWorkspace ws(impl, m, k, threads);
        std::vector<float> c(static_cast<std::size_t>(m) * n, NAN);
        gemm_bf16_pairs(impl, a.data(), k, paired, c.data(), n, m, ws, threads);
        for (std::size_t i = 0; i < c.size(); ++i) ASSERT_NEAR(c[i], ref[i], 2e-3) << i;
    }
};

TEST(GemmBf16Pairs, MatchesTheReferenceOnEveryPath) {
    const GemmImpl* full = gemm_bf16_impl();
    if (!full) GTEST_SKIP() << "this CPU has no AVX512-BF16";
    for (int m = 1; m <= gemm_small_m_limit(full->mr) + 1; ++m) {
        SCOPED_TRACE("small M = " + std::to_string(m));
        Bf16Case(m, 1000, 75).check(*full, 2);
    }
    for (int rows = 1; rows <= full->mr; ++rows) {
        SCOPED_TRACE("a last panel of " + std::to_string(rows) + " rows");
        Bf16Case(3 * full->mr + rows, 2 * full->nr + 5, 130).check(*full, 1);
    }
    GemmImpl impl = *full;
    impl.kc = 40;  // pairs: 80 of K
    impl.nc = 2 * impl.nr;
    impl.mc = 2 * impl.mr;
    for (int threads : {1, 2}) {
        SCOPED_TRACE(std::to_string(threads) + " thread(s), shrunk blocks");
        Bf16Case(5 * impl.mr + 3, 5 * impl.nr + 7, 3 * 2 * impl.kc + 9).check(impl, threads);
        Bf16Case(3 * impl.mr + 5, 9 * impl.nr + 7, 3 * 2 * impl.kc + 10).check(impl, threads);
    }
}

// A is read in place as pairs when K is even, so its rows must start on whole pairs; with
// K odd it is copied, into a workspace made for that K.
TEST(GemmBf16Pairs, RefusesRowsThatAreNotWholePairs) {
    const GemmImpl* impl = gemm_bf16_impl();
    if (!impl) GTEST_SKIP() << "this CPU has no AVX512-BF16";
    const Bf16Case t(4, 64, 8);
    const Bf16PairedB paired(t.b.data(), t.n, t.k, t.n);
    Bf16GemmWorkspace ws(*impl, t.m, t.k, 1);
    std::vector<float> c(static_cast<std::size_t>(t.m) * t.n);
    EXPECT_THROW(gemm_bf16_pairs(*impl, t.a.data(), 7, paired, c.data(), t.n, 2, ws, 1),
                 std::invalid_argument);
    EXPECT_THROW(gemm_bf16_pairs(*impl, t.a.data() + 1, 8, paired, c.data(), t.n, 2, ws, 1),
                 std::invalid_argument);
    const Bf16Case odd(4, 64, 9);
    const Bf16PairedB odd_b(odd.b.data(), odd.n, odd.k, odd.n);
    EXPECT_THROW(gemm_bf16_pairs(*impl, odd.a.data(), 9, odd_b, c.data(), odd.n, 4, ws, 1),
                 std::invalid_argument);  // the workspace was made for K = 8
}

// bf16-tiles: the bf16 GEMM's loop alone, one tile of C per thread: a 32 x 32 block of AMX
// tiles, else the vdpbf16ps micro-kernel's mr x nr tile (32 x 32 where neither is here: the
// case then says why it is unavailable).
std::pair<int, int> bf16_tile() {
    const GemmImpl* pairs = amx_bf16_supported() ? nullptr : gemm_bf16_impl();
    return pairs ? std::pair{pairs->mr, pairs->nr} : std::pair{32, 32};
}
std::string bf16_tile_shape(int k) {
    const auto [m, n] = bf16_tile();
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

// Every thread's tile is the product (the repeats are split between the threads, so each
// thread's tile is written and checked).
TEST(GemmBf16Tiles, EveryThreadsBlockVerifies) {
    for (int k : {32, 256})
        for (int threads : {1, 2, 3})
            expect_verifies("gemm", "bf16-tiles", Variant::optimized, bf16_tile_shape(k), threads);
}

// Work: the tile `repeats` times (about 2^30 operations); the working set is what stays
// resident (A, packed B, one tile of C), which places the suite's first shape in L1 and its
// second in L2 (AMX: 32x32x256, 36 KiB, and 32x32x4096, 516 KiB, on every AMX CPU's 48 KiB
// L1 and 2 MiB L2; vdpbf16ps on AVX-512: 14x32x256, 25 KiB, and the GEMM's kc pairs).
TEST(GemmBf16Tiles, WorkIsTheRepeatedBlockAndOnlyOneBlockOfCIsAccepted) {
    const auto [m, n] = bf16_tile();
    const bool amx = amx_bf16_supported();
    const auto c = make_case("gemm", "bf16-tiles", Variant::optimized, bf16_tile_shape(256));
    const double tile = 2.0 * m * n * 256;
    const double repeats = c.work.ops / tile;
    EXPECT_EQ(repeats, std::floor(repeats));
    EXPECT_NEAR(c.work.ops, 0x1p30, tile);
    const auto packed_b = static_cast<double>(
        amx || !gemm_bf16_impl() ? AmxPackedB::bytes(256, n) : Bf16PairedB::bytes(256, n));
    EXPECT_DOUBLE_EQ(c.work.working_set_bytes, 2.0 * m * 256 + packed_b + 4.0 * m * n);
    EXPECT_EQ(c.work.engine, amx || !gemm_bf16_impl() ? WorkEngine::matrix : WorkEngine::vector);
    std::vector<std::string> suite;
    for (const auto& s : standard_cases())
        if (s.problem == "bf16-tiles") suite.push_back(s.shape);
    const int deep = amx || !gemm_bf16_impl() ? 4096 : 2 * gemm_bf16_impl()->kc;
    EXPECT_EQ(suite, (std::vector<std::string>{bf16_tile_shape(256), bf16_tile_shape(deep)}));
    const std::string taller = std::to_string(2 * m) + "x" + std::to_string(n) + "x256";
    const std::string wider = std::to_string(m) + "x" + std::to_string(2 * n) + "x256";
    for (const std::string& bad : {taller, wider, bf16_tile_shape(41), std::string("256")})
        EXPECT_THROW(make_case("gemm", "bf16-tiles", Variant::optimized, bad),
                     std::invalid_argument)
            << bad;
    EXPECT_THROW(make_case("gemm", "bf16-tiles", Variant::library, bf16_tile_shape(256)),
                 std::invalid_argument);
}

// fp32-tiles: the widest micro-kernel alone, one mr x nr tile per thread (its shape is
// this CPU's tile; the repeats split between the threads, so each thread's tile is written
// and checked), at depths short and long, even and odd.
std::string tile_shape(int k) {
    const auto& im = best_gemm_impl();
    return std::to_string(im.mr) + "x" + std::to_string(im.nr) + "x" + std::to_string(k);
}

TEST(GemmFp32Tiles, EveryThreadsTileVerifies) {
    for (int k : {1, 37, 128, 512})
        for (int threads : {1, 2, 3})
            expect_verifies("gemm", "fp32-tiles", Variant::optimized, tile_shape(k), threads);
}

// Work: the tile `repeats` times (about 2^30 flop); the bytes and working set are the
// resident panels and one tile of C, which puts K = 128 in L1 and the GEMM's kc in L2 on
// AVX-512 (14 x 32: 25 and 94 KiB). The suite runs both; other tiles are refused.
TEST(GemmFp32Tiles, WorkIsTheRepeatedTileAndOnlyThisCpusTileIsAccepted) {
    const auto& im = best_gemm_impl();
    const auto c = make_case("gemm", "fp32-tiles", Variant::optimized, tile_shape(128));
    const double tile = 2.0 * im.mr * im.nr * 128;
    const double repeats = c.work.ops / tile;
    EXPECT_EQ(repeats, std::floor(repeats));
    EXPECT_NEAR(c.work.ops, 0x1p30, tile);
    EXPECT_DOUBLE_EQ(c.work.working_set_bytes, 4.0 * (im.mr * 128 + 128 * im.nr + im.mr * im.nr));
    EXPECT_DOUBLE_EQ(c.work.compulsory_bytes, c.work.working_set_bytes);
    EXPECT_EQ(c.work.engine, WorkEngine::vector);
    std::vector<std::string> suite;
    for (const auto& s : standard_cases())
        if (s.problem == "fp32-tiles") suite.push_back(s.shape);
    EXPECT_EQ(suite, (std::vector<std::string>{tile_shape(128), tile_shape(im.kc)}));
    const std::string taller = std::to_string(im.mr + 1) + "x" + std::to_string(im.nr) + "x128";
    const std::string wider = std::to_string(im.mr) + "x" + std::to_string(im.nr * 2) + "x128";
    for (const std::string& bad : {taller, wider, tile_shape(0), std::string("128")})
        EXPECT_THROW(make_case("gemm", "fp32-tiles", Variant::optimized, bad),
                     std::invalid_argument)
            << bad;
    EXPECT_THROW(make_case("gemm", "fp32-tiles", Variant::library, tile_shape(128)),
                 std::invalid_argument);
}

TEST(GemmBf16, RoundingIsToNearestEven) {
    EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
    EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f + 0x1p-8f)), 1.0f);  // tie -> even (down)
    EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f + 3 * 0x1p-8f)), 1.0f + 0x1p-6f);  // tie -> up
    EXPECT_EQ(bf16_to_float(float_to_bf16(-2.5f)), -2.5f);
}

// Work: 2MNK operations; bytes: 4 x (MK + KN + MN) for fp32, 2 x (MK + KN) + 4MN for bf16.
TEST(GemmWork, CountsFlopsAndBytes) {
    const auto sq = make_case("gemm", "fp32", Variant::optimized, "2048");
    EXPECT_EQ(sq.shape, "2048x2048x2048");
    EXPECT_DOUBLE_EQ(sq.work.ops, 2.0 * 2048 * 2048 * 2048);            // 17.18e9
    EXPECT_DOUBLE_EQ(sq.work.compulsory_bytes, 4.0 * 3 * 2048 * 2048);  // 48 MiB
    EXPECT_DOUBLE_EQ(sq.work.working_set_bytes, sq.work.compulsory_bytes);
    EXPECT_EQ(sq.work.precision, WorkPrecision::fp32);
    EXPECT_EQ(sq.work.engine, WorkEngine::vector);
    EXPECT_TRUE(sq.multithreaded);

    // Decode-like M = 1: 2 x 4096 x 4096 = 33.5 MFLOP over 4 x (4096 + 4096^2 + 4096) bytes
    // = 64.03 MiB: 0.5 flop/byte, far left of any ridge point.
    const auto decode = make_case("gemm", "fp32", Variant::library, "1x4096x4096");
    EXPECT_DOUBLE_EQ(decode.work.ops, 2.0 * 4096 * 4096);
    EXPECT_DOUBLE_EQ(decode.work.compulsory_bytes, 4.0 * (4096 + 4096.0 * 4096 + 4096));
    EXPECT_NEAR(decode.work.ops / decode.work.compulsory_bytes, 0.5, 1e-3);

    const auto odd = make_case("gemm", "fp32", Variant::naive, "17x33x65");
    EXPECT_DOUBLE_EQ(odd.work.ops, 2.0 * 17 * 33 * 65);                                // 72930
    EXPECT_DOUBLE_EQ(odd.work.compulsory_bytes, 4.0 * (17 * 65 + 65 * 33 + 17 * 33));  // 15296
    EXPECT_FALSE(odd.multithreaded);

    const auto bf = make_case("gemm", "bf16", Variant::optimized, "2048");
    EXPECT_EQ(bf.work.precision, WorkPrecision::bf16);
    EXPECT_DOUBLE_EQ(bf.work.compulsory_bytes,
                     2.0 * 2 * 2048 * 2048 + 4.0 * 2048 * 2048);  // 32 MiB
    EXPECT_EQ(bf.work.engine, cpu_features().amx_bf16 ? WorkEngine::matrix : WorkEngine::vector);
}

TEST(GemmCases, StandardShapesAndBatchSweep) {
    int batch = 0, squares = 0;
    for (const auto& c : standard_cases()) {
        if (c.kernel != "gemm") continue;
        if (c.series == "batch") {
            ++batch;
            EXPECT_TRUE(c.shape.ends_with("x4096x4096")) << c.shape;
        }
        if (c.shape == "2048x2048x2048" && c.problem == "fp32") {
            ++squares;
            EXPECT_TRUE(c.in_default && c.in_quick);
        }
    }
    EXPECT_EQ(batch, 2 * 9);  // M = 1 .. 256, optimized and library
    EXPECT_EQ(squares, 2);
}

TEST(GemmCases, BadShapesAndVariantsSayWhatIsValid) {
    EXPECT_THROW(make_case("gemm", "fp32", Variant::naive, "12x"), std::invalid_argument);
    EXPECT_THROW(make_case("gemm", "fp32", Variant::naive, "0x4x4"), std::invalid_argument);
    try {
        make_case("gemm", "bf16", Variant::naive, "64");
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("optimized, library"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace ceiling::kernels

namespace ceiling::kernels {

// The bf16-pair implementation's constant (gemm_avx512.cpp), whose micro-kernel the
// disassembly test reads on every CPU.
extern const GemmImpl gemm_avx512_bf16;

namespace {

// The small-M path (M <= gemm_small_m_limit(mr), B unpacked, C accumulated in an L1 tile) of
// each ISA for every M, with a K tail (not a multiple of 4), an N tail (not a multiple of
// the vector width), N beyond one column chunk, and ldc a multiple of 4 KiB (rows of C in
// one L1 set), accumulating into a non-zero C; the next M takes the packed path. The
// kernels beyond the limit are not made (null).
TEST(GemmFp32, SmallMPathMatchesNaiveForEveryM) {
    const int n = 5000, k = 37, ld = 5120;
    for (const auto* impl : gemm_impls()) {
        if (!impl->supported(cpu_features())) continue;
        SCOPED_TRACE(impl->isa);
        GemmWorkspace ws(*impl, 2);
        const int limit = gemm_small_m_limit(impl->mr);
        for (int m = 1; m <= gemm_small_m; ++m)
            EXPECT_EQ(impl->small_m[static_cast<std::size_t>(m - 1)] != nullptr, m <= limit) << m;
        for (int m = 1; m <= limit + 1; ++m) {
            SCOPED_TRACE("M = " + std::to_string(m));
            const AccumulateCase t(m, n, k, ld);
            auto c = t.c0;
            gemm_optimized(*impl, t.args(c.data()), ws, 2);
            for (std::size_t i = 0; i < c.size(); ++i) ASSERT_NEAR(c[i], t.ref[i], 1e-4) << i;
        }
    }
}

// The caches the blocks come from: ordered as a hierarchy, and L3 as the kernel sees it
// (sysfs, when it says), not the host's whole L3 that CPUID can give a guest.
TEST(CacheSizes, AreAHierarchyAndFollowSysfs) {
    const auto& c = cache_sizes();
    EXPECT_GE(c.l1d, std::size_t{8} << 10);
    EXPECT_GT(c.l2, c.l1d);
    EXPECT_GE(c.l3, c.l2);
    std::ifstream level("/sys/devices/system/cpu/cpu0/cache/index3/level");
    std::ifstream size("/sys/devices/system/cpu/cpu0/cache/index3/size");
    std::string l, text;
    if (level >> l && l == "3" && size >> text && text.back() == 'K') {
        EXPECT_EQ(c.l3, std::stoull(text) << 10);
    }
}

// Blocks come from this CPU's caches: an A panel (mr x kc) in L1, the B block (kc x nc) in at
// most half of L2, the A block (mc x kc) in this CPU's share of half of L3; mc and nc whole
// numbers of register tiles; the small-M tile in L1.
TEST(GemmFp32, CacheBlocksFollowTheCaches) {
    const auto& caches = cache_sizes();
    const auto cpus = static_cast<std::size_t>(std::max(1, available_cpus()));
    for (const auto* impl : gemm_impls()) {
        SCOPED_TRACE(impl->isa);
        const auto panel = sizeof(float) * static_cast<std::size_t>(impl->kc);
        EXPECT_EQ(impl->mc % impl->mr, 0);
        EXPECT_EQ(impl->nc % impl->nr, 0);
        EXPECT_GT(impl->nc, 0);
        EXPECT_LE(panel * impl->mr, caches.l1d);
        if (impl->nc > impl->nr) {
            EXPECT_LE(panel * impl->nc, caches.l2 / 2);
        }
        if (impl->mc > impl->mr) {
            EXPECT_LE(panel * impl->mc, caches.l3 / 2 / cpus + panel * impl->mr);
        }
    }
    for (int m = 1; m <= gemm_small_m; ++m) {
        const int chunk = small_m_chunk(m);
        EXPECT_EQ(chunk % 64, 0);
        EXPECT_LE(chunk * m, gemm_small_m_tile_floats);
        if (chunk > 64) {
            EXPECT_LE(sizeof(float) * chunk * m, caches.l1d / 2) << m;
        }
    }
}

// The full-tile micro-kernel's k loop, read from the built library: exactly gemm_k_unroll x
// mr x nr/lanes FMAs on registers of the ISA's width, and nothing spilled to the stack (an
// accumulator array the compiler failed to keep in registers would show as (%rsp) operands).
TEST(GemmDisassembly, MicroKernelLoopIsAllRegisterFmas) {
#if !defined(__OPTIMIZE__) || defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "unoptimised or sanitised build: the loop is not the release one";
#endif
    int checked = 0;
    // The fp32 implementations and the bf16-pair one (its symbol is in the archive on every
    // CPU; gemm_bf16_impl() only hands it out where it runs).
    std::vector<const GemmImpl*> impls(gemm_impls().begin(), gemm_impls().end());
    impls.push_back(&gemm_avx512_bf16);
    for (const auto* impl : impls) {
        if (impl->symbol.empty()) continue;
        SCOPED_TRACE(impl->isa);
        const bool avx512 = impl->isa.starts_with("avx512");
        const std::string fma = impl->isa == "avx512-bf16" ? "vdpbf16ps" : "vfmadd231ps";
        const std::string cmd =
            "objdump -d --no-show-raw-insn --disassemble=" + std::string(impl->symbol) + " " +
            CEILING_KERNELS_ARCHIVE + " 2>/dev/null";
        std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
        if (!pipe) GTEST_SKIP() << "objdump unavailable";
        std::vector<test::Instruction> lines;
        char buf[512];
        for (test::Instruction in; fgets(buf, sizeof buf, pipe.get());)
            if (test::parse_instruction(buf, in)) lines.push_back(in);
        // objdump is there (binutils builds the project), so an empty listing means the
        // symbol named in the GemmImpl is stale: a failure, or this test checks nothing.
        if (lines.empty() && std::system("objdump --version >/dev/null 2>&1") != 0)
            GTEST_SKIP() << "objdump unavailable";
        ASSERT_FALSE(lines.empty())
            << "symbol " << impl->symbol << " not in " << CEILING_KERNELS_ARCHIVE;
        // The loop spanning the most FMAs; a vector register to or from the stack there means
        // the tile no longer fits the registers.
        const auto [best_fmas, spills] =
            test::busiest_inner_loop(lines, fma, avx512 ? "%zmm" : "%ymm");
        const int lanes = avx512 ? 16 : 8;
        // gemm_k_unroll steps of 14 x 32 / 16 = 28 (AVX-512) or 6 x 16 / 8 = 12 (AVX2) FMAs.
        EXPECT_EQ(best_fmas, gemm_k_unroll * impl->mr * impl->nr / lanes);
        EXPECT_FALSE(spills);
        // The C tile's prefetches (first and last line of each row, into L2 at the start and
        // into L1 near the end), beside the ones of each k step: GCC once deleted them
        // silently (a lambda of prefetches only looked free of side effects).
        int prefetches = 0;
        for (const auto& l : lines) prefetches += l.second.rfind("prefetch", 0) == 0;
        EXPECT_GE(prefetches, 4 * impl->mr) << "C tile prefetches missing from " << impl->symbol;
        ++checked;
    }
    EXPECT_EQ(checked, 3);  // avx512, avx2, avx512-bf16 (the scalar fallback has no symbol)
}

}  // namespace
}  // namespace ceiling::kernels
