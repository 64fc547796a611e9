// Judging a region again against roofs measured after its run (`run`'s roof check) or beside
// its suite case, where those moved from the profile's: which are adopted, and what is said;
// and at the cores left were its busy cores on threads that record no ranges not its own.
#include <algorithm>
#include <cstdio>
#include <functional>

#include "agent/judge/region_judging.hpp"
#include "diagnosis/format.hpp"
#include "diagnosis/run_record.hpp"

namespace ceiling::judge {
namespace {

// "fp32_fma256 54 %, DRAM 0 %": each roof a diagnosis compared against, and its fraction.
std::string fractions_of(const Diagnosis& d) {
    std::string out;
    for (const auto& c : d.roofs)
        if (c.fraction)
            out += std::string(out.empty() ? "" : ", ") +
                   (c.kind == RoofKind::compute ? c.roof : c.level) + " " +
                   std::to_string(static_cast<int>(std::lround(*c.fraction * 100))) + " %";
    return out;
}

std::string rate_of(const RoofCheck& c) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.1f %s", c.now_per_s / 1e9,
                  c.kind == RoofKind::compute ? "Gop/s" : "GB/s");
    return buf;
}

std::string named(const RoofCheck& c) {
    return (c.kind == RoofKind::compute ? c.kernel : "DRAM " + c.kernel) + " (" +
           std::to_string(c.threads) + (c.threads == 1 ? " thread)" : " threads)");
}

// Puts the roofs of the checks `take` accepts in place of the profile's: only a check taken
// against this very profile's figure (`report --profile` with another profile judges against
// that one). Returns which it used, and those whose looks moved.
struct Substituted {
    std::string used, moved;
};
Substituted substitute_checked_roofs(MachineProfile& p, const std::vector<RoofCheck>& checks,
                                     const std::function<bool(const RoofCheck&)>& take) {
    Substituted out;
    for (const auto& c : checks) {
        if (!take(c) || c.derived() || c.now_per_s <= 0 || !c.slowest_per_s) continue;
        Summary* figure = nullptr;
        if (c.kind == RoofKind::compute) {
            for (auto& r : p.compute_roofs)
                if (r.name == c.kernel && r.threads == c.threads) figure = &r.ops_per_s;
        } else {
            for (auto& r : p.bandwidth_roofs)
                if (r.level == "DRAM" && r.kernel == c.kernel && r.threads == c.threads)
                    figure = &r.bytes_per_s;
        }
        if (!figure || figure->median != c.profile_per_s) continue;
        std::string what =
            named(c) + " " + rate_of(c) + ", " + fixed(c.ratio(), 2) + " x the profile's";
        if (c.kind == RoofKind::compute) {
            figure->median = c.now_per_s;
        } else {
            // One stream kernel is looked at (the one the work was first judged against);
            // which kernel's roof judges it depends on its rate (roofline.hpp), so DRAM's
            // other kernels at these threads get the same share of the host.
            for (auto& r : p.bandwidth_roofs)
                if (r.level == "DRAM" && r.threads == c.threads) r.bytes_per_s.median *= c.ratio();
            what += " (the other DRAM kernels' roofs scaled alike)";
        }
        out.used += std::string(out.used.empty() ? "" : "; ") + what;
        if (moved_within(c))
            out.moved += std::string(out.moved.empty() ? "" : "; ") + named(c) + " between " +
                         fixed(c.slowest_ratio().value_or(0), 2) + " and " + fixed(c.ratio(), 2) +
                         " x the profile's";
    }
    return out;
}

}  // namespace

// A suite case is judged against the roofs measured in turns with it (RoofCheck::beside;
// suite.cpp): the variants of a shape are compared as ratios of times taken in the same
// rounds, and a fraction of a roof is a ratio too. The profile's figure was measured minutes
// or days before, and a shared host gives a share of the cores and of DRAM that moves (0.54
// of the profile's FMA roof seen for one shape, 0.9 for the next). The best look is what the
// host gave while the case ran. Where the looks disagreed beyond roof_check_tolerance the
// host moved during the rounds; the best look still judges (the profile, taken at another
// moment, says less about these rounds: with it, decode GEMMs streaming at 0.93 of the read
// roof beside them read 1.1-1.2 x the profile's, "above the roof"), and a finding says the
// case may have run while the host gave less, so its fraction may be higher than shown. Only
// a check taken against this very profile's roof replaces it (`report --profile` with another
// profile judges against that one). Returns the profile to judge against, the findings that
// say which roofs came from where.
MachineProfile roofs_beside(const RunRecord& record, const RecordedRegion& reg,
                            std::vector<Finding>& findings) {
    MachineProfile p = *record.machine_profile;
    const auto s = substitute_checked_roofs(p, record.roof_checks, [&](const RoofCheck& c) {
        return std::find(c.beside.begin(), c.beside.end(), reg.path) != c.beside.end();
    });
    if (!s.used.empty())
        findings.push_back({FindingKind::assumption,
                            "judged against the roofs measured in turns with it: " + s.used +
                                " (what the host gave while it ran)"});
    if (!s.moved.empty())
        findings.push_back({FindingKind::contention,
                            "the roofs measured in turns with it moved: " + s.moved +
                                ": judged against the best look; where it ran while the host "
                                "gave less, its fractions are higher than shown"});
    return p;
}

