#pragma once
// Before a PMU is believed, it counts work whose size is known exactly: a compute-roof
// kernel (its FLOPs are instructions x operations per instruction) and, where DRAM bytes
// are measured, a streaming read over a buffer much larger than the last-level cache.
// The verdicts (collectors/pmu_metrics.hpp) go into `ceiling doctor` and decide whether
// measured FLOPs and bytes are used or the diagnosis falls back to analytic counts.

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "collectors/pmu_collector.hpp"
#include "collectors/pmu_metrics.hpp"

namespace ceiling::measure {

struct PmuSelfValidation {
    bool ran = false;
    std::string not_run_reason;  // when !ran
    std::string kernel;          // the compute-roof kernel used
    double kernel_flops = 0;     // its known work
    std::optional<collectors::Validation> flops;
    std::optional<collectors::Validation> bytes;
    bool from_cache = false;  // the verdicts of an earlier check in this boot (options.cache)
    // Trusted when every check that ran agreed; absent checks do not vote.
    bool trusted() const;
};

// One check as JSON (`ceiling doctor --json`, the verdict cache) and back; the reading throws
// on a malformed or unknown value.
nlohmann::json validation_json(const collectors::Validation& v);
collectors::Validation validation_from_json(const nlohmann::json& j);

// The compute kernel used for the FLOP check on this CPU (a double-precision FMA kernel,
// the widest the CPU has), with the FLOPs one call of `iterations` does.
struct ValidationKernel {
    std::string name;
    double flops_per_iteration = 0;
};
std::optional<ValidationKernel> flop_validation_kernel();

struct PmuSelfValidationOptions {
    std::int64_t iterations = 200'000;  // of the compute kernel: 4.8e6 FMA instructions
    std::size_t stream_bytes = 0;       // read twice for the byte check; 0: 4 x LLC, 64 MiB..1 GiB
    // A file keeping the verdicts for this boot, this build and this PMU plan: the checks
    // allocate and stream up to 1 GiB (a few hundred ms), which every `ceiling run` would pay
    // before its program starts. Empty: always measure (`ceiling doctor`). The file is only
    // read when its key matches; one that cannot be written is not an error.
    std::filesystem::path cache;
};

// The buffer the byte check streams by default: 4 x the last-level cache, within limits.
std::size_t default_validation_stream_bytes();

// Runs the checks with a PMU collector on the calling thread. Backends are injectable
// (tests feed recorded counts); default: the real ones.
PmuSelfValidation run_pmu_self_validation(const collectors::PmuBackends& backends = {},
                                          const PmuSelfValidationOptions& options = {});

}  // namespace ceiling::measure
