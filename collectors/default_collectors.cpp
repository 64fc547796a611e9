#include "collectors/default_collectors.hpp"

#include <memory>

#include "collectors/energy.hpp"
#include "collectors/pmu_collector.hpp"
#include "collectors/process_accounting.hpp"
#include "collectors/software_events.hpp"

namespace ceiling::collectors {

CollectorSet make_region_collectors(const CountTarget& target,
                                    const RegionCollectorOptions& options) {
    CollectorSet set;
    // rusage describes this process (or this thread); for another process the caller has
    // wait4's, so the accounting collector only brackets regions of our own.
    if (target.kind == CountTarget::Kind::calling_thread)
        set.add(std::make_unique<ProcessAccountingCollector>(
            ProcessAccountingCollector::Scope::thread));
    else if (target.kind == CountTarget::Kind::this_process)
        set.add(std::make_unique<ProcessAccountingCollector>(
            ProcessAccountingCollector::Scope::process));
    if (options.software_events) set.add(std::make_unique<SoftwareEventCollector>(target));
    if (options.pmu) set.add(std::make_unique<PmuCollector>(target));
    if (options.energy) set.add(std::make_unique<EnergyCollector>());
    return set;
}

}  // namespace ceiling::collectors
