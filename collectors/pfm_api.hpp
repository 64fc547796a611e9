#pragma once
// The seam over libpfm4, which turns native PMU event names ("FP_ARITH_INST_RETIRED:
// SCALAR_DOUBLE") into perf_event type/config for the CPU it detects. Tests can make it
// assume another CPU: libpfm4 reads LIBPFM_FORCE_PMU (a PMU name as pfm_get_pmu_name()
// returns it, e.g. "spr", "amd64_fam19h_zen4") when it initialises (libpfm(3),
// ENVIRONMENT VARIABLES), so the encodings of Sapphire Rapids and Zen are checked here.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/capability.hpp"
#include "collectors/perf_events.hpp"

namespace ceiling::collectors {

struct PfmEncoding {
    EventEncoding encoding;
    std::string canonical;  // libpfm's fully qualified name with every modifier
};

struct PfmResult {
    std::optional<PfmEncoding> value;
    std::string error;  // libpfm's message when the name is not an event here
};

class PfmApi {
  public:
    virtual ~PfmApi() = default;
    // Initialised, or why not ("not built with libpfm4").
    virtual Capability status() const = 0;
    virtual std::string version() const = 0;
    // The core PMU model libpfm detected (or was forced to), e.g. "spr"; nullopt when it
    // knows none (an unsupported CPU, or a VM hiding the PMU's CPUID leaf).
    virtual std::optional<std::string> host_pmu() const = 0;
    virtual PfmResult encode(std::string_view event) const = 0;
    // "EVENT" and "EVENT:UMASK" names of an active PMU, for suggesting close matches.
    virtual std::vector<std::string> event_names(std::string_view pmu) const = 0;
};

// The real library. With forced_pmu, libpfm4 is re-initialised assuming that PMU model
// until the returned object is destroyed; bare event names are then qualified with it.
// For tests and diagnostics only: libpfm4's state is process-wide, pfm_terminate() does
// not deactivate a model once activated (so a later unforced instance in the same process
// may still see it), and PAPI shares the library.
std::unique_ptr<PfmApi> make_pfm_api(std::optional<std::string> forced_pmu = std::nullopt);

}  // namespace ceiling::collectors
