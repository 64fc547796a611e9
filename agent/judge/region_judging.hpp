#pragma once
// Inside judge_record: how one region is judged (judge_region.cpp), shared with judging it
// again against roofs measured right after the run or beside a suite case
// (roof_rejudge.cpp). Not an interface for other parts of ceiling.

#include <optional>
#include <string>
#include <vector>

#include "agent/record_names.hpp"
#include "diagnosis/diagnosis.hpp"
#include "diagnosis/process_evidence.hpp"
#include "diagnosis/run_record.hpp"
#include "diagnosis/thresholds.hpp"

namespace ceiling::judge {

// Busy cores of other work (other processes, or those a region's process started) from which
// that work counts as competing with the region for CPUs: below it, the sampler's noise.
inline constexpr double competing_cores_min = 0.25;

// A lever the cores a region left idle point at: a finding, and the first move's prefix.
struct IdleCores {
    Finding finding;
    std::string move;
};
// Cores the host left idle while it was open, where the roof nearest it is idle_headroom_ratio
// as high at every CPU it could use (idle_cores.cpp); `d` its diagnosis at the cores judged.
std::optional<IdleCores> idle_cores(const MachineProfile& profile, Measurement m,
                                    const Thresholds& t, const RecordedRegion& reg,
                                    const Diagnosis& d, const CpuLimits& limits);
// Its process's threads queued for a CPU while it was open as much as they ran
// (idle_cores.cpp).
// `cpus`: those the program could use (usable_cpus); where known and its own team outnumbered
// the CPUs other work left free, the move names the pool setting and its value.
std::optional<IdleCores> queued_for_cpu(const Thresholds& t, const RecordedRegion& reg,
                                        std::optional<double> cpus = std::nullopt);
// Its program's threads shared its work but took turns, with a CPU idle (idle_cores.cpp).
std::optional<IdleCores> took_turns(const MachineProfile& profile, const Thresholds& t,
                                    const RecordedRegion& reg, const CpuLimits& limits);

// A run's serial stage: a top-level range whose instances, one at a time, spanned most of the
// wall time, computing, while other threads' ranges ran beside it and CPUs idled: the run
// lasts as long as it does; else one process of its tree busy about a core over most of the
// run while its others did a little beside it and CPUs idled (serial_stage.cpp). A finding
// and the run's first move's prefix.
std::optional<IdleCores> serial_stage(const RunRecord& record);

// A run whose work one thread did, busy most of the time, with CPUs beside it idle: whatever
// bounds its code, they are a lever if its work divides (idle_cores.cpp).
std::optional<Finding> one_thread_busy(const ProcessAccounting& p, std::optional<double> cpus);

// Resident memory that kept rising after the run's first quarter, in each quarter after it:
// a finding with the rate and, against the run's capacity, when it would fill
// (footprint_growth.cpp).
std::optional<Finding> footprint_growth(const RunRecord& record);

// A one-process region whose working threads outnumbered its busy cores (not so far that they
// took turns) with instances too short for the sampler's looks to show the cores it held at
// once: the finding says so and which --interval would (idle_cores.cpp).
std::optional<Finding> held_cores_unresolved(const MachineProfile& profile, const Thresholds& t,
                                             const RecordedRegion& reg, const CpuLimits& limits,
                                             std::optional<double> interval_s);

// A region is judged against the roofs of the cores its process really kept busy while it
// was open (make_busy_roofline), not of the threads that recorded it: a range pushed on the
// main thread around work on threads it starts was recorded by one thread. At most the
// cores its limits allow. nullopt for a region with nothing to judge.
// What a region's moves may assume, from what was measured of it (diagnosis/premises.hpp):
// a PyTorch op or module is a library's (and runs in Python), its cores, bytes written and
// threads as the sampler read them, an accelerator where the machine profile lists one.
Evidence evidence_of(const MachineProfile& profile, const RecordedRegion& reg);

std::optional<Diagnosis> judge_region(const MachineProfile& machine, const RecordedRegion& reg,
                                      const Thresholds& t, bool counted, const CpuLimits& limits);
// A range on the host (a kernel region, or work declared for the GPU, runs on the device)
// (judge_region.cpp).
bool on_host(const RecordedRegion& reg);

// A suite case's profile with the roofs measured beside it in place of the profile's, and
// findings saying which (none: the record's profile).
MachineProfile roofs_beside(const RunRecord& record, const RecordedRegion& reg,
                            std::vector<Finding>& findings);
// A run's region judged again against the roofs measured right after the run, where they
// moved: adopted or said (roof_rejudge.cpp).
void weigh_roof_checks(const RunRecord& record, const RecordedRegion& reg, Diagnosis& d,
                       const Thresholds& t, bool counted);
// A run's region whose busy cores were partly on threads that record no ranges: what it
// reads without them, where that is another bound (roof_rejudge.cpp).
void weigh_unranged_threads(const MachineProfile& profile, const RecordedRegion& reg, Diagnosis& d,
                            const Thresholds& t, bool counted, const CpuLimits& limits);

// Storage near its roof while it was open: the I/O row decides it (region_system.cpp); true
// where it did.
bool weigh_storage(const MachineProfile& profile, const RecordedRegion& reg, Diagnosis& d,
                   const Thresholds& t);
// Much of its program's CPU time while it was open in the kernel: said, first among the moves.
void weigh_kernel_time(const RecordedRegion& reg, Diagnosis& d, const Thresholds& t);
// Where the run is kernel bound and its top-level ranges held under a quarter of its kernel
// time while open: a finding that the bound is the process's (setup's page faults), its
// regions judged on their own (region_system.cpp).
std::optional<Finding> kernel_time_outside_regions(const RunRecord& record,
                                                   std::optional<double> system_s);
// A run region that declares bytes but no working set, where twice its largest process's peak
// resident memory (exact, and more than its system calls moved) fits a level inside the
// outermost: the region with that working set, and the finding saying why (region_system.cpp).
// Judged against the outermost level, a loop over 3 MiB in L3 read as a DRAM stream.
struct FootprintBound {
    RecordedRegion region;
    Finding finding;
};
std::optional<FootprintBound> footprint_bounded(const RunRecord& record, const RecordedRegion& reg);

// A latency-bound region whose instances are many ops of a few microseconds each: the
// framework's per-op cost is its time; said, and first among its moves (region_system.cpp).
void weigh_tiny_ops(const RunRecord& record, const RecordedRegion& reg, Diagnosis& d,
                    const Thresholds& t);

// A region with instances still open when their process ended beside closed ones: those were
// left out of its timing (region_aggregate.cpp), and this says so.
std::optional<Finding> cut_short(const RecordedRegion& reg);

// A range so short that ceiling's recording is a tenth or more of its median instance.
std::optional<Finding> recording_inside(const RunRecord& record, const RecordedRegion& reg);


}  // namespace ceiling::judge
