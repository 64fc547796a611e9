#include "diagnosis/diagnosis.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string_view>
#include <utility>

#include "diagnosis/json_support.hpp"
#include "diagnosis/format.hpp"

namespace ceiling {
namespace {

std::string unit_of(RoofKind k) { return k == RoofKind::compute ? "ops_per_s" : "bytes_per_s"; }

std::string describe(const RoofComparison& c) {
    return c.kind == RoofKind::compute ? "compute roof " + c.roof : c.level + " bandwidth roof";
}

// Says which signals were missing, so an unknown bound explains itself. A side whose rate
// ran above its roof has no fraction to trust: said so, not "not measured".
std::string why_unknown(const Signals& s, bool compute_above, bool bandwidth_above) {
    if (!s.compute_fraction && !s.bandwidth_fraction && !compute_above && !bandwidth_above)
        return "no roof comparison was possible: operations and bytes were not both measured";
    if (!s.compute_fraction) {
        return compute_above
                   ? "no compute fraction to trust: the operations ran above the compute roof "
                     "(see the note): the decision needs both sides"
                   : "no compute fraction (operations not measured, or no compute roof of this "
                     "precision and engine in the profile): the decision needs both sides";
    }
    if (!s.bandwidth_fraction)
        return bandwidth_above
                   ? "no bandwidth fraction to trust: the bytes ran above the bandwidth roof "
                     "(see the note): the decision needs both sides"
                   : "no bandwidth fraction (bytes not measured, or no bandwidth roof in the "
                     "profile): the decision needs both sides";
    return "no row of the decision table holds";
}

// Why a rate can exceed its roof, by where its count came from. Declared or analytic work
// is the likeliest cause where it is the count (a region's `{bytes=}` ten times what its
// loop moves read 823 % of the copy roof); a counter's where one counted.
std::string above_roof_causes(const RoofComparison& c) {
    if (c.source != Source::analytic) return "a counter that overcounts, or a roof measured low";
    return c.kind == RoofKind::compute
               ? "operations counted larger than what ran, or work of another precision or "
                 "engine than the roof's (declare precision= and engine=), or a roof measured low"
               : "bytes counted larger than what reached " + c.level +
                     " (a working set held in a faster level: declare working_set=), or a roof "
                     "measured low";
}

void add_finding(Diagnosis& d, FindingKind k, std::string detail) {
    d.findings.push_back(Finding{k, std::move(detail)});
}

}  // namespace

RoofComparison compare(RoofComparison c, const Thresholds& t) {
    if (c.achieved_per_s && c.roof_per_s && *c.roof_per_s > 0) {
        c.fraction = *c.achieved_per_s / *c.roof_per_s;
        c.verdict = verdict_for(*c.fraction, t);
    } else {
        c.fraction.reset();
        c.verdict = Verdict::unknown;
    }
    return c;
}

std::optional<RidgePosition> ridge_position(const Diagnosis& d) {
    RidgePosition p;
    for (const auto& c : d.roofs)
        if (c.roof_per_s) (c.kind == RoofKind::compute ? p.compute : p.memory) = &c;
    if (!p.compute || !p.memory || !(*p.memory->roof_per_s > 0)) return std::nullopt;
    p.ridge_ops_per_byte = *p.compute->roof_per_s / *p.memory->roof_per_s;
    const auto rate = [](const RoofComparison* c) { return c->achieved_per_s.value_or(-1.0); };
    if (d.intensity_ops_per_byte) {
        p.right = *d.intensity_ops_per_byte >= p.ridge_ops_per_byte;
    } else if (rate(p.memory) == 0 && rate(p.compute) > 0) {
        // Operations declared with no bytes (work in registers: a loop of exp and log over an
        // L1 array read "use the idle cores; then dependency stalls, ...").
        p.right = p.unbounded = true;
    } else if (rate(p.compute) == 0 && rate(p.memory) > 0) {
        p.right = false;  // bytes with no operations: pure data movement
    } else {
        return std::nullopt;
    }
    return p;
}

Signals signals_of(const Diagnosis& d, const Thresholds& t) {
    Signals s;
    for (const auto& c : d.roofs) {
        if (!c.fraction || c.verdict == Verdict::above_roof || c.verdict == Verdict::unknown)
            continue;
        auto& slot = c.kind == RoofKind::compute ? s.compute_fraction : s.bandwidth_fraction;
        slot = std::max(slot.value_or(0.0), *c.fraction);
    }
    if (d.model_share) s.model_share = d.model_share->share;
    if (d.capacity) s.capacity_fraction = d.capacity->fraction;
    for (const auto& sig : d.system)
        if (sig.name == storage_signal_name) s.storage_fraction = sig.value;
        else if (sig.name == quota_signal_name)
            s.quota_throttled_share = sig.value;
        else if (sig.name == turns_signal_name && sig.fired)
            s.thread_concurrency = sig.value;
        else if (sig.name == storage_wait_signal_name && sig.fired)
            s.storage_wait_threads = sig.value;
        else if (sig.name == outside_wait_signal_name && sig.fired)
            s.outside_wait_threads = sig.value;
    // Time in the kernel bounds it only where its cores were busy: a program that mostly
    // waits spends what CPU time it has in its calls, and what it waits on decides. Low CPU
    // use with most switches involuntary is queueing behind other work, not waiting: its
    // time in the kernel still bounds what it gets of a CPU (a program writing a byte per
    // call read "bound unknown" whenever other work preempted it).
    const bool waited = std::ranges::any_of(d.system, [&](const SystemSignal& g) {
        const bool queued = g.qualifier_value && *g.qualifier_value < t.voluntary_switch_share;
        return g.name == utilisation_signal_name && g.fired && !queued;
    });
    for (const auto& sig : d.system)
        if (sig.name == kernel_signal_name && sig.fired && !waited) s.kernel_time_share = sig.value;
    return s;
}

void conclude(Diagnosis& d, const Thresholds& t) {
    std::erase_if(d.findings, [](const Finding& f) { return f.kind == FindingKind::above_roof; });
    bool compute_above = false, bandwidth_above = false;
    std::optional<double> best;
    for (const auto& c : d.roofs) {
        if (c.verdict == Verdict::above_roof) {
            (c.kind == RoofKind::compute ? compute_above : bandwidth_above) = true;
            add_finding(d, FindingKind::above_roof,
                        "achieved " + g3(*c.achieved_per_s) + " " + unit_of(c.kind) + " is " +
                            g3(*c.fraction) + "x the " + describe(c) + " (" + g3(*c.roof_per_s) +
                            "), not a fraction to trust: " + above_roof_causes(c));
        } else if (c.fraction && c.verdict != Verdict::unknown) {
            best = std::max(best.value_or(0.0), *c.fraction);
        }
    }
    const bool above = compute_above || bandwidth_above;
    d.verdict = above ? Verdict::above_roof : best ? verdict_for(*best, t) : Verdict::unknown;

    const Signals s = signals_of(d, t);
    const Decision decision = decide(s, t);
    d.levers.clear();
    d.also_held.clear();
    if (!decision.row) {
        d.bound.reset();
        d.observation = why_unknown(s, compute_above, bandwidth_above);
        d.diagnosis = "unknown";
        d.first_move =
            "measure what is missing first: NVTX ranges declaring {ops=... bytes=...} around the "
            "hot code, `--torch` for a PyTorch program, or a machine whose PMU `ceiling doctor` "
            "passes";
        return;
    }
    const DecisionRow& row = *decision.row;
    d.bound = row.bound;
    d.observation = std::string(row.observation);
    d.diagnosis = std::string(row.diagnosis);
    d.first_move = first_move_for(row, d.evidence);
    d.levers = levers_for(row, d.evidence);
    // Bounds, once each: a bound's second row (not the model by I/O and by the model's share)
    // adds nothing to the list.
    for (std::size_t i = 1; i < decision.held.size(); ++i) {
        const Bound b = decision.held[i]->bound;
        if (b != row.bound &&
            std::find(d.also_held.begin(), d.also_held.end(), b) == d.also_held.end())
            d.also_held.push_back(b);
    }
}

void insert_before_roofline_move(Diagnosis& d, std::string_view prefix) {
    std::size_t at = std::string::npos;
    for (const auto side : {right_of_ridge_move, left_of_ridge_move, left_of_ridge_l1_move})
        at = std::min(at, d.first_move.find(side));
    // Else before the table's move, which ends it (composed from the row on its evidence).
    if (at == std::string::npos && d.bound) {
        at = 0;
        for (const auto& row : decision_table()) {
            const std::string table = row.bound == *d.bound ? first_move_for(row, d.evidence) : "";
            if (!table.empty() && d.first_move.ends_with(table)) at = d.first_move.size() - table.size();
        }
    }
    d.first_move.insert(at == std::string::npos ? 0 : at, prefix);
}

void to_json(nlohmann::json& j, FindingKind k) {
    j = std::string(enum_name(k, finding_kind_names));
}
void from_json(const nlohmann::json& j, FindingKind& k) {
    k = enum_from_json<FindingKind>(j, finding_kind_names, "finding kind");
}

void to_json(nlohmann::json& j, const RoofComparison& c) {
    const std::string u = unit_of(c.kind);
    j = {{"kind", c.kind},
         {"roof", c.roof},
         {"level", c.level},
         {"kernel", c.kernel},
         {"precision", c.precision},
         {"engine", c.engine},
         {"threads", c.threads},
         {"achieved_" + u, c.achieved_per_s},
         {"roof_" + u, c.roof_per_s},
         {"fraction", c.fraction},
         {"source", c.source},
         {"verdict", c.verdict}};
}
void from_json(const nlohmann::json& j, RoofComparison& c) {
    get_field(j, "kind", c.kind);
    const std::string u = unit_of(c.kind);
    get_field(j, "roof", c.roof);
    get_field(j, "level", c.level);
    get_field(j, "kernel", c.kernel);
    get_optional(j, "precision", c.precision);
    get_optional(j, "engine", c.engine);
    get_field(j, "threads", c.threads);
    get_optional(j, ("achieved_" + u).c_str(), c.achieved_per_s);
    get_optional(j, ("roof_" + u).c_str(), c.roof_per_s);
    get_optional(j, "fraction", c.fraction);
    get_optional(j, "source", c.source);
    get_field(j, "verdict", c.verdict);
}

void to_json(nlohmann::json& j, const Finding& f) { j = {{"kind", f.kind}, {"detail", f.detail}}; }
void from_json(const nlohmann::json& j, Finding& f) {
    get_field(j, "kind", f.kind);
    get_field(j, "detail", f.detail);
}

void to_json(nlohmann::json& j, const RegionShare& r) {
    j = {{"name", r.name}, {"total_s", r.total_s}, {"share", r.share}};
}
void from_json(const nlohmann::json& j, RegionShare& r) {
    get_field(j, "name", r.name);
    get_field(j, "total_s", r.total_s);
    get_field(j, "share", r.share);
}

void to_json(nlohmann::json& j, const ModelShare& m) {
    j = {{"model_s", m.model_s},
         {"wall_s", m.wall_s},
         {"share", m.share},
         {"outside_regions_s", m.outside_regions_s},
         {"before_regions_s", m.before_regions_s},
         {"after_regions_s", m.after_regions_s},
         {"overlapping", m.overlapping},
         {"top_non_model", m.top_non_model}};
}
void from_json(const nlohmann::json& j, ModelShare& m) {
    get_field(j, "model_s", m.model_s);
    get_field(j, "wall_s", m.wall_s);
    get_field(j, "share", m.share);
    get_field(j, "outside_regions_s", m.outside_regions_s);
    get_optional(j, "before_regions_s", m.before_regions_s);
    get_optional(j, "after_regions_s", m.after_regions_s);
    get_field(j, "overlapping", m.overlapping);
    get_field(j, "top_non_model", m.top_non_model);
}

void to_json(nlohmann::json& j, const CapacityEvidence& c) {
    j = {{"footprint_bytes", c.footprint_bytes},
         {"capacity_bytes", c.capacity_bytes},
         {"fraction", c.fraction},
         {"against", c.against}};
}
void from_json(const nlohmann::json& j, CapacityEvidence& c) {
    get_field(j, "footprint_bytes", c.footprint_bytes);
    get_field(j, "capacity_bytes", c.capacity_bytes);
    get_field(j, "fraction", c.fraction);
    get_field(j, "against", c.against);
}

void to_json(nlohmann::json& j, const SystemSignal& s) {
    j = {{"name", s.name},
         {"value", s.value},
         {"threshold", s.threshold},
         {"fired", s.fired},
         {"meaning", s.meaning},
         {"qualifier", s.qualifier},
         {"qualifier_value", s.qualifier_value}};
}
void from_json(const nlohmann::json& j, SystemSignal& s) {
    get_field(j, "name", s.name);
    get_optional(j, "value", s.value);
    get_field(j, "threshold", s.threshold);
    get_field(j, "fired", s.fired);
    get_field(j, "meaning", s.meaning);
    get_optional(j, "qualifier", s.qualifier);
    get_optional(j, "qualifier_value", s.qualifier_value);
}

void to_json(nlohmann::json& j, const LeverAdvice& l) {
    j = {{"lever", l.lever}, {"move", l.move}};
}
void from_json(const nlohmann::json& j, LeverAdvice& l) {
    get_field(j, "lever", l.lever);
    get_field(j, "move", l.move);
}

void to_json(nlohmann::json& j, const Diagnosis& d) {
    j = {{"subject", d.subject},
         {"bound", d.bound},
         {"observation", d.observation},
         {"diagnosis", d.diagnosis},
         {"first_move", d.first_move},
         {"levers", d.levers},
         {"also_held", d.also_held},
         {"verdict", d.verdict},
         {"intensity_ops_per_byte", d.intensity_ops_per_byte},
         {"attainable_ops_per_s", d.attainable_ops_per_s},
         {"level", d.level},
         {"roofs", d.roofs},
         {"model_share", d.model_share},
         {"capacity", d.capacity},
         {"system", d.system},
         {"findings", d.findings},
         {"duration_s", d.duration_s}};
}
void from_json(const nlohmann::json& j, Diagnosis& d) {
    get_field(j, "subject", d.subject);
    get_optional(j, "bound", d.bound);
    get_field(j, "observation", d.observation);
    get_field(j, "diagnosis", d.diagnosis);
    get_field(j, "first_move", d.first_move);
    get_field(j, "levers", d.levers);
    get_field(j, "also_held", d.also_held);
    get_field(j, "verdict", d.verdict);
    get_optional(j, "intensity_ops_per_byte", d.intensity_ops_per_byte);
    get_optional(j, "attainable_ops_per_s", d.attainable_ops_per_s);
    get_optional(j, "level", d.level);
    get_field(j, "roofs", d.roofs);
    get_optional(j, "model_share", d.model_share);
    get_optional(j, "capacity", d.capacity);
    get_field(j, "system", d.system);
    get_field(j, "findings", d.findings);
    get_optional(j, "duration_s", d.duration_s);
}

}  // namespace ceiling
