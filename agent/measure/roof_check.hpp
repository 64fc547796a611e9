#pragma once
// The DRAM roofs a run is judged against, measured again right after the run.
//
// On a shared host the memory system is shared with work ceiling cannot see (other
// tenants of the same server): on a 2-vCPU cloud VM the 2-thread DRAM bandwidth was seen
// to move between ~35 and ~60 GB/s from one minute to the next. A profile measured at a
// good moment would then judge a program that streams memory as well as the machine
// allows at that moment as far from its roof ("latency bound"). So when a run's verdicts
// compare work with a DRAM roof, the same bandwidth kernel is run again at the thread
// counts those roofs use, and the record says what it found. It is evidence, not a new
// roof: the host can change again within seconds (a check right after a run has read 0.57
// of the profile while the run itself had just streamed at 1.1 of it), so verdicts stay
// against the profile, and a check outside the tolerance says how far they may be off.

#include <set>
#include <string>
#include <vector>

#include "diagnosis/machine_profile.hpp"
#include "diagnosis/run_record.hpp"

namespace ceiling::measure {

// Relative difference between today's DRAM bandwidth and the profile's beyond which the run
// is judged at today's: the sweep's own run-to-run spread on a quiet machine stays below it.
inline constexpr double dram_check_tolerance = 0.10;

// Whether a check moved beyond dram_check_tolerance, either way.
inline bool outside_tolerance(const RoofCheck& c) {
    return c.ratio() < 1 - dram_check_tolerance || c.ratio() > 1 + dram_check_tolerance;
}

// Measures the profile's DRAM roof (its best kernel) at each of `threads` that the profile
// has a DRAM roof for, over a working set in the roof's plateau, for a fraction of a second
// each. Thread counts without a DRAM roof in the profile are skipped.
std::vector<RoofCheck> measure_dram_now(const MachineProfile& profile, const std::set<int>& threads);

// One line for the record's notes: what was measured now against the profile.
std::string describe_dram_checks(const std::vector<RoofCheck>& checks);

// For a judged run record: measures the DRAM roofs its verdicts can depend on (a fraction
// of at least `far`) and fills record.roof_checks and a note; nothing when none does.
void check_dram_roofs(RunRecord& record);

}  // namespace ceiling::measure
