#pragma once
// An above-roof verdict of the acceptance corpus, measured again in turns with its roof.
//
// A region judged above its roof either saw a faster host than the profile measured (a
// shared host's bandwidth and compute rate move within seconds, and nothing in the guest
// shows it) or counted more work than it did. The first moves the roof too; the second does
// not. So the program runs again a few times, each run between looks at the same roof
// kernel (agent/machine/roof_check.hpp: RoofLook, before and after), and each run's fraction
// is taken against the roof as measured around it. Where those looks held (agreed within the
// roof check's tolerance) and the program still ran above them in every such turn, the work
// is over-counted: a failure, whatever the host did before. Where they moved, or other work
// ran beside, that is the measured reason to set the run aside; where the program ran below
// a roof that held, the first verdict was the host's moment, not the count's.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "diagnosis/machine_profile.hpp"
#include "diagnosis/run_record.hpp"

namespace ceiling::testing {

enum class InTurnsOutcome {
    over_count,     // above the roof measured in turns with it, the roof holding: FAIL
    roof_moved,     // the roof's looks disagreed, or other work ran beside: set aside, with why
    did_not_recur,  // below the roof that held around it: the first run saw a faster host
};

struct InTurns {
    InTurnsOutcome outcome = InTurnsOutcome::roof_moved;
    std::string detail;  // each turn's figures, for the message
};

// What one turn measured: the program's fraction of the roof as measured around it, where
// that roof held (its looks within the roof check's tolerance) and the run could judge.
struct Turn {
    std::optional<double> held_fraction;  // absent: the roof moved, or the run was set aside
};

// The outcome of the turns: over-count where at least two turns held and the program ran above
// `above_ratio` of the roof in every one of them; no recurrence where it ran below in one;
// else the roof moved.
InTurnsOutcome decide(const std::vector<Turn>& turns, double above_ratio);

// The program once more under `ceiling run`: its record, or nullopt with `why` set when the
// run cannot judge (other work measured beside it).
using Rerun = std::function<std::optional<RunRecord>(std::string& why)>;

// Turns of look, run, look for the comparison `above` of region `path` (judged against
// `profile`), each turn's fraction scaled by the roof measured around it; `above_ratio` is
// the product's line (1 + above_roof_tolerance).
InTurns measure_in_turns(const MachineProfile& profile, const std::string& path,
                         const RoofComparison& above, double above_ratio, const Rerun& rerun);

}  // namespace ceiling::testing
