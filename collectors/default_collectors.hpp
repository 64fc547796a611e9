#pragma once
// The collectors a measured region gets by default: wall clock and rusage, perf_event
// software events, and the CPU PMU where it is usable. Probing leaves out what this
// machine cannot do, with the reason, so callers need no special cases.
//
//   CollectorSet set = make_region_collectors(CountTarget::this_process());
//   for (const auto& [name, cap] : set.probe()) if (!cap.available) log(name, cap.reason);
//   set.start(); work(); Readings r = set.stop();

#include "collectors/collector.hpp"
#include "collectors/perf_events.hpp"

namespace ceiling::collectors {

struct RegionCollectorOptions {
    bool software_events = true;
    bool pmu = true;      // FLOPs, bytes, cycles, instructions when a PMU is usable
    bool energy = false;  // RAPL: CPU-wide, so only meaningful for whole-machine work
};

CollectorSet make_region_collectors(const CountTarget& target = CountTarget::this_process(),
                                    const RegionCollectorOptions& options = {});

}  // namespace ceiling::collectors
