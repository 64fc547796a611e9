// FLOPs, DRAM bytes and duration from recorded range-profiler values, with the arithmetic
// written out (perf's parse-metric tests are the model).

#include <gtest/gtest.h>

#include <set>

#include "collectors/cupti/metric_table.hpp"

namespace ceiling::collectors::gpu {
namespace {

// What the range profiler reported for one fp32 GEMM-like kernel (values as recorded).
MetricValues fp32_kernel() {
    return {
        {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 1'000},
        {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 2'000},
        {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 4'294'967'296},  // 4096^3 / 16
        {"dram__bytes_read.sum", 201'326'592},
        {"dram__bytes_write.sum", 67'108'864},
        {"gpu__time_duration.sum", 1'234'567},
    };
}

TEST(GpuMetricTable, Fp32FlopsAreAddPlusMulPlusTwiceFma) {
    // 1000 + 2000 + 2 x 4294967296 = 8589937592
    EXPECT_DOUBLE_EQ(*evaluate(*find_derived_metric("fp32_flop"), fp32_kernel()), 8'589'937'592.0);
}

TEST(GpuMetricTable, DramBytesAreReadPlusWrite) {
    // 201326592 + 67108864 = 268435456 (256 MiB)
    EXPECT_DOUBLE_EQ(*evaluate(*find_derived_metric("dram_bytes"), fp32_kernel()), 268'435'456.0);
    EXPECT_DOUBLE_EQ(*evaluate(*find_derived_metric("dram_read_bytes"), fp32_kernel()), 201'326'592.0);
}

TEST(GpuMetricTable, DurationIsNanosecondsToSeconds) {
    EXPECT_DOUBLE_EQ(*evaluate(*find_derived_metric("duration_s"), fp32_kernel()), 1.234567e-3);
}

TEST(GpuMetricTable, MissingInputMakesTheValueAbsentNotZero) {
    auto v = fp32_kernel();
    v.erase("dram__bytes_write.sum");
    EXPECT_FALSE(evaluate(*find_derived_metric("dram_bytes"), v));
    EXPECT_FALSE(evaluate(*find_derived_metric("fp64_flop"), v));  // no dadd/dmul/dfma recorded
    const auto all = evaluate_all(v);
    EXPECT_EQ(all.count("dram_bytes"), 0u);
    EXPECT_EQ(all.count("fp64_flop"), 0u);
    EXPECT_EQ(all.count("fp32_flop"), 1u);
}

TEST(GpuMetricTable, Fp64AndHalfFollowTheSameConvention) {
    const MetricValues v = {{"smsp__sass_thread_inst_executed_op_dadd_pred_on.sum", 10},
                            {"smsp__sass_thread_inst_executed_op_dmul_pred_on.sum", 20},
                            {"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", 30},
                            {"smsp__sass_thread_inst_executed_op_hadd_pred_on.sum", 1},
                            {"smsp__sass_thread_inst_executed_op_hmul_pred_on.sum", 2},
                            {"smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", 3}};
    EXPECT_DOUBLE_EQ(*evaluate(*find_derived_metric("fp64_flop"), v), 10 + 20 + 2 * 30);
    EXPECT_DOUBLE_EQ(*evaluate(*find_derived_metric("fp16_flop"), v), 1 + 2 + 2 * 3);
}

TEST(GpuMetricTable, TensorOpsAndTotal) {
    // A bf16 GEMM on tensor cores: 2 x 8192^3 = 1099511627776 ops, plus a little fp32 epilogue.
    MetricValues v = {{"sm__ops_path_tensor_src_bf16_dst_fp32.sum", 1'099'511'627'776},
                      {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 0},
                      {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 67'108'864},
                      {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 0}};
    EXPECT_DOUBLE_EQ(*evaluate(*find_derived_metric("tensor_bf16_op"), v), 1'099'511'627'776.0);
    EXPECT_DOUBLE_EQ(*total_operations(v), 1'099'511'627'776.0 + 67'108'864.0);
    // fp16 is one aggregate over both accumulator types (Hopper offers no _dst_ split of it);
    // a per-instruction part alone is not the count.
    v["sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32.sum"] = 5;
    EXPECT_FALSE(evaluate(*find_derived_metric("tensor_fp16_op"), v));
    v["sm__ops_path_tensor_src_fp16.sum"] = 12;
    EXPECT_DOUBLE_EQ(*evaluate(*find_derived_metric("tensor_fp16_op"), v), 12.0);
    EXPECT_FALSE(total_operations({{"dram__bytes_read.sum", 1}}));
}

TEST(GpuMetricTable, RawNamesCoverEveryTermOnce) {
    const auto names = raw_metric_names();
    const std::set<std::string> unique(names.begin(), names.end());
    EXPECT_EQ(unique.size(), names.size());
    for (const auto& m : derived_metrics()) {
        EXPECT_FALSE(m.terms.empty()) << m.name;
        EXPECT_FALSE(m.unit.empty()) << m.name;
        for (const auto& t : m.terms) {
            EXPECT_EQ(unique.count(std::string(t.metric)), 1u) << t.metric;
            // Range-profiler names carry a rollup suffix; a bare base name is a typo here.
            EXPECT_NE(std::string(t.metric).find(".sum"), std::string::npos) << t.metric;
        }
    }
    EXPECT_EQ(find_derived_metric("no_such_metric"), nullptr);
}

}  // namespace
}  // namespace ceiling::collectors::gpu
