// The GPU reference problems' CPU side (inputs, references, catalogue) on any machine, and the
// GPU kernels themselves where a device exists (skipped with the reason otherwise).

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <set>
#include <string>

#include "kernels/common/bf16.hpp"
#include "kernels/gpu/gpu_kernels.hpp"
#include "kernels/gpu/random_hash.hpp"
#include "kernels/gpu/reference_cpu.hpp"

namespace ceiling::kernels::gpu {
namespace {

TEST(GpuRandomInputs, DeterministicInRangeAndNotConstant) {
    std::set<float> seen;
    for (std::uint64_t i = 0; i < 1000; ++i) {
        const float v = uniform_at(3, i);
        EXPECT_EQ(v, uniform_at(3, i));
        EXPECT_GE(v, -1.0f);
        EXPECT_LT(v, 1.0f);
        seen.insert(v);
        const int q = int8_at(3, i);
        EXPECT_GE(q, -127);
        EXPECT_LE(q, 127);
    }
    EXPECT_GT(seen.size(), 990u);
    EXPECT_NE(uniform_at(3, 0), uniform_at(4, 0));
}

TEST(GpuRandomInputs, Bf16RoundingMatchesTheCpuKernels) {
    for (std::uint64_t i = 0; i < 10000; ++i) {
        const float v = uniform_at(9, i) * 1000.0f;
        EXPECT_EQ(to_bf16_bits(v), float_to_bf16(v)) << v;
        EXPECT_EQ(round_to_bf16(v), bf16_to_float(float_to_bf16(v)));
    }
}

TEST(GpuReferences, GemmEntryIsTheDotProduct) {
    const GemmShape s{3, 5, 7, false};
    double abs = 0;
    const double ref = gemm_reference(s, 2, 4, &abs);
    double sum = 0, sum_abs = 0;
    for (int k = 0; k < 7; ++k) {
        const double p = double(uniform_at(seed_a, 2 * 7 + k)) * uniform_at(seed_b, k * 5 + 4);
        sum += p;
        sum_abs += std::fabs(p);
    }
    EXPECT_DOUBLE_EQ(ref, sum);
    EXPECT_DOUBLE_EQ(abs, sum_abs);
    const GemmShape b{3, 5, 7, true};
    EXPECT_EQ(gemm_a(b, 3), round_to_bf16(uniform_at(seed_a, 3)));  // bf16 inputs are rounded
}

TEST(GpuReferences, GemvInt8UsesThePerRowScale) {
    const GemvShape s{4, 32, WeightType::int8};
    double abs = 0;
    const double ref = gemv_reference(s, 1, &abs);
    double sum = 0;
    for (int c = 0; c < 32; ++c) sum += double(int8_at(seed_a, 32 + c)) * uniform_at(seed_x, c);
    EXPECT_NEAR(ref, sum * gemv_scale(s, 1), 1e-12);
    EXPECT_GT(gemv_scale(s, 1), 0.5f / 127);
    EXPECT_LE(gemv_scale(s, 1), 1.0f / 127);
    EXPECT_EQ(gemv_scale({4, 32, WeightType::bf16}, 1), 1.0f);
}

TEST(GpuReferences, DepthwiseConvPadsWithZeros) {
    const ConvShape s{1, 2, 4, 5};
    // Corner output of channel 1: only the 2x2 window inside the image contributes.
    const std::uint64_t plane = 1, idx = plane * 20;  // y = 0, x = 0
    double expected = 0;
    for (int ky = 1; ky < 3; ++ky)
        for (int kx = 1; kx < 3; ++kx)
            expected += double(conv_input(s, plane * 20 + (ky - 1) * 5 + (kx - 1))) * conv_filter(s, 9 + ky * 3 + kx);
    EXPECT_NEAR(conv_reference(s, idx, nullptr), expected, 1e-12);
}

TEST(GpuReferences, NmsSuppressesOverlapsGreedily) {
    // 0 and 1 overlap heavily (IoU 90 / 100); 2 is apart; 3 overlaps both less (IoU with 1:
    // 40 / 140 = 0.29) and is kept because 1 is already gone and 0 overlaps it by 0.36.
    const std::vector<Box> boxes = {{0, 0, 10, 10}, {0, 0, 10, 9}, {50, 50, 60, 60}, {0, 5, 10, 14}};
    EXPECT_TRUE(nms_suppresses(boxes[0], boxes[1], 0.5f));
    EXPECT_FALSE(nms_suppresses(boxes[0], boxes[2], 0.5f));
    EXPECT_FALSE(nms_suppresses(boxes[0], boxes[3], 0.5f));  // IoU 5x10 / (100 + 90 - 50) = 0.36
    EXPECT_TRUE(nms_suppresses(boxes[1], boxes[3], 0.25f));
    EXPECT_FALSE(nms_suppresses(boxes[1], boxes[3], 0.30f));
    EXPECT_EQ(nms_reference(boxes, 0.5f), (std::vector<int>{0, 2, 3}));
}

TEST(GpuReferences, NmsBoxesAreValidAndSuppressSome) {
    const auto boxes = nms_boxes(2048);
    ASSERT_EQ(boxes.size(), 2048u);
    for (const auto& b : boxes) {
        EXPECT_LT(b.x1, b.x2);
        EXPECT_LT(b.y1, b.y2);
    }
    const auto keep = nms_reference(boxes, 0.5f);
    EXPECT_GT(keep.size(), 100u);
    EXPECT_LT(keep.size(), boxes.size());  // a test that suppresses nothing tests nothing
}

TEST(GpuReferences, ResizeOfSameSizeIsIdentityAndUpscaleInterpolates) {
    const ResizeShape same{1, 1, 6, 7, 6, 7};
    for (std::uint64_t i = 0; i < 42; ++i) EXPECT_NEAR(resize_reference(same, i), resize_input(same, i), 1e-12);
    const ResizeShape up{1, 1, 2, 2, 4, 4};
    // Output (0,0) maps to source -0.25 -> clamped to 0: the corner pixel.
    EXPECT_NEAR(resize_reference(up, 0), resize_input(up, 0), 1e-12);
    // Output (0,1) maps to x = 0.25: a quarter of the way to pixel (0,1).
    const double a = resize_input(up, 0), b = resize_input(up, 1);
    EXPECT_NEAR(resize_reference(up, 1), a + 0.25 * (b - a), 1e-12);
}

TEST(GpuReferences, SampleIndicesCoverBothEnds) {
    const auto s = sample_indices(1000, 50, 1);
    ASSERT_FALSE(s.empty());
    EXPECT_EQ(s.front(), 0u);
    EXPECT_EQ(s.back(), 999u);
    EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
    EXPECT_EQ(std::set<std::uint64_t>(s.begin(), s.end()).size(), s.size());
}

TEST(GpuCatalogue, RoofsAndCasesAreWellFormed) {
    std::set<std::string_view> names;
    for (const auto& r : gpu_roofs()) {
        EXPECT_TRUE(names.insert(r.name).second) << r.name;
        EXPECT_FALSE(r.method.empty()) << r.name;
        EXPECT_EQ(find_gpu_roof(r.name), &r);
        if (r.kind == RoofKind::bandwidth) {
            EXPECT_FALSE(r.level.empty()) << r.name;
        }
    }
    for (const char* required : {"fp32_fma", "fp64_fma", "bf16_mma", "bf16_cublas", "fp16_cublas", "tf32_cublas",
                                 "hbm_read", "hbm_write", "hbm_copy", "l2_read", "pcie_h2d_pinned", "pcie_d2h_pageable",
                                 "launch", "launch_sync"})
        EXPECT_NE(find_gpu_roof(required), nullptr) << required;
    const auto cases = gpu_cases();
    std::set<std::string> case_names;
    std::set<std::string> kernels;
    for (const auto& c : cases) {
        EXPECT_TRUE(case_names.insert(c.name()).second) << c.name();
        kernels.insert(c.kernel);
        EXPECT_EQ(c.work.device, WorkDevice::gpu) << c.name();
        EXPECT_GT(c.work.ops, 0) << c.name();
        EXPECT_GT(c.work.compulsory_bytes, 0) << c.name();
        EXPECT_EQ(find_gpu_case(cases, c.name()), &c);
        if (!built_with_cuda()) {
            EXPECT_FALSE(c.unavailable.empty()) << c.name();
        }
    }
    EXPECT_EQ(kernels, (std::set<std::string>{"gemm", "gemv", "conv", "nms", "resize"}));
}

TEST(GpuCatalogue, WorkMatchesTheCpuConventions) {
    const auto cases = gpu_cases();
    const auto* g = find_gpu_case(cases, "gemm/fp32/optimized/4096x4096x4096");
    ASSERT_NE(g, nullptr);
    EXPECT_DOUBLE_EQ(g->work.ops, 2.0 * 4096 * 4096 * 4096);
    EXPECT_DOUBLE_EQ(g->work.compulsory_bytes, 4.0 * 3 * 4096 * 4096);
    const auto* v = find_gpu_case(cases, "gemv/bf16/optimized/16384x8192");
    ASSERT_NE(v, nullptr);
    EXPECT_DOUBLE_EQ(v->work.ops, 2.0 * 16384 * 8192);
    EXPECT_DOUBLE_EQ(v->work.compulsory_bytes, 2.0 * 16384 * 8192 + 4 * 8192 + 4 * 16384);
    // Memory-bound cases stream far more than an H200's 60 MB L2, so reruns find no data cached.
    for (const char* name : {"gemv/int8/optimized/16384x8192", "conv/depthwise/optimized/8x256x112x112-3x3",
                             "resize/bilinear/optimized/4x3x1080x1920-2160x3840"}) {
        const auto* c = find_gpu_case(cases, name);
        ASSERT_NE(c, nullptr) << name;
        EXPECT_GT(c->work.compulsory_bytes, 100e6) << name;
    }
}

// ---- on a GPU --------------------------------------------------------------------------------

// Why the device tests cannot run here; nullopt when a device is usable. Decided by the devices
// alone, so an empty reason can never let a machine without a GPU run them.
std::optional<std::string> no_gpu_reason() {
    const auto a = gpu_availability();
    if (!a.devices.empty()) return std::nullopt;
    return a.reason.empty() ? std::string("no GPU (and no reason given)") : a.reason;
}

TEST(GpuKernels, AvailabilitySaysWhy) {
    const auto a = gpu_availability();
    EXPECT_EQ(a.built_with_cuda, built_with_cuda());
    EXPECT_EQ(a.devices.empty(), !a.reason.empty());
}

TEST(GpuKernels, EveryCaseMatchesTheCpuReference) {
    if (const auto why = no_gpu_reason()) GTEST_SKIP() << *why;
    for (const auto& c : gpu_cases()) {
        const auto v = run_gpu_case_once(c, 0);
        EXPECT_TRUE(v.ok) << c.name() << ": max error " << v.max_error << " > " << v.tolerance << " (" << v.detail << ")";
    }
}

// The roofs run in tests/unit/agent/gpu_roofs_test.cpp, each beside its theoretical value
// (computed in agent/machine, which this area does not link).

TEST(GpuKernels, TimingReturnsOneDurationPerRepeat) {
    if (const auto why = no_gpu_reason()) GTEST_SKIP() << *why;
    const auto cases = gpu_cases();
    const auto run = run_gpu_case(*find_gpu_case(cases, "gemv/int8/optimized/16384x8192"), 0, {1, 3});
    EXPECT_EQ(run.seconds.size(), 3u);
    EXPECT_TRUE(run.verification.ok);
}

}  // namespace
}  // namespace ceiling::kernels::gpu
