#include "agent/machine/pmu_self_validation.hpp"

#include <algorithm>
#include <fstream>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/store/atomic_file.hpp"
#include "agent/version.hpp"
#include "kernels/cpu_features.hpp"
#include "kernels/roofs/bandwidth.hpp"
#include "kernels/roofs/compute.hpp"

namespace ceiling::measure {

namespace {

// Double-precision FMA kernels, widest first: FP_ARITH counts them per width, so the
// widest exercises the largest factor of the formula.
constexpr std::string_view flop_kernels[] = {"fp64_fma512", "fp64_fma256", "fp64_fma128",
                                             "fp64_scalar"};

// A buffer this many times the last-level cache is streamed from DRAM, not from cache.
constexpr std::size_t llc_multiple = 4;
constexpr std::size_t min_stream_bytes = std::size_t{64} << 20;
constexpr std::size_t max_stream_bytes = std::size_t{1} << 30;

// What the cached verdicts hold for: this boot of this machine (the kernel's boot id), this
// build, the kernel checked and the counters the plan chose. Empty (no caching) without a
// boot id.
std::string cache_key(const std::string& kernel, const collectors::PmuPlan& plan,
                      const PmuSelfValidationOptions& options) {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string boot;
    if (!std::getline(in, boot) || boot.empty()) return {};
    return "boot " + boot + "; ceiling " + std::string(version_string()) + " " + std::string(git_commit()) +
           "; kernel " + kernel + " x " + std::to_string(options.iterations) + "; stream " +
           std::to_string(options.stream_bytes) + "; flops " + (plan.table && !plan.table->flops.empty() ? "yes" : "no") +
           "; bytes " + (plan.bytes ? (plan.bytes->estimate ? "estimate" : "yes") : "no");
}

nlohmann::json optional_json(const std::optional<collectors::Validation>& v) {
    return v ? validation_json(*v) : nlohmann::json(nullptr);
}
std::optional<collectors::Validation> optional_from_json(const nlohmann::json& j) {
    if (j.is_null()) return std::nullopt;
    return validation_from_json(j);
}

// The cached verdicts when the file holds them for `key`.
bool read_cache(const std::filesystem::path& path, const std::string& key, PmuSelfValidation& out) {
    std::ifstream in(path);
    if (!in) return false;
    try {
        const auto j = nlohmann::json::parse(in);
        if (j.at("key").get<std::string>() != key) return false;
        out.flops = optional_from_json(j.at("flops"));
        out.bytes = optional_from_json(j.at("bytes"));
        out.from_cache = true;
        return true;
    } catch (const std::exception&) {
        out.flops.reset();
        out.bytes.reset();
        return false;
    }
}

void write_cache(const std::filesystem::path& path, const std::string& key, const PmuSelfValidation& v) {
    try {
        std::error_code ec;
        std::filesystem::create_directories(path.parent_path(), ec);
        const nlohmann::json j = {{"key", key}, {"flops", optional_json(v.flops)}, {"bytes", optional_json(v.bytes)}};
        store::write_file_atomically(path, j.dump(1) + "\n");
    } catch (const std::exception&) {
        // Not kept: the next run measures again.
    }
}

}  // namespace

nlohmann::json validation_json(const collectors::Validation& v) {
    return {{"verdict", std::string(collectors::to_string(v.verdict))},
            {"expected", v.expected},
            {"measured", v.measured ? nlohmann::json(*v.measured) : nlohmann::json(nullptr)},
            {"ratio", v.ratio ? nlohmann::json(*v.ratio) : nlohmann::json(nullptr)},
            {"tolerance", v.tolerance},
            {"explanation", v.explanation}};
}

collectors::Validation validation_from_json(const nlohmann::json& j) {
    collectors::Validation v;
    const auto verdict = collectors::parse_verdict(j.at("verdict").get<std::string>());
    if (!verdict) throw std::runtime_error("unknown PMU check verdict");
    v.verdict = *verdict;
    v.expected = j.at("expected").get<double>();
    if (!j.at("measured").is_null()) v.measured = j.at("measured").get<double>();
    if (!j.at("ratio").is_null()) v.ratio = j.at("ratio").get<double>();
    v.tolerance = j.at("tolerance").get<double>();
    v.explanation = j.at("explanation").get<std::string>();
    return v;
}

std::size_t default_validation_stream_bytes() {
    // sysfs's size (cache_sizes), not sysconf's: glibc gave a 2-vCPU guest its host's 320 MiB.
    const std::size_t llc = kernels::cache_sizes().l3;
    const std::size_t want = llc > 0 ? llc * llc_multiple : min_stream_bytes;
    std::size_t bytes = std::clamp(want, min_stream_bytes, max_stream_bytes);
    const std::size_t block = kernels::bandwidth_block_floats * sizeof(float);
    return bytes / block * block;
}

bool PmuSelfValidation::trusted() const {
    if (!ran) return false;
    for (const auto* v : {&flops, &bytes})
        if (*v && (*v)->verdict != collectors::Verdict::trusted) return false;
    return flops || bytes;
}

std::optional<ValidationKernel> flop_validation_kernel() {
    const auto& cpu = kernels::cpu_features();
    for (std::string_view name : flop_kernels) {
        const kernels::ComputeKernel* k = kernels::find_compute_kernel(name);
        if (!k || !k->supported(cpu) || k->needs_amx_permission) continue;
        return ValidationKernel{std::string(k->roof),
                                k->instructions_per_iteration * k->ops_per_instruction};
    }
    return std::nullopt;
}

PmuSelfValidation run_pmu_self_validation(const collectors::PmuBackends& backends,
                                          const PmuSelfValidationOptions& options) {
    const std::int64_t iterations = options.iterations;
    PmuSelfValidation out;
    collectors::PmuCollector pmu(collectors::CountTarget::calling_thread(), {}, backends);
    const collectors::Capability cap = pmu.probe();
    if (!cap.available) {
        out.not_run_reason = "CPU PMU unavailable: " + cap.reason;
        return out;
    }
    const auto kernel = flop_validation_kernel();
    if (!kernel) {
        out.not_run_reason = "no double-precision FMA kernel runs on this CPU";
        return out;
    }
    out.ran = true;
    out.kernel = kernel->name;
    out.kernel_flops = kernel->flops_per_iteration * static_cast<double>(iterations);
    const std::string key = options.cache.empty() ? std::string() : cache_key(kernel->name, pmu.plan(), options);
    if (!key.empty() && read_cache(options.cache, key, out)) return out;

    // FLOPs: the kernel alone, on this thread.
    const kernels::ComputeKernel* k = kernels::find_compute_kernel(kernel->name);
    auto ops = std::make_unique<kernels::RoofOperands>();
    kernels::fill_check_operands(*k, *ops);
    pmu.start();
    k->run(iterations, ops.get());
    const collectors::Readings flops = pmu.stop();
    if (pmu.plan().table && !pmu.plan().table->flops.empty()) {
        const collectors::Reading* r = flops.find("fp_ops");
        out.flops = collectors::validate_count("FLOPs", out.kernel_flops,
                                               r ? std::optional<double>(r->value) : std::nullopt,
                                               collectors::flops_tolerance);
    }

    // Bytes: a streaming read of a buffer well beyond the last-level cache.
    if (pmu.plan().bytes) {
        const std::size_t block = kernels::bandwidth_block_floats * sizeof(float);
        const std::size_t bytes =
            options.stream_bytes ? std::max(options.stream_bytes / block, std::size_t{1}) * block
                                 : default_validation_stream_bytes();
        const std::size_t n = bytes / sizeof(float);
        std::vector<float> buffer(n + kernels::bandwidth_array_pad_floats, 1.0f);
        const auto& impl = kernels::best_bandwidth_impl();
        kernels::run_bandwidth_kernel(impl, "read", buffer.data(), n, 1);  // fault the pages in
        constexpr int passes = 2;
        pmu.start();
        const double sum = kernels::run_bandwidth_kernel(impl, "read", buffer.data(), n, passes);
        const collectors::Readings traffic = pmu.stop();
        (void)sum;
        const collectors::Reading* r = traffic.find("dram_bytes");
        out.bytes = collectors::validate_count(
            pmu.plan().bytes->estimate ? "DRAM bytes (estimate)" : "DRAM bytes",
            static_cast<double>(bytes) * passes, r ? std::optional<double>(r->value) : std::nullopt,
            collectors::bytes_tolerance);
    }
    if (!key.empty()) write_cache(options.cache, key, out);
    return out;
}

}  // namespace ceiling::measure
