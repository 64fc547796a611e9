#include "agent/measure/pmu_self_validation.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include <unistd.h>

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

}  // namespace

std::size_t default_validation_stream_bytes() {
    const long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
    const std::size_t want =
        llc > 0 ? static_cast<std::size_t>(llc) * llc_multiple : min_stream_bytes;
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
    return out;
}

}  // namespace ceiling::measure
