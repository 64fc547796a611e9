// Each measured GPU roof beside its theoretical value: at most 5% above it (more means the
// operation or byte count, or the theoretical table, is wrong) and above a floor per roof (far
// below means the kernel does not use the unit it claims, or counts the wrong work). The
// check itself runs everywhere on recorded and synthetic values; the roofs run on a GPU.

#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "agent/machine/gpu_machine.hpp"
#include "diagnosis/peak_table.hpp"
#include "kernels/gpu/gpu_kernels.hpp"

namespace ceiling {
namespace {

namespace kg = kernels::gpu;

// Roofs are medians of timed repeats: a few percent above a peak-clock theoretical value is
// noise (a boost clock above the reported one), more is a counting error.
constexpr double above_theoretical_tolerance = 1.05;

// The lowest sane measured/theoretical per roof. Loose on purpose (a shared or power-capped
// device runs slower); what they catch is a roof off by a factor: half the work counted, a
// kernel that fell back to CUDA cores, a copy that never reached the device.
struct Floor {
    std::string_view roof;
    double fraction;
    std::string_view why;
};
constexpr Floor floors[] = {
    {"fp32_fma", 0.5, "independent FFMA chains on every SM"},
    {"fp64_fma", 0.5, "independent DFMA chains on every SM"},
    // mma.sync (HMMA) issues below Hopper's wgmma rate, the table's figure: 643 TFLOP/s, 0.60
    // of it, on the first H200 (docs/benchmarks.md). Half its work counted would read 0.30, so
    // the floor sits between (0.45): a quarter's slack for a slower or power-capped device,
    // and a roof off by half still fails. fp16 runs the same m16n8k16 at the same rate.
    {"bf16_mma", 0.45, "mma.sync, not wgmma"},
    // wgmma from registers and shared memory: 90 % of the peak-clock figure on an H200.
    {"bf16_wgmma", 0.6, "wgmma m64n256k16 on every SM"},
    {"fp16_mma", 0.45, "mma.sync, not wgmma"},
    {"fp16_wgmma", 0.6, "wgmma m64n256k16 on every SM"},
    // Not yet measured on a device: its floor stays loose until a run says where mma.sync's
    // tf32 rate lies against the table's (the bf16 floor came from such a run).
    {"tf32_mma", 0.25, "mma.sync, not wgmma"},
    {"bf16_cublas", 0.4, "cuBLAS at 8192^3"},
    {"fp16_cublas", 0.4, "cuBLAS at 8192^3"},
    {"tf32_cublas", 0.4, "cuBLAS at 8192^3"},
    {"hbm_read", 0.5, "streaming 16-byte loads"},
    {"hbm_write", 0.5, "streaming 16-byte stores"},
    {"hbm_copy", 0.5, "streaming copy"},
    {"hbm_copy_memcpy", 0.5, "cudaMemcpy device to device"},
    {"pcie_h2d_pinned", 0.4, "DMA from pinned memory"},
    {"pcie_d2h_pinned", 0.4, "DMA to pinned memory"},
    // Pageable copies go through a staging buffer at the host's memcpy speed.
    {"pcie_h2d_pageable", 0.1, "staged through pinned buffers"},
    {"pcie_d2h_pageable", 0.1, "staged through pinned buffers"},
};

const Floor* floor_of(std::string_view roof) {
    for (const auto& f : floors)
        if (f.roof == roof) return &f;
    return nullptr;
}

// Empty when the measured roof is plausible beside its theoretical value; else why not.
std::string implausibility(std::string_view roof, double measured, double theoretical) {
    std::ostringstream why;
    const double ratio = measured / theoretical;
    const Floor* f = floor_of(roof);
    if (!f) {
        why << roof << ": no floor in this test's table (add one)";
    } else if (!(ratio <= above_theoretical_tolerance)) {
        why << roof << ": " << measured << " is " << ratio << "x its theoretical value "
            << theoretical << ": the work counted per repeat or the theoretical table is wrong";
    } else if (!(ratio >= f->fraction)) {
        why << roof << ": " << measured << " is " << ratio << "x its theoretical value "
            << theoretical << ", below the floor " << f->fraction << " (" << f->why << ")";
    }
    return why.str();
}

// An H200 SXM as its driver describes it: 132 SMs, 1980 MHz peak, HBM3e at 3201 MHz on 6144 bits.
constexpr int h200_sms = 132;
constexpr double h200_clock_hz = 1.98e9;

std::optional<double> h200_theoretical_ops(const kg::GpuRoofSpec& r) {
    const auto p = parse_precision(kernels::to_string(r.precision));
    const auto e = parse_engine(kernels::to_string(r.engine));
    if (!p || !e) return std::nullopt;
    const auto t = gpu_theoretical_ops(9, 0, h200_sms, h200_clock_hz, *p, *e);
    return t ? std::optional<double>(t->value) : std::nullopt;
}

TEST(GpuRoofPlausibility, AcceptsARealisticRoofAndRejectsAWrongCount) {
    const kg::GpuRoofSpec* mma = kg::find_gpu_roof("bf16_mma");
    ASSERT_NE(mma, nullptr);
    const auto peak = h200_theoretical_ops(*mma);
    ASSERT_TRUE(peak);  // 132 x 1.98 GHz x 4096 = 1070 TFLOP/s
    EXPECT_EQ(implausibility("bf16_mma", 0.62 * *peak, *peak), "");
    EXPECT_EQ(implausibility("bf16_mma", 1.04 * *peak, *peak), "");  // within noise of the peak
    // The same kernel with each mma counted twice (2 x 62%): above the theoretical value.
    EXPECT_NE(implausibility("bf16_mma", 1.24 * *peak, *peak).find("theoretical table is wrong"),
              std::string::npos);
    // Counted as a quarter of its work, or fallen back to CUDA cores: below the floor.
    EXPECT_NE(implausibility("bf16_mma", 0.15 * *peak, *peak).find("below the floor"),
              std::string::npos);
    // Half its work counted, at the rate the first H200 measured (0.60 of the table's): below
    // the floor too.
    EXPECT_NE(implausibility("bf16_mma", 0.60 / 2 * *peak, *peak).find("below the floor"),
              std::string::npos);
    EXPECT_NE(implausibility("fp16_mma", 0.60 / 2 * *peak, *peak).find("below the floor"),
              std::string::npos);
    // HBM3e: 4.92 TB/s theoretical; a copy that counted only its reads lands at half of 90%.
    const auto hbm = gpu_theoretical_dram(3.201e9, 6144);
    ASSERT_TRUE(hbm);
    EXPECT_EQ(implausibility("hbm_copy", 0.9 * hbm->value, hbm->value), "");
    EXPECT_NE(implausibility("hbm_copy", 0.45 * hbm->value, hbm->value), "");
    EXPECT_NE(implausibility("not_a_roof", 1.0, 1.0).find("no floor"), std::string::npos);
}

TEST(GpuRoofPlausibility, EveryRoofWithATheoreticalValueHasAFloor) {
    // A roof added to the catalogue is checked on the device only if it has a floor here.
    int with_theoretical = 0;
    for (const auto& r : kg::gpu_roofs()) {
        const bool has_theoretical =
            (r.kind == kg::RoofKind::compute && h200_theoretical_ops(r)) ||
            (r.kind == kg::RoofKind::bandwidth && (r.level == "HBM" || r.level == "PCIe"));
        if (!has_theoretical) continue;
        ++with_theoretical;
        EXPECT_NE(floor_of(r.name), nullptr) << r.name;
    }
    EXPECT_GE(with_theoretical, 10);
}

// ---- on a GPU --------------------------------------------------------------------------------

TEST(GpuRoofs, EachMeasuredRoofLiesBetweenItsFloorAndItsTheoreticalValue) {
    const auto availability = kg::gpu_availability();
    if (availability.devices.empty()) {
        ASSERT_FALSE(availability.reason.empty()) << "no device and no reason why";
        GTEST_SKIP() << "no GPU: " << availability.reason;
    }
    measure::MachineOptions options;
    options.quick = true;
    std::vector<Absence> absent;
    const auto gpus = measure::measure_gpus(options, absent);
    // Each roof checks its result before it is timed; one that failed is listed in absent.
    for (const auto& a : absent) ADD_FAILURE() << a.what << ": " << a.reason;
    ASSERT_FALSE(gpus.empty());
    int checked = 0;
    for (const auto& g : gpus) {
        for (const auto& r : g.compute_roofs) {
            EXPECT_GT(r.ops_per_s.median, 0) << r.name;
            if (!r.theoretical_ops_per_s) continue;
            ++checked;
            EXPECT_EQ(implausibility(r.name, r.ops_per_s.median, *r.theoretical_ops_per_s), "")
                << g.name << " (" << r.theoretical_basis << ")";
        }
        for (const auto& r : g.bandwidth_roofs) {
            EXPECT_GT(r.bytes_per_s.median, 0) << r.name;
            if (!r.theoretical_bytes_per_s) continue;
            ++checked;
            EXPECT_EQ(implausibility(r.name, r.bytes_per_s.median, *r.theoretical_bytes_per_s), "")
                << g.name << " (" << r.theoretical_basis << ")";
        }
    }
    if (checked == 0)
        GTEST_SKIP() << gpus.front().name << " (compute capability "
                     << gpus.front().compute_capability_major << "."
                     << gpus.front().compute_capability_minor
                     << "): no theoretical value known, nothing to compare with";
}

}  // namespace
}  // namespace ceiling
