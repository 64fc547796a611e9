#include "diagnosis/memory_parallelism.hpp"

#include <algorithm>

#include "diagnosis/format.hpp"

namespace ceiling {
namespace {

// A chain of dependent loads keeps one line in flight per core (the profile's chase is one);
// two interleaved chains keep two. At most this many per busy core, the loads depend on each
// other: a core streaming keeps dozens in flight (its 1-thread read roof x the latency).
constexpr double dependent_lines_max = 2.0;
// Under this many, even one miss at a time would have moved its bytes faster: the time went
// to other work than waiting on its loads.
constexpr double dependent_lines_min = 0.5;
// Only at levels whose load latency is this many L1 hits or more: there one miss at a time is
// far slower than any loop issues loads (a scalar loop reading L2 runs about as fast as a
// chase through it, so a low count there says nothing of dependence).
constexpr double miss_cost_min = 10;
// Below this many cores busy it waited more than it loaded (idle cores say that).
constexpr double busy_cores_min = 0.75;

// At most this fraction of a roof: a quarter of each line used or less (at half a line the
// rate says little: streams run there for many reasons).
constexpr double partial_fraction_max = 0.25;

const LatencyMeasurement* latency_of(const MachineProfile& p, const std::string& level) {
    for (const auto& l : p.latencies)
        if (l.level == level && l.seconds.median > 0) return &l;
    return nullptr;
}

std::string ns(double s) { return g3(s * 1e9) + " ns"; }

// The bandwidth comparison of a latency-bound CPU diagnosis left of its ridge (or with no
// operations), with a rate and a roof, not above it; nullptr otherwise.
const RoofComparison* left_of_ridge(const Diagnosis& d) {
    if (d.bound != Bound::latency) return nullptr;
    const RoofComparison* memory = nullptr;
    for (const auto& c : d.roofs)
        if (c.kind == RoofKind::bandwidth) memory = &c;
    if (!memory || !memory->achieved_per_s || !memory->roof_per_s || !(*memory->roof_per_s > 0) ||
        !(*memory->achieved_per_s > 0) || memory->verdict == Verdict::above_roof)
        return nullptr;
    // A side unknown (no compute roof to place it) is left: its bytes are what it declared.
    if (const auto pos = ridge_position(d); pos && pos->right) return nullptr;
    return memory;
}

}  // namespace

std::optional<ChainAdvice> dependent_loads(const MachineProfile& profile, const Diagnosis& d,
                                           std::optional<double> busy_cores) {
    // Left of the ridge: its roof is bandwidth's (right of it the bytes do not hold it back).
    const RoofComparison* memory = left_of_ridge(d);
    if (!memory) return std::nullopt;
    const LatencyMeasurement* lat = latency_of(profile, memory->level);
    const LatencyMeasurement* l1 = latency_of(profile, "L1");
    const CacheInfo* l1d = profile.host.cache(1);
    const std::uint64_t line = l1d ? l1d->line_bytes : 0;
    if (!lat || !l1 || lat->seconds.median < miss_cost_min * l1->seconds.median || line == 0 ||
        !busy_cores || *busy_cores < busy_cores_min)
        return std::nullopt;
    const double latency = lat->seconds.median;
    const double in_flight = *memory->achieved_per_s * latency / static_cast<double>(line);
    const double per_core = in_flight / std::max(1.0, *busy_cores),
                 needed = *memory->roof_per_s * latency / static_cast<double>(line);
    if (per_core > dependent_lines_max) return std::nullopt;
    const std::string counted =
        "about " + g3(in_flight) + " cache lines in flight (its " +
        g3(*memory->achieved_per_s / 1e9) + " GB/s x the " + ns(latency) + " " + memory->level +
        " load latency the profile's pointer chase measured / " + std::to_string(line) +
        " B lines), " + g3(per_core) + " per busy core, where the " + memory->level +
        " roof it is judged against needs about " + g3(needed);
    const std::string bound = "; no PMU counted its misses, the rate and the latency bound them";
    // Slower than one miss at a time: its loads' latency is not what holds it (or its bytes
    // undercount the lines it touches); said, and the move left as the ridge side has it.
    if (per_core < dependent_lines_min)
        return ChainAdvice{
            {FindingKind::assumption,
             counted +
                 ": slower than one miss at a time, so not its loads' latency alone: its time "
                 "goes to the work between its loads (instructions, an interpreter, calls, "
                 "waits), unless it touches more lines than its declared bytes (a load of a few "
                 "bytes moves a whole line: then declare the lines)" +
                 bound},
            ""};
    return ChainAdvice{
        {FindingKind::assumption,
         counted +
             ": a miss or two at a time per core, as loads that depend on each other run (each "
             "address the value of an earlier load: a linked list, a tree, a hash chain, an "
             "index array read in the loop), or a loop whose work between loads is that slow" +
             bound},
        // A slow loop (a divide or a call per element) keeps as few lines in flight as a chain:
        // the rate cannot tell them apart, so the move names both.
        "a miss or two at a time (" + g3(per_core) + " lines in flight per busy core, " +
            g3(needed) +
            " needed at the roof): where each load's address comes from the one before (a list, "
            "a tree, a hash chain), break the chain: interleave independent walks (batch the "
            "lookups), prefetch the next nodes ahead, or lay the data out so addresses are "
            "computed, not loaded; where not, the work between its loads holds it (profile "
            "where its instructions go); then "};
}

std::optional<Finding> partial_lines(const MachineProfile& profile, const Diagnosis& d,
                                     std::optional<double> busy_cores) {
    const RoofComparison* memory = left_of_ridge(d);
    const CacheInfo* l1d = profile.host.cache(1);
    if (!memory || memory->level == "L1" || !memory->fraction || !l1d || l1d->line_bytes == 0 ||
        !busy_cores || *busy_cores < busy_cores_min)
        return std::nullopt;
    const double line = static_cast<double>(l1d->line_bytes), used = *memory->fraction * line;
    if (*memory->fraction > partial_fraction_max || used < 1) return std::nullopt;
    return Finding{
        FindingKind::assumption,
        "at " + percent(*memory->fraction) + " of the " + memory->level + " roof its declared " +
            "bytes are " + g3(used) + " B of each " + std::to_string(l1d->line_bytes) +
            " B line the roof streams: if each line it loads gives it about that many (one field "
            "of each struct, a column of a row-major matrix, lookups by index or stride), its "
            "lines already stream near the roof and its bytes undercount them: pack what it "
            "reads (a structure of arrays, a transposed or gathered copy, sorted indices) before "
            "adding bytes in flight; if it uses whole lines, the gap is as its verdict says (no "
            "PMU counted its lines)"};
}

void weigh_memory_parallelism(const MachineProfile& profile, Diagnosis& d, const Evidence& e) {
    if (auto f = partial_lines(profile, d, e.busy_cores)) d.findings.push_back(std::move(*f));
    if (!licensed(Premise::loads_may_depend, e)) return;
    auto c = dependent_loads(profile, d, e.busy_cores);
    if (!c) return;
    if (!c->move.empty()) insert_before_roofline_move(d, c->move);
    d.findings.push_back(std::move(c->finding));
}

}  // namespace ceiling
