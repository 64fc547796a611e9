#include "collectors/cupti/metric_table.hpp"

#include <algorithm>
#include <array>
#include <set>

namespace ceiling::collectors::gpu {
namespace {

// SASS thread-instruction counters: one per thread that executed the instruction with its
// predicate on, so a warp-wide FFMA counts 32 and a multiply-add counts as two operations.
#define CEILING_SASS(op) "smsp__sass_thread_inst_executed_op_" op "_pred_on.sum"

constexpr std::array<MetricTerm, 3> fp64_terms = {{{CEILING_SASS("dadd"), 1}, {CEILING_SASS("dmul"), 1},
                                                   {CEILING_SASS("dfma"), 2}}};
constexpr std::array<MetricTerm, 3> fp32_terms = {{{CEILING_SASS("fadd"), 1}, {CEILING_SASS("fmul"), 1},
                                                   {CEILING_SASS("ffma"), 2}}};
constexpr std::array<MetricTerm, 3> fp16_terms = {{{CEILING_SASS("hadd"), 1}, {CEILING_SASS("hmul"), 1},
                                                   {CEILING_SASS("hfma"), 2}}};
#undef CEILING_SASS

// Tensor-pipe operations by input type, over mma.sync (HMMA) and wgmma (HGMMA) alike.
// Settled on an H200 (2026-12-04): for cuBLAS's bf16 8192^3 GEMM, ncu's
// sm__ops_path_tensor_src_bf16_dst_fp32 read 1.117e12 against the analytic 2*M*N*K of
// 1.100e12, the 1.6 % being its 320-wide tiles overrunning 8192 (coefficient 1).
constexpr std::array<MetricTerm, 1> tensor_bf16_terms = {{{"sm__ops_path_tensor_src_bf16_dst_fp32.sum", 1}}};
// fp16: one aggregate over both accumulator types (the _dst_ split exists only per
// instruction, hmma/hgmma, in gh100's list: `ncu --query-metrics --chip gh100`, 2026-12-04).
constexpr std::array<MetricTerm, 1> tensor_fp16_terms = {{{"sm__ops_path_tensor_src_fp16.sum", 1}}};
constexpr std::array<MetricTerm, 1> tensor_tf32_terms = {{{"sm__ops_path_tensor_src_tf32_dst_fp32.sum", 1}}};
constexpr std::array<MetricTerm, 1> tensor_int8_terms = {{{"sm__ops_path_tensor_src_int8.sum", 1}}};

constexpr std::array<MetricTerm, 2> dram_terms = {{{"dram__bytes_read.sum", 1}, {"dram__bytes_write.sum", 1}}};
constexpr std::array<MetricTerm, 1> dram_read_terms = {{{"dram__bytes_read.sum", 1}}};
constexpr std::array<MetricTerm, 1> dram_write_terms = {{{"dram__bytes_write.sum", 1}}};
// gpu__time_duration is in nanoseconds.
constexpr std::array<MetricTerm, 1> duration_terms = {{{"gpu__time_duration.sum", 1e-9}}};

constexpr std::array<DerivedMetric, 11> table = {{
    {"fp64_flop", "flop", "fp64", "vector", fp64_terms, "DADD + DMUL + 2 x DFMA thread instructions"},
    {"fp32_flop", "flop", "fp32", "vector", fp32_terms, "FADD + FMUL + 2 x FFMA thread instructions"},
    {"fp16_flop", "flop", "fp16", "vector", fp16_terms,
     "HADD + HMUL + 2 x HFMA thread instructions, Nsight Compute's convention: a packed HFMA2 "
     "counts as one instruction, so packed half math is undercounted by up to 2x"},
    {"tensor_bf16_op", "op", "bf16", "matrix", tensor_bf16_terms, "tensor-pipe operations, bf16 in, fp32 accumulate"},
    {"tensor_fp16_op", "op", "fp16", "matrix", tensor_fp16_terms,
     "tensor-pipe operations, fp16 in, fp32 or fp16 accumulate"},
    {"tensor_tf32_op", "op", "tf32", "matrix", tensor_tf32_terms, "tensor-pipe operations, tf32 in, fp32 accumulate"},
    {"tensor_int8_op", "op", "int8", "matrix", tensor_int8_terms, "tensor-pipe operations, int8 in"},
    {"dram_bytes", "bytes", "", "", dram_terms, "bytes read from and written to device memory (HBM)"},
    {"dram_read_bytes", "bytes", "", "", dram_read_terms, "bytes read from device memory"},
    {"dram_write_bytes", "bytes", "", "", dram_write_terms, "bytes written to device memory"},
    {"duration_s", "s", "", "", duration_terms, "GPU duration of the range (kernel replay: one kernel)"},
}};

}  // namespace

bool is_operation_count(const DerivedMetric& m) { return m.unit == "flop" || m.unit == "op"; }

std::span<const DerivedMetric> derived_metrics() { return table; }

const DerivedMetric* find_derived_metric(std::string_view name) {
    for (const auto& m : table)
        if (m.name == name) return &m;
    return nullptr;
}

std::vector<std::string> raw_metric_names() {
    std::set<std::string> names;
    for (const auto& m : table)
        for (const auto& t : m.terms) names.emplace(t.metric);
    return {names.begin(), names.end()};
}

std::optional<double> evaluate(const DerivedMetric& m, const MetricValues& values) {
    double sum = 0;
    for (const auto& t : m.terms) {
        const auto it = values.find(t.metric);
        if (it == values.end()) return std::nullopt;
        sum += t.coefficient * it->second;
    }
    return sum;
}

std::map<std::string, double> evaluate_all(const MetricValues& values) {
    std::map<std::string, double> out;
    for (const auto& m : table)
        if (auto v = evaluate(m, values)) out.emplace(m.name, *v);
    return out;
}

std::optional<double> total_operations(const MetricValues& values) {
    std::optional<double> total;
    for (const auto& m : table) {
        if (!is_operation_count(m)) continue;
        if (auto v = evaluate(m, values)) total = total.value_or(0) + *v;
    }
    return total;
}

}  // namespace ceiling::collectors::gpu
