#pragma once
// The roofs a run is judged against, measured again right after the run.
//
// On a shared host the machine is shared with work ceiling cannot see (other tenants of the
// same server). Memory: on a 2-vCPU cloud VM the 2-thread DRAM bandwidth was seen to move
// between ~35 and ~60 GB/s from one minute to the next. Compute: a program that had run at
// the FMA roof read 0.57 of it in the next run at the same busy cores, with no steal time
// and no other process in the guest (most likely another tenant on the SMT sibling of a
// vCPU, which takes half of the core's ports; the guest cannot see it). A profile measured at a
// good moment would then judge a program that runs as well as the machine allows at that moment as
// far from its roof ("latency bound"). So when a run's verdicts compare work with a roof closely
// enough for it to decide them (a fraction of at least `far`), the same roof kernel is run again at
// the thread counts those roofs use, and the record says what it found. It is evidence, not a new
// roof: the host can change again within seconds (a DRAM check right after a run has read 0.57 of
// the profile while the run itself had just streamed at 1.1 of it), so a run's verdicts stay
// against the profile, and a check outside the tolerance says how far they may be off. The
// suite can do better: it looks at each roof in turns with the cases it judges (suite.cpp),
// and judges them against it where the looks agree (judge_record).

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "diagnosis/machine_profile.hpp"
#include "diagnosis/run_record.hpp"

namespace ceiling::measure {

// One roof's kernel made ready (buffers first-touched, the run calibrated to a few tens of
// milliseconds), to be timed in looks between other work: `run` takes a few looks in a row
// after the run, the suite one look after each round of a shape's cases, so that the roof
// is measured in turns with the cases it judges (suite.cpp).
class RoofLook {
  public:
    // The profile's DRAM roof at `threads` (its best kernel), as measure_dram_now says;
    // nullptr when it cannot be measured here.
    static std::unique_ptr<RoofLook> dram(const MachineProfile& profile, int threads);
    // The profile's compute roof `name` at `threads`; nullptr where the profile or this CPU
    // lacks it.
    static std::unique_ptr<RoofLook> compute(const MachineProfile& profile, const std::string& name,
                                             int threads);
    void look();  // one timed run
    // The best look as what the host gives now, and the slowest; now_per_s 0 before a look.
    RoofCheck check() const;
    void forget() { rates_.clear(); }  // the looks so far, for the next shape's

  private:
    RoofLook() = default;
    RoofCheck base_;
    double work_ = 0;  // bytes or ops per look
    std::function<double()> seconds_;
    std::vector<double> rates_;
};

// Measures the profile's DRAM roof (its best kernel) at each of `threads`, over a working set
// in the roof's plateau, for a fraction of a second each. A thread count without a DRAM roof
// in the profile is checked against the roof the roofline derives for it (roofline.hpp), with
// the kernel and working sets of the roof it was derived from: the figure its verdicts used.
// Thread counts beyond this machine's CPUs, or in a profile with no DRAM roof, are skipped.
std::vector<RoofCheck> measure_dram_now(const MachineProfile& profile, const std::set<int>& threads);

// Measures each (compute roof name, threads) the profile has, with the roof's own kernel, for
// a fraction of a second. Roofs the profile or this CPU lacks are skipped.
std::vector<RoofCheck> measure_compute_now(const MachineProfile& profile,
                                           const std::set<std::pair<std::string, int>>& roofs);

// One line for the record's notes per kind of roof checked: what was measured now against
// the profile, and whether it moved beyond the tolerance.
std::vector<std::string> describe_roof_checks(const std::vector<RoofCheck>& checks);

// For a judged run record: measures the roofs its verdicts can depend on (a fraction of at
// least `far`) and fills record.roof_checks and notes; nothing when none does.
void check_roofs(RunRecord& record);

}  // namespace ceiling::measure