// A run's roofs measured again right after it (check_roofs) are evidence, not its roofs: the
// program ran before them, maybe while the host gave what the profile says. They count where
// they moved beyond the tolerance in agreeing looks, in two ways:
// - work that ran above the profile's roof, and within the roofs measured right after, is
//   judged against those: the host gave more than when the profile was measured, and the
//   program shows it did then too (such work read "above the roof", bound unknown; this
//   VM's host gave 1.45 x the profile's DRAM roof right after one run, 0.83 x after another);
// - otherwise, where the region reads another bound against them, the verdict sits near a
//   line the host's share moves it across: said, with what it would read (a decode step at
//   57 % of the profile's DRAM roof, "latency bound", read 69 % of what the host gave right
//   after).
void weigh_roof_checks(const RunRecord& record, const RecordedRegion& reg, Diagnosis& d,
                       const Thresholds& t, bool counted) {
    if (record.kind != RecordKind::run || record.roof_checks.empty()) return;
    MachineProfile p = *record.machine_profile;
    const auto s = substitute_checked_roofs(p, record.roof_checks, [](const RoofCheck& c) {
        return outside_tolerance(c) && !moved_within(c);
    });
    if (s.used.empty()) return;
    auto alt = judge_region(p, reg, t, counted, cpu_limits(record));
    if (!alt || !alt->bound) return;
    if (d.verdict == Verdict::above_roof && alt->verdict != Verdict::above_roof) {
        alt->findings.push_back(
            {FindingKind::assumption,
             "judged against the roofs measured right after the run (" + s.used +
                 "): it ran above the profile's, so the host gave more than when the profile "
                 "was measured"});
        d = std::move(*alt);
        return;
    }
    if (alt->bound == d.bound) return;
    const std::string fractions = fractions_of(*alt);
    // Unstable, not contention: the run's contention finding says other work competed for
    // the CPUs, which this does not show.
    d.findings.push_back(
        {FindingKind::unstable,
         "against the roofs measured right after the run (" + s.used + ") it reads " +
             alt->diagnosis + " (" + fractions +
             "): the host's share moved between the profile and the run, and the verdict is "
             "near a line that moves with it: judge the distribution (--repeat), or measure "
             "the profile again on a quieter host"});
}

// Busy cores are its process's, and CPU time cannot tell a region's helpers (an OpenMP team,
// a BLAS pool: its work) from threads working beside it (a loader, a pin-memory or logging
// thread: not its work) when neither records ranges. It is judged as if they were helpers;
// where at least a quarter core of its busy cores was on such threads and, at the cores left
// without them, it reads another bound (not above the roof: then they did its work), the
// other reading is said with the way to settle it. A model loop at its 1-thread FMA roof beside
// a decoding thread read "latency bound, 54 %" at the 1.84 cores of both, without a word.
void weigh_unranged_threads(const MachineProfile& profile, const RecordedRegion& reg, Diagnosis& d,
                            const Thresholds& t, bool counted, const CpuLimits& limits) {
    constexpr double at_least_cores = 0.25;
    if (!reg.busy_cores || !reg.unranged_busy_cores || *reg.unranged_busy_cores < at_least_cores ||
        !d.bound)
        return;
    RecordedRegion without = reg;
    const double u = *reg.unranged_busy_cores;
    without.busy_cores = std::max(0.0, *reg.busy_cores - u);
    if (without.peak_busy_cores)
        without.peak_busy_cores = std::max(*without.busy_cores, *without.peak_busy_cores - u);
    without.unranged_busy_cores.reset();
    const auto alt = judge_region(profile, without, t, counted, limits);
    if (!alt || !alt->bound || alt->bound == d.bound || alt->verdict == Verdict::above_roof) return;
    // Right after the finding that says which cores it was judged at.
    d.findings.insert(
        d.findings.begin() + std::min<std::ptrdiff_t>(1, std::ssize(d.findings)),
        {FindingKind::assumption,
         fixed(u, 2) + " of its " + fixed(*reg.busy_cores, 2) +
             " busy cores were on threads that record no ranges: judged as its helpers (an "
             "OpenMP team, a BLAS pool), but they may be work beside it (a loader, a "
             "pin-memory or logging thread), which CPU time cannot tell apart; were they not "
             "its work, at the " +
             fixed(*without.busy_cores, 2) + " cores left it reads " + alt->diagnosis + " (" +
             fractions_of(*alt) +
             "): a range around that other work on its thread settles it (then not counted "
             "here, as a pipeline's stage)"});
}

}  // namespace ceiling::judge
