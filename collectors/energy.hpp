#pragma once
// Energy from RAPL, for the energy budget: through the powercap sysfs interface
// (/sys/class/powercap/intel-rapl:*, also used for AMD) or the perf `power` PMU, both read
// through an injectable root. Absent, with the reason, when neither is readable: RAPL is
// root-only since Linux 5.10 (CVE-2020-8694), and most VMs do not expose it or read 0.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "collectors/collector.hpp"
#include "collectors/fs_root.hpp"
#include "collectors/perf_environment.hpp"
#include "collectors/perf_events.hpp"

namespace ceiling::collectors {

struct EnergyDomain {
    std::string name;  // "package-0", "dram", "psys"
    std::string path;  // powercap directory, or "power/energy-pkg" for the perf PMU
    std::optional<double> max_range_uj;  // powercap counters wrap at this value
};

// after - before in microjoules, across one wrap of the counter when max_range is known.
double energy_delta_uj(double before_uj, double after_uj, std::optional<double> max_range_uj);

// The readable powercap RAPL domains. Unavailable (with reason and fix) when there are
// none or they cannot be read.
struct PowercapScan {
    std::vector<EnergyDomain> domains;
    Capability capability;
};
PowercapScan scan_powercap(const FsRoot& root);

class EnergyCollector : public Collector {
  public:
    explicit EnergyCollector(const FsRoot& root = FsRoot::system(),
                             PerfEventApi& api = system_perf_event_api(),
                             const PerfEnvironment* env = nullptr);
    std::string_view name() const override { return "RAPL energy"; }
    Capability probe() override;
    void start() override;
    // Readings "energy_<domain>_j" per domain and "energy_j" (packages + DRAM, or psys
    // when that is all there is). A domain that did not advance is low-confidence.
    Readings stop() override;
    Readings read() override;

    // Counts while the calling thread spins for `busy`: a RAPL interface that does not
    // advance under load (some VMs pass it through without data) is not believed.
    Capability verify(std::chrono::milliseconds busy = std::chrono::milliseconds(50));

    const std::vector<EnergyDomain>& domains() const { return domains_; }
    std::string_view interface() const { return interface_; }  // "powercap", "perf power PMU"

  private:
    std::vector<double> read_powercap() const;
    Readings collect(bool stopping);
    const FsRoot* root_;
    PerfEventApi* api_;
    PerfEnvironment env_;
    std::optional<Capability> probed_;
    std::string interface_;
    std::vector<EnergyDomain> domains_;
    std::vector<CounterSpec> perf_specs_;
    std::vector<int> perf_cpus_;
    std::vector<double> begin_uj_;
    std::int64_t begin_ns_ = 0;
    std::optional<PerfEventSet> perf_set_;
};

}  // namespace ceiling::collectors
