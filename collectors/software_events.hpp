#pragma once
// perf_event software events: counted by the kernel, so they work in VMs and containers
// that expose no PMU. task-clock (CPU time of the counted tasks), context switches, CPU
// migrations, page faults.

#include <span>
#include <string_view>
#include <vector>

#include "collectors/collector.hpp"
#include "collectors/perf_events.hpp"

namespace ceiling::collectors {

struct SoftwareEvent {
    std::string_view name;       // reading name
    std::string_view perf_name;  // what `perf stat -e` calls it
    std::uint64_t config;        // PERF_COUNT_SW_*
    std::string_view unit;
    double scale;  // raw count -> unit
};

std::span<const SoftwareEvent> software_events();
const SoftwareEvent* find_software_event(std::string_view name);  // by name or perf_name
CounterSpec software_counter_spec(const SoftwareEvent& e);
std::vector<CounterSpec> software_counter_specs();  // every event in the table

// Opens task-clock on the calling thread and closes it.
Capability probe_software_events(PerfEventApi& api = system_perf_event_api(),
                                 const PerfEnvironment* env = nullptr);

// Software events around a region, for one target (by default every thread of this
// process, including threads it creates while counting).
class SoftwareEventCollector : public Collector {
  public:
    explicit SoftwareEventCollector(CountTarget target = CountTarget::this_process(),
                                    PerfEventApi& api = system_perf_event_api());
    std::string_view name() const override { return "perf_event software events"; }
    Capability probe() override { return probe_software_events(*api_); }
    // For an exec target (CountTarget::exec_child) the kernel starts the counters at exec.
    void start() override;
    Readings stop() override;
    Readings read() override;

  private:
    CountTarget target_;
    PerfEventApi* api_;
    std::optional<PerfEventSet> set_;
};

}  // namespace ceiling::collectors
