#pragma once
// The seam over PAPI: its portable presets (PAPI_TOT_CYC, PAPI_TOT_INS, PAPI_SP_OPS,
// PAPI_DP_OPS where the CPU defines them) and its view of which components work and why
// not ("perf_event: Error libpfm4 no default PMU found"). The logic above it is tested
// with recorded PapiStatus values.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/capability.hpp"
#include "collectors/collector.hpp"
#include "collectors/perf_environment.hpp"

namespace ceiling::collectors {

struct PapiComponent {
    std::string name;  // "perf_event", "perf_event_uncore", "powercap", ...
    std::string description;
    bool disabled = false;
    std::string disabled_reason;
    int counters = 0;
    int native_events = 0;
};

struct PapiStatus {
    bool initialised = false;
    std::string error;          // why PAPI_library_init failed
    std::string version;        // "7.0.0.0"
    int hardware_counters = 0;  // of the CPU component (perf_event)
    bool virtual_machine = false;
    std::string vm_vendor;
    std::vector<PapiComponent> components;
};

// The presets ceiling asks PAPI for, with the unit of their counts.
struct PapiPreset {
    std::string_view name;
    std::string_view unit;
};
inline constexpr PapiPreset papi_presets[] = {{"PAPI_TOT_CYC", "count"},
                                              {"PAPI_TOT_INS", "count"},
                                              {"PAPI_SP_OPS", "flop"},
                                              {"PAPI_DP_OPS", "flop"}};

class PapiApi {
  public:
    virtual ~PapiApi() = default;
    virtual PapiStatus status() = 0;
    virtual bool event_exists(std::string_view name) = 0;
    // Starts counting `events` on the calling thread, multiplexed when they do not fit the
    // counters together. Returns a handle, or -1 with `error` set.
    virtual int start(const std::vector<std::string>& events, bool& multiplexed,
                      std::string& error) = 0;
    // Stops and returns one value per event, in order.
    virtual bool stop(int handle, std::vector<long long>& values, std::string& error) = 0;
};

// The real library, or one that says "built without PAPI".
std::unique_ptr<PapiApi> make_papi_api();

// Whether PAPI can count CPU events here, from its status (pure).
Capability papi_capability(const PapiStatus& status);

// PAPI presets around a region of the calling thread: "papi:PAPI_TOT_CYC", ... Presets
// the CPU does not define are left out with a warning.
class PapiCollector : public Collector {
  public:
    explicit PapiCollector(PapiApi* api = nullptr);
    ~PapiCollector() override;
    std::string_view name() const override { return "PAPI presets"; }
    Capability probe() override;
    void start() override;
    Readings stop() override;

  private:
    std::unique_ptr<PapiApi> own_;
    PapiApi* api_;
    std::vector<std::string> events_;
    std::vector<std::string> warnings_;
    bool multiplexed_ = false;
    int handle_ = -1;
};

}  // namespace ceiling::collectors
