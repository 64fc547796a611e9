#pragma once
// The one interface every collector implements: probe what is possible here, start
// counting, stop and return readings. The measuring loops in agent/ use only this; vendor
// APIs hide behind their own seams (perf_event_api, papi_api, pfm_api).

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectors/capability.hpp"
#include "collectors/reading.hpp"

namespace ceiling::collectors {

class Collector {
  public:
    virtual ~Collector() = default;
    virtual std::string_view name() const = 0;
    // Cheap and side-effect free beyond opening and closing a test counter.
    virtual Capability probe() = 0;
    // Starts counting. Throws CollectorError when the environment refuses.
    virtual void start() = 0;
    // Stops counting and returns what was measured since start().
    virtual Readings stop() = 0;
    // What was measured since start(), without stopping: for sampling while a workload
    // runs. Collectors that cannot read mid-way return nothing.
    virtual Readings read() { return {}; }
};

// Several collectors around one region: probed once, the unavailable ones left out with
// their reason (reported, never silently), started in order and stopped in reverse so the
// cheapest (clocks) bracket the others as tightly as possible.
class CollectorSet {
  public:
    void add(std::unique_ptr<Collector> c);
    // Probes every collector; returns (name, capability) for each.
    std::vector<std::pair<std::string, Capability>> probe();
    void start();
    Readings stop();
    Readings read();  // every running collector's read(), for sampling
    std::size_t size() const { return collectors_.size(); }

  private:
    struct Entry {
        std::unique_ptr<Collector> collector;
        bool usable = true;
        bool running = false;
    };
    std::vector<Entry> collectors_;
    bool probed_ = false;
};

}  // namespace ceiling::collectors
