#pragma once
// Events the kernel itself describes under /sys/bus/event_source/devices/PMU: the PMU's
// perf_event type, its format (which config bits each field occupies) and named events
// ("cas_count_read" = "event=0x05,umask=0xcf" with scale and unit). This is how uncore
// memory-controller counters and the RAPL `power` PMU are encoded: from the kernel's own
// tables, through an injectable FsRoot so tests ship a fake machine.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectors/fs_root.hpp"
#include "collectors/perf_events.hpp"

namespace ceiling::collectors {

// One format field: "config:0-7,32-35" -> word "config", bits 0..7 then 32..35.
struct FormatField {
    std::string word;                             // config, config1 or config2
    std::vector<std::pair<int, int>> bit_ranges;  // inclusive, low bits of the value first
};
std::optional<FormatField> parse_format_field(std::string_view text);

struct SysfsEvent {
    std::string pmu;
    std::string event;
    EventEncoding encoding;
    double scale = 1;       // events/NAME.scale: raw count x scale = value in `unit`
    std::string unit;       // events/NAME.unit ("MiB", "Joules"); empty when not given
    std::vector<int> cpus;  // cpumask: where a CPU-wide PMU is opened (one CPU per socket)
};

struct SysfsLookup {
    std::optional<SysfsEvent> event;
    std::string error;  // why not, when absent
};
SysfsLookup resolve_sysfs_event(const FsRoot& root, std::string_view pmu, std::string_view event);

// PMUs named `prefix` or `prefix_N` ("uncore_imc" -> uncore_imc_0, uncore_imc_1, ...).
std::vector<std::string> sysfs_pmus(const FsRoot& root, std::string_view prefix);
// Named events of a PMU (without the .scale/.unit companions).
std::vector<std::string> sysfs_event_names(const FsRoot& root, std::string_view pmu);

}  // namespace ceiling::collectors
