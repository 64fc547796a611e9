#pragma once
// CPU PMU counters through libpfm4 (event names -> encodings) and perf_event (counting):
// cycles, instructions, FLOPs from the model's FLOP events, DRAM bytes from uncore
// memory-controller CAS counts or, where those are not exposed, from last-level-cache
// misses labelled as an estimate. What to count comes from pmu_tables; how counts become
// FLOPs and bytes from pmu_metrics.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectors/collector.hpp"
#include "collectors/fs_root.hpp"
#include "collectors/perf_environment.hpp"
#include "collectors/perf_events.hpp"
#include "collectors/pfm_api.hpp"
#include "collectors/pmu_tables.hpp"

namespace ceiling::collectors {

// The seams a PMU collector uses; null members mean the real ones.
struct PmuBackends {
    const PfmApi* pfm = nullptr;
    PerfEventApi* perf = nullptr;
    const FsRoot* root = nullptr;
    const PerfEnvironment* environment = nullptr;
};

struct PmuOptions {
    std::vector<std::string> flop_groups = {std::string(group_flops)};
    bool memory = true;  // DRAM bytes: uncore CAS where allowed, else the estimate
    // Further events, already resolved (event_names.hpp), reported as "event:NAME".
    std::vector<CounterSpec> extra;
    double min_running_fraction = default_min_running_fraction;
};

// What a PMU collector would count on this machine, or why it cannot.
struct PmuPlan {
    Capability capability;
    std::optional<std::string> pmu;  // libpfm4's model name
    const UarchEvents* table = nullptr;
    std::vector<CounterSpec> core;    // counted on the target's threads
    std::vector<CounterSpec> uncore;  // CPU-wide (memory controllers)
    std::vector<int> uncore_cpus;
    const ByteRecipe* bytes = nullptr;
    std::optional<int> hardware_counters;  // counters the core events share
    std::vector<std::string> notes;        // what is left out and why
};

// Opens (and closes) a cycles counter on the calling thread: is a CPU PMU usable here?
Capability probe_cpu_pmu(PerfEventApi& api, const PerfEnvironment& env);

PmuPlan plan_pmu_events(const PmuOptions& options, const PmuBackends& backends);
// The same for a PMU already probed (`cpu_pmu` from probe_cpu_pmu): backends.pfm is used only
// when it is available.
PmuPlan plan_pmu_events(const PmuOptions& options, const PmuBackends& backends, Capability cpu_pmu);

// Memory-controller (uncore) counters: is a memory-controller PMU exposed, may this
// process open CPU-wide events, and does one open? Detail names the PMUs.
Capability probe_memory_controller(const FsRoot& root, PerfEventApi& api,
                                   const PerfEnvironment& env);

class PmuCollector : public Collector {
  public:
    explicit PmuCollector(CountTarget target = CountTarget::this_process(), PmuOptions options = {},
                          PmuBackends backends = {});
    ~PmuCollector() override;
    std::string_view name() const override { return "CPU PMU"; }
    Capability probe() override;
    void start() override;
    // Readings: "cycles", "instructions", "instructions_per_cycle", "fp_ops" and
    // "fp_ops_<precision>" (flop), "dram_bytes" (bytes; estimate when from cache misses),
    // and every raw event as "event:NAME" (count).
    Readings stop() override;
    Readings read() override;
    const PmuPlan& plan();

  private:
    CountTarget target_;
    PmuOptions options_;
    PmuBackends backends_;
    std::unique_ptr<PfmApi> own_pfm_;
    std::optional<PerfEnvironment> own_env_;
    std::optional<PmuPlan> plan_;
    std::optional<PerfEventSet> core_set_;
    std::optional<PerfEventSet> uncore_set_;
    Readings derive() const;
};

}  // namespace ceiling::collectors
