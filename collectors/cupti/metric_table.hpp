#pragma once
// GPU work from counters, as data: which range-profiler metrics are read and how FLOPs,
// DRAM bytes and duration are derived from them. The formulas are Nsight Compute's roofline
// conventions, so that `ceiling` and `ncu --metrics` agree on the same kernel:
//   FLOPs per precision = add + mul + 2 x fma   (SASS thread instructions, predicated on)
//   tensor-core ops      = sm__ops_path_tensor_src_<in>_dst_<acc>.sum
//   DRAM bytes           = dram__bytes_read.sum + dram__bytes_write.sum
// Nothing here calls CUPTI; tests feed recorded metric values.

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ceiling::collectors::gpu {

struct MetricTerm {
    std::string_view metric;  // a range-profiler metric, e.g. "dram__bytes_read.sum"
    double coefficient;       // its weight in the sum
};

struct DerivedMetric {
    std::string_view name;       // "fp32_flop", "dram_bytes", "duration_s"
    std::string_view unit;       // "flop", "op", "bytes", "s"
    std::string_view precision;  // "fp32", "bf16", ...; empty for bytes and time
    std::string_view engine;     // "vector" (CUDA cores), "matrix" (tensor cores); empty otherwise
    std::span<const MetricTerm> terms;  // value = sum of coefficient x metric
    std::string_view note;              // the convention and its caveats
};

std::span<const DerivedMetric> derived_metrics();
const DerivedMetric* find_derived_metric(std::string_view name);
// An operation count (FLOPs, tensor-pipe operations), not bytes or time.
bool is_operation_count(const DerivedMetric& m);

// Every raw metric the table reads, sorted and unique: what the range profiler is asked for.
std::vector<std::string> raw_metric_names();

using MetricValues = std::map<std::string, double, std::less<>>;

// Sum of the terms; absent when any term's metric is missing (an unknown is never 0).
std::optional<double> evaluate(const DerivedMetric& m, const MetricValues& values);

// Every derived metric whose inputs are all present, by name.
std::map<std::string, double> evaluate_all(const MetricValues& values);

// Operations of all precisions and engines that were measured (sum of the *_flop and
// tensor_* entries present); absent when none of them was.
std::optional<double> total_operations(const MetricValues& values);

}  // namespace ceiling::collectors::gpu
