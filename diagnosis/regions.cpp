#include "diagnosis/regions.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "diagnosis/decision.hpp"
#include "diagnosis/json_support.hpp"
#include "diagnosis/format.hpp"

namespace ceiling {

std::optional<ModelShare> model_share(std::span<const RegionTiming> regions, double wall_s,
                                      std::size_t top_n, const Coverage& coverage) {
    for (std::size_t i = 0; i < regions.size(); ++i) {
        if (regions[i].parent && *regions[i].parent >= regions.size()) {
            throw std::invalid_argument("region '" + regions[i].name +
                                        "' has a parent index out of range");
        }
    }
    // Nearest model ancestor, and whether any ancestor exists (depth-bounded: a cycle throws).
    auto ancestors = [&](std::size_t i, auto&& visit) {
        std::size_t steps = 0;
        for (auto p = regions[i].parent; p; p = regions[*p].parent) {
            if (++steps > regions.size())
                throw std::invalid_argument("regions' parents form a cycle");
            visit(*p);
        }
    };
    if (!(wall_s > 0) ||
        std::none_of(regions.begin(), regions.end(), [](const RegionTiming& r) { return r.model; }))
        return std::nullopt;

    // Time in the regions each one encloses (model ones included): a parent's own time is
    // what is left, so a parent and its children are never listed with the same seconds.
    std::vector<double> enclosed(regions.size(), 0.0);
    for (const auto& r : regions)
        if (r.parent) enclosed[*r.parent] += r.total_s;
    const bool split = std::all_of(regions.begin(), regions.end(),
                                   [](const RegionTiming& r) { return r.non_model_s.has_value(); });

    ModelShare m;
    m.wall_s = wall_s;
    double top_level_s = 0, outermost_model_s = 0, listed_s = 0;
    std::vector<RegionShare> non_model;
    for (std::size_t i = 0; i < regions.size(); ++i) {
        bool inside_model = false;
        ancestors(i, [&](std::size_t a) { inside_model = inside_model || regions[a].model; });
        const auto& r = regions[i];
        if (!r.parent) top_level_s += r.total_s;
        if (inside_model) continue;  // already counted in its model ancestor
        if (r.model) {
            outermost_model_s += r.total_s;
            continue;
        }
        const double own = split ? *r.non_model_s : std::max(0.0, r.total_s - enclosed[i]);
        listed_s += own;
        if (own > 0) non_model.push_back(RegionShare{r.name, own, own / wall_s});
    }
    m.model_s = coverage.model_s.value_or(outermost_model_s);
    m.outside_regions_s = std::max(0.0, wall_s - coverage.regions_s.value_or(top_level_s));
    // Exact when measured as unions and splits; otherwise regions on several threads may
    // overlap, and then the sums say so.
    m.overlapping = !(split && coverage.model_s && coverage.regions_s) &&
                    m.model_s + listed_s + m.outside_regions_s > wall_s * (1 + 1e-9);
    // Its ends, each at most what is left of it (means over executions need not nest).
    if (coverage.before_regions_s)
        m.before_regions_s = std::clamp(*coverage.before_regions_s, 0.0, m.outside_regions_s);
    if (coverage.after_regions_s)
        m.after_regions_s = std::clamp(*coverage.after_regions_s, 0.0,
                                       m.outside_regions_s - m.before_regions_s.value_or(0.0));
    if (m.outside_regions_s > 0) {
        non_model.push_back(RegionShare{std::string(outside_regions_name), m.outside_regions_s,
                                        m.outside_regions_s / wall_s});
    }
    m.share = std::min(1.0, m.model_s / wall_s);
    std::stable_sort(
        non_model.begin(), non_model.end(),
        [](const RegionShare& a, const RegionShare& b) { return a.total_s > b.total_s; });
    if (non_model.size() > top_n) non_model.resize(top_n);
    m.top_non_model = std::move(non_model);
    return m;
}

namespace {
// Not the model because of the process's start or end: where the time before the first
// region opened (or after the last closed) is the largest piece of the non-model time,
// larger than the time between regions and than any non-model region, the table's move
// (preprocessing, copies, ...) is not where that time went. A short script around a model
// (`import torch` alone takes a second) reads "not the model" by its start-up; said so,
// with what amortises it and what cuts it.
std::optional<std::string> process_end_move(const Diagnosis& d) {
    if (d.bound != Bound::not_the_model || !d.model_share ||
        d.observation != decision_row(Bound::not_the_model).observation ||
        !(d.model_share->wall_s > 0))
        return std::nullopt;
    const ModelShare& m = *d.model_share;
    const double before = m.before_regions_s.value_or(0.0), after = m.after_regions_s.value_or(0.0);
    const double between = m.outside_regions_s - before - after;
    double largest_region = 0;
    for (const auto& r : m.top_non_model)
        if (r.name != outside_regions_name) largest_region = std::max(largest_region, r.total_s);
    const auto largest = [&](double x) {
        return x > 0 && x >= between && x >= largest_region && x >= before && x >= after;
    };
    if (largest(before))
        return "start-up first: " + percent(before / m.wall_s) +
               " of the wall time passed before the first region opened (the interpreter and "
               "its imports, loading libraries and weights, building the model): paid once per "
               "process, it amortises in one that serves many requests (judge that steady state "
               "with more steps per run), else cut it (lazy imports, weights loaded once or "
               "mapped, a warm process kept alive); then ";
    if (largest(after))
        return "the end first: " + percent(after / m.wall_s) +
               " of the wall time passed after the last region closed (saving results, freeing "
               "memory, the interpreter's exit): write less or in the background, leave freeing "
               "to the exit; then ";
    return std::nullopt;
}
}  // namespace

Diagnosis diagnose_run(const RunInputs& in, const Thresholds& t) {
    Diagnosis d;
    if (in.model) {
        d = *in.model;  // the model's roof comparisons, findings and duration
        d.findings.erase(
            std::remove_if(d.findings.begin(), d.findings.end(),
                           [](const Finding& f) { return f.kind == FindingKind::above_roof; }),
            d.findings.end());
    }
    d.subject = "run";
    d.model_share = model_share(in.regions, in.process.wall_s, in.top_regions, in.coverage);
    if (!d.model_share) {
        d.findings.push_back(
            Finding{FindingKind::unknown_counter,
                    "no region marked as model: the model's share of wall time is unknown"});
    } else if (d.model_share->overlapping) {
        d.findings.push_back(
            Finding{FindingKind::assumption,
                    "regions add up to more than the wall time (they overlap across threads): "
                    "the model share is an upper estimate"});
    }

    const std::optional<double> footprint =
        in.footprint_bytes ? in.footprint_bytes : in.process.peak_rss_bytes;
    // The tighter of the machine's memory and the user's budget is the wall that matters.
    std::optional<std::pair<double, std::string>> capacity;
    if (in.memory_capacity_bytes && *in.memory_capacity_bytes > 0)
        capacity = {{*in.memory_capacity_bytes, "memory"}};
    if (in.memory_limit_bytes && *in.memory_limit_bytes > 0 &&
        (!capacity || *in.memory_limit_bytes < capacity->first))
        capacity = {{*in.memory_limit_bytes, "memory limit (control group)"}};
    if (in.memory_budget_bytes && *in.memory_budget_bytes > 0 &&
        (!capacity || *in.memory_budget_bytes < capacity->first))
        capacity = {{*in.memory_budget_bytes, "memory budget"}};
    if (footprint && capacity) {
        d.capacity = CapacityEvidence{*footprint, capacity->first, *footprint / capacity->first,
                                      capacity->second};
    } else {
        d.findings.push_back(Finding{FindingKind::unknown_counter,
                                     footprint ? "memory capacity unknown: capacity not judged"
                                               : "peak memory not measured: capacity not judged"});
    }

    d.evidence = in.evidence;
    d.system = system_evidence(in.process, t);
    if (auto contended = contention_finding(in.process, d.system, t))
        d.findings.push_back(std::move(*contended));
    if (auto quota = cpu_quota_finding(in.process)) d.findings.push_back(std::move(*quota));
    conclude(d, t);
    if (auto end = process_end_move(d)) d.first_move = *end + d.first_move;
    // Bound as the model is, the run takes the model's move, which may begin with what comes
    // before the table's (cores it held and left idle, cores the host left idle).
    if (in.model && d.bound && d.bound == in.model->bound) d.first_move = in.model->first_move;
    return d;
}

void to_json(nlohmann::json& j, const RegionTiming& r) {
    j = {{"name", r.name},
         {"parent", r.parent},
         {"model", r.model},
         {"total_s", r.total_s},
         {"count", r.count},
         {"non_model_s", r.non_model_s}};
}
void from_json(const nlohmann::json& j, RegionTiming& r) {
    get_field(j, "name", r.name);
    get_optional(j, "parent", r.parent);
    get_field(j, "model", r.model);
    get_field(j, "total_s", r.total_s);
    get_field(j, "count", r.count);
    get_optional(j, "non_model_s", r.non_model_s);
}

}  // namespace ceiling
