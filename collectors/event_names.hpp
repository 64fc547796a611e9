#pragma once
// Turns an event name a user typed into a counter, or into an error that lists the close
// matches ("unknown event 'FP_ARITH_INST_RETIRD:SCALAR_DOUBLE'; did you mean
// FP_ARITH_INST_RETIRED:SCALAR_DOUBLE?"). Accepted spellings:
//   software events:      task-clock, page-faults (perf's names) or task_clock_s
//   kernel-described:     PMU/event/ (uncore_imc_0/cas_count_read/, power/energy-pkg/)
//   libpfm4 native:       FP_ARITH_INST_RETIRED:SCALAR_DOUBLE, spr::..., perf::CYCLES

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/fs_root.hpp"
#include "collectors/perf_events.hpp"
#include "collectors/pfm_api.hpp"

namespace ceiling::collectors {

struct EventLookup {
    std::optional<CounterSpec> spec;
    std::string error;                     // one line, naming the event; empty on success
    std::vector<std::string> suggestions;  // close matches, best first
};

EventLookup resolve_event(std::string_view name, const PfmApi& pfm,
                          const FsRoot& root = FsRoot::system());

// Every name resolve_event could accept here (for suggestions and listings).
std::vector<std::string> known_event_names(const PfmApi& pfm,
                                           const FsRoot& root = FsRoot::system());

// Case-insensitive Levenshtein distance.
std::size_t edit_distance(std::string_view a, std::string_view b);

// Up to `max` candidates close to `wanted`: within a few edits (a quarter of its length,
// at least 2), or containing it; closest first.
std::vector<std::string> close_matches(std::string_view wanted,
                                       const std::vector<std::string>& candidates,
                                       std::size_t max = 5);

}  // namespace ceiling::collectors
