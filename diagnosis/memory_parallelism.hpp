#pragma once
// Whether a latency-bound region left of the ridge waits on one miss at a time. Little's law
// turns its declared bytes per second into cache lines in flight: rate x the level's load
// latency (the profile's pointer chase) / line size. A walk of a linked list keeps about one
// line in flight per core where one core streaming keeps dozens; "more bytes in flight:
// prefetch, more streams" is then the right direction but the wrong first step: its loads
// depend on each other, and the chain is what to break. Without a PMU the misses cannot be
// counted; the rate and the measured latency bound them.

#include <optional>
#include <string>

#include "diagnosis/diagnosis.hpp"
#include "diagnosis/premises.hpp"
#include "diagnosis/machine_profile.hpp"

namespace ceiling {

struct ChainAdvice {
    Finding finding;
    std::string move;  // the first move's prefix, ending in "; then "; empty: none
};

// For a latency-bound CPU diagnosis whose bandwidth comparison is at a level where a load
// costs ten L1 hits or more (both latencies in the profile) and left of the ridge (or with no
// operations declared): where its lines in flight per busy core are at most about two (dependent
// loads) or under half of one (the work between its loads, not their latency: a finding only), the
// finding and the move. `busy_cores`: the cores its process kept busy while it was open (nothing
// where unknown or mostly waiting).
std::optional<ChainAdvice> dependent_loads(const MachineProfile& profile, const Diagnosis& d,
                                           std::optional<double> busy_cores);

// For a latency-bound CPU diagnosis left of the ridge whose bandwidth comparison is beyond L1
// (its lines come from elsewhere) at a quarter of the roof or less (but at least a byte a
// line): the bytes of each line the roof streams that its declared rate amounts to. A load of a
// few bytes moves its whole line (a struct's field, a matrix column, lookups by index): a
// strided sum declaring the floats it used read 6 % of the DRAM roof while its lines streamed
// at the roof. The rate cannot say which; a finding with the figure, no move.
std::optional<Finding> partial_lines(const MachineProfile& profile, const Diagnosis& d,
                                     std::optional<double> busy_cores);

// Adds dependent_loads' and partial_lines' findings to `d` and its move before the roofline's part
// of the first move (after the system's levers already at its front).
// The chain's move and finding only where its loads may depend (Premise::loads_may_depend:
// never a library's dense-tensor op, whose random fills and square roots read "break the
// chain: interleave independent walks").
void weigh_memory_parallelism(const MachineProfile& profile, Diagnosis& d, const Evidence& e);

}  // namespace ceiling
