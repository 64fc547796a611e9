#include "kernels/gemv/gemv.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/common/random.hpp"
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

// The int8 kernels against a double reference where the VNNI one is weakest: k past two of
// its int32 chunks (2^16) and a tail, x with an outlier 300 x the rest (its parts hold x to
// 2^-22 of max|x|), x all zero, rows long enough to overflow int32 sums, and a non-finite
// x (which the widening kernel takes).
TEST(Gemv, Int8KernelsHoldLongRowsOutliersAndSpecialValues) {
    const int m = 9, k = 2 * 65536 + 77;
    std::vector<std::int8_t> w(static_cast<std::size_t>(m) * k);
    std::vector<float> x(k), scale(m), y(m);
    fill_uniform_int8(w.data(), w.size(), 4, -127, 127, 1);
    fill_uniform(x.data(), x.size(), 5, -1, 1, 1);
    fill_uniform(scale.data(), scale.size(), 6, 0.004f, 0.012f, 1);
    x[1234] = 300;
    x[k - 3] = -299.5f;
    for (const auto* im : gemv_impls()) {
        if (!im->supported(cpu_features())) continue;
        SCOPED_TRACE(im->isa);
        gemv_int8(*im, w.data(), scale.data(), x.data(), y.data(), m, k, 2);
        for (int i = 0; i < m; ++i) {
            double ref = 0, abs = 0;
            for (int j = 0; j < k; ++j) {
                const double t = static_cast<double>(w[static_cast<std::size_t>(i) * k + j]) * x[j];
                ref += t;
                abs += std::abs(t);
            }
            EXPECT_NEAR(y[i], ref * scale[i], 1e-5 * abs * scale[i]) << "row " << i;
        }
        std::vector<float> zero(k, 0.0f);
        gemv_int8(*im, w.data(), scale.data(), zero.data(), y.data(), m, k, 1);
        for (int i = 0; i < m; ++i) EXPECT_EQ(y[i], 0.0f) << "row " << i;
        // Rows of 2^21 weights of 127 against x = 1: a lane's int32 sum over the whole row
        // (4 x 255 x 127 a line) would pass 2^31 twice over (a wrapped sum is off by far more
        // than the fp32 kernels' rounding over 2^21 terms, ~0.5 %).
        {
            const int mb = 9, kb = 1 << 21;
            std::vector<std::int8_t> wb(static_cast<std::size_t>(mb) * kb, 127);
            std::vector<float> ones(kb, 1.0f), yb(mb);
            gemv_int8(*im, wb.data(), scale.data(), ones.data(), yb.data(), mb, kb, 1);
            for (int i = 0; i < mb; ++i)
                EXPECT_NEAR(yb[i], 127.0 * kb * scale[i], 0.02 * 127.0 * kb * scale[i])
                    << "row " << i;
        }
        std::vector<float> inf = x;
        inf[7] = INFINITY;
        gemv_int8(*im, w.data(), scale.data(), inf.data(), y.data(), m, k, 1);
        for (int i = 0; i < m; ++i)
            EXPECT_FALSE(std::isfinite(y[i]) || w[static_cast<std::size_t>(i) * k + 7] == 0)
                << "row " << i;
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

// The bf16 and int8 kernels prefetch W into L2 (prefetch_ahead in gemv_impl.hpp: prefetcht1)
// and fp32 does not, read from the built objects: GCC 12 had silently deleted the prefetch
// when it sat in a helper function it judged free of side effects, leaving the labels'
// "prefetched into L2" untrue and int8 at 2.5x fp32 instead of 3.5x.
TEST(GemvDisassembly, Bf16AndInt8PrefetchIntoL2AndFp32DoesNot) {
    const std::string cmd =
        std::string("objdump -d -C --no-show-raw-insn ") + CEILING_KERNELS_ARCHIVE + " 2>/dev/null";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
    ASSERT_TRUE(pipe) << cmd;
    const std::regex member(R"(^(gemv_(avx512|avx2|scalar)\.cpp\.o|\S+\.o):\s+file format)");
    const std::regex function(R"(^[0-9a-f]+ <(.*)>:$)");
    // prefetcht1 / any prefetch per (member, weight type) over the GEMV kernels' functions.
    std::map<std::string, std::map<std::string, std::pair<int, int>>> seen;
    std::string in_member, type;
    char buf[4096];
    while (fgets(buf, sizeof buf, pipe.get())) {
        std::string l(buf);
        if (!l.empty() && l.back() == '\n') l.pop_back();
        std::smatch m;
        if (std::regex_search(l, m, member)) {
            in_member = m[2].matched ? m[1].str() : "";
            type.clear();
        } else if (std::regex_match(l, m, function)) {
            const std::string name = m[1];
            const bool gemv = name.find("kernels::detail::gemv") != std::string::npos ||
                              name.find("kernels::gemv_") != std::string::npos;
            type = !gemv                                              ? ""
                   : name.find("signed char") != std::string::npos    ? "int8"
                   : name.find("unsigned short") != std::string::npos ? "bf16"  // Bf16
                   : name.find("float") != std::string::npos          ? "fp32"
                                                                      : "";
            if (!in_member.empty() && !type.empty()) seen[in_member][type];
        } else if (!in_member.empty() && !type.empty() && l.find("prefetch") != std::string::npos) {
            auto& [t1, any] = seen[in_member][type];
            t1 += l.find("prefetcht1") != std::string::npos;
            ++any;
        }
    }
    if (seen.empty() && std::system("objdump --version >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "objdump unavailable";
    for (const char* obj : {"gemv_avx512.cpp.o", "gemv_avx2.cpp.o", "gemv_scalar.cpp.o"}) {
        SCOPED_TRACE(obj);
        ASSERT_TRUE(seen.contains(obj)) << "no GEMV kernel functions found in " << obj;
        for (const char* t : {"bf16", "int8", "fp32"}) ASSERT_TRUE(seen[obj].contains(t)) << t;
        EXPECT_GT(seen[obj]["bf16"].first, 0);
        EXPECT_GT(seen[obj]["int8"].first, 0);
        EXPECT_EQ(seen[obj]["fp32"].second, 0);
    }
}

// The VNNI int8 kernel's loop, read from the built library: three vpdpbusd (one per part of
// x) for each row's line of W, on zmm registers, none to or from the stack. A [rows][3]
// accumulator array GCC kept on the stack ran 0.82 of fp32's bytes/s instead of 0.9.
TEST(GemvDisassembly, VnniInt8LoopKeepsItsAccumulatorsInRegisters) {
#if !defined(__OPTIMIZE__) || defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "unoptimised or sanitised build: the loop is not the release one";
#endif
    const GemvImpl* vnni = nullptr;
    for (const auto* im : gemv_impls())
        if (im->int8_method == Int8Method::vnni) vnni = im;
    ASSERT_NE(vnni, nullptr);
    const std::string cmd =
        std::string("objdump -d -C --no-show-raw-insn ") + CEILING_KERNELS_ARCHIVE + " 2>/dev/null";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
    ASSERT_TRUE(pipe) << cmd;
    const std::string name = "gemv_int8_vnni(";  // its row loops inlined
    std::vector<test::Instruction> lines;
    bool in = false;
    char buf[4096];
    for (test::Instruction insn; fgets(buf, sizeof buf, pipe.get());) {
        const std::string l(buf);
        if (l.find(">:") != std::string::npos && l.find('<') != std::string::npos)
            in = l.find(name) != std::string::npos;
        else if (in && test::parse_instruction(l, insn))
            lines.push_back(insn);
    }
    if (lines.empty() && std::system("objdump --version >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "objdump unavailable";
    ASSERT_FALSE(lines.empty()) << name << " not in " << CEILING_KERNELS_ARCHIVE;
    const auto loop = test::busiest_inner_loop(lines, "vpdpbusd", "%zmm");
    EXPECT_EQ(loop.count, 3 * vnni->int8_rows);
    EXPECT_FALSE(loop.spills);
}

}  // namespace
}  // namespace ceiling::kernels
