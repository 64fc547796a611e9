#include <gtest/gtest.h>

#include <set>

#include "diagnosis/work.hpp"
#include "kernels/registry.hpp"

namespace ceiling::kernels {
namespace {

// The agent converts KernelWork to ceiling::Work by name: the spellings must agree.
TEST(Registry, WorkNamesMatchDiagnosis) {
    ASSERT_EQ(work_precision_names.size(), ceiling::precision_names.size());
    for (std::size_t i = 0; i < work_precision_names.size(); ++i) {
        EXPECT_EQ(work_precision_names[i], ceiling::precision_names[i]);
        EXPECT_TRUE(ceiling::parse_precision(work_precision_names[i]));
    }
    ASSERT_EQ(work_engine_names.size(), ceiling::engine_names.size());
    for (std::size_t i = 0; i < work_engine_names.size(); ++i)
        EXPECT_EQ(work_engine_names[i], ceiling::engine_names[i]);
    ASSERT_EQ(work_device_names.size(), ceiling::device_names.size());
    for (std::size_t i = 0; i < work_device_names.size(); ++i)
        EXPECT_EQ(work_device_names[i], ceiling::device_names[i]);
}

TEST(Registry, KernelNamesAndUnknownNames) {
    const auto names = kernel_names();
    EXPECT_EQ(std::vector<std::string_view>(names.begin(), names.end()),
              (std::vector<std::string_view>{"gemm", "gemv", "conv", "nms", "resize"}));
    try {
        make_case("fft", "fp32", Variant::naive, "64");
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("gemm, gemv, conv, nms, resize"), std::string::npos);
    }
    EXPECT_THROW(make_case("gemm", "fp64", Variant::naive, "64"), std::invalid_argument);
    EXPECT_EQ(parse_variant("optimized"), Variant::optimized);
    EXPECT_FALSE(parse_variant("fast"));
}

TEST(Registry, StandardCasesAreUniqueAndDescribed) {
    std::set<std::string> seen;
    for (const auto& c : standard_cases()) {
        EXPECT_TRUE(seen.insert(c.name()).second) << "duplicate " << c.name();
        EXPECT_GT(c.work.ops, 0) << c.name();
        EXPECT_GT(c.work.compulsory_bytes, 0) << c.name();
        EXPECT_GE(c.work.working_set_bytes, c.work.compulsory_bytes) << c.name();
        EXPECT_FALSE(c.implementation.empty()) << c.name();
        EXPECT_TRUE(c.setup) << c.name();
        if (c.in_quick) {
            EXPECT_TRUE(c.in_default) << c.name();
        }
        if (c.variant == Variant::naive) {
            EXPECT_FALSE(c.multithreaded) << c.name();
        }
    }
}

// The working set decides the rotation: below the LLC one set, else >= 4 x LLC in all.
TEST(Registry, RotationSets) {
    const std::size_t llc = 32u << 20;
    EXPECT_EQ(rotation_sets(1e6, llc), 1);
    EXPECT_EQ(rotation_sets(31.0 * (1 << 20), llc), 1);
    EXPECT_EQ(rotation_sets(32.0 * (1 << 20), llc), 4);   // 4 x 32 MiB = 128 MiB
    EXPECT_EQ(rotation_sets(48.0 * (1 << 20), llc), 3);   // 3 x 48 = 144 >= 128
    EXPECT_EQ(rotation_sets(1024.0 * (1 << 20), llc), 1); // 1 GiB alone is 32 x LLC
    // A plateau that ended at 16 MiB inside a 105 MiB L3: DRAM-sized from 16 MiB, and the
    // copies of a 64 MiB case touch 4 x 105 MiB before one is reused.
    EXPECT_EQ(rotation_sets(15.0 * (1 << 20), 16u << 20, 105u << 20), 1);
    EXPECT_EQ(rotation_sets(64.0 * (1 << 20), 16u << 20, 105u << 20), 7);
    EXPECT_EQ(rotation_sets(64.0 * (1 << 20), 16u << 20), 1);
    EXPECT_EQ(rotation_sets(64.0 * (1 << 20), 16u << 20, 8u << 20), 1);  // the larger of the two
}

TEST(Registry, TooLargeIsRefusedBeforeAllocating) {
    const auto c = make_case("gemm", "fp32", Variant::optimized, "100000x100000x100000");
    SetupOptions o;
    o.available_memory_bytes = std::size_t{8} << 30;
    const auto why = check_fits(c, o);
    // Sizes as every message writes them (diagnosis/format.hpp): 12e10 B + workspace.
    EXPECT_NE(why.find("needs 112 GiB"), std::string::npos) << why;
    EXPECT_NE(why.find("only 8 GiB"), std::string::npos) << why;
    EXPECT_THROW(prepare(c, o), KernelUnavailable);
    // The default: MemAvailable of this machine, far below 112 GiB here too.
    EXPECT_THROW(prepare(c), KernelUnavailable);
    const auto small = make_case("gemm", "fp32", Variant::naive, "8");
    EXPECT_EQ(check_fits(small, o), "");
}

TEST(Registry, VerifyBeforeRunIsNotOk) {
    auto k = prepare(make_case("gemm", "fp32", Variant::naive, "4"));
    EXPECT_FALSE(k->verify().ok);
    k->run();
    EXPECT_TRUE(k->verify().ok) << k->verify().detail;
    EXPECT_EQ(k->threads(), 1);
    EXPECT_EQ(k->buffer_sets(), 1);
}

}  // namespace
}  // namespace ceiling::kernels
