#include "diagnosis/regions.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "diagnosis/json_support.hpp"

namespace ceiling {
namespace {

using P = ProcessAccounting;
using Opt = std::optional<double>;

// Two parts of one count (voluntary + involuntary, minor + major). With one part unknown the
// sum of the known one is a lower bound: enough to fire a rule, never a zero for the other.
Opt per_wall_s(const P& p, Opt a, Opt b) {
    if (!(p.wall_s > 0) || (!a && !b)) return std::nullopt;
    return (a.value_or(0.0) + b.value_or(0.0)) / p.wall_s;
}

Opt cpu_utilisation(const P& p) {
    if (!p.user_s || !p.system_s || !p.cores_used || !(*p.cores_used > 0) || !(p.wall_s > 0))
        return std::nullopt;
    return (*p.user_s + *p.system_s) / (p.wall_s * *p.cores_used);
}
Opt system_time_share(const P& p) {
    if (!p.user_s || !p.system_s || !(*p.user_s + *p.system_s > 0)) return std::nullopt;
    return *p.system_s / (*p.user_s + *p.system_s);
}
Opt context_switches_per_s(const P& p) {
    return per_wall_s(p, p.voluntary_context_switches, p.involuntary_context_switches);
}
Opt page_faults_per_s(const P& p) {
    return per_wall_s(p, p.minor_page_faults, p.major_page_faults);
}
Opt major_page_faults_per_s(const P& p) {
    if (!p.major_page_faults || !(p.wall_s > 0)) return std::nullopt;
    return *p.major_page_faults / p.wall_s;
}
Opt device_wait_share(const P& p) {
    if (!p.device_wait_s || !(p.wall_s > 0)) return std::nullopt;
    return *p.device_wait_s / p.wall_s;
}
Opt device_copy_share(const P& p) {
    if (!p.device_copy_s || !(p.wall_s > 0)) return std::nullopt;
    return *p.device_copy_s / p.wall_s;
}

using T = Thresholds;
const std::array<SystemRule, 7> rules = {{
    {"cpu_utilisation", cpu_utilisation, Comparison::below, &T::cpu_utilisation,
     "CPU busy well below the cores used: the process waits (I/O, locks, sleep, queueing, a "
     "device)"},
    {"system_time_share", system_time_share, Comparison::at_least, &T::system_time_share,
     "much CPU time in the kernel: system calls, copies, page faults"},
    {"context_switches_per_s", context_switches_per_s, Comparison::at_least,
     &T::context_switches_per_s,
     "frequent context switches: blocking, oversubscribed threads, contention"},
    {"page_faults_per_s", page_faults_per_s, Comparison::at_least, &T::page_faults_per_s,
     "frequent page faults: memory allocated and touched over and over"},
    {"major_page_faults_per_s", major_page_faults_per_s, Comparison::at_least,
     &T::major_page_faults_per_s,
     "page faults that read from disk: memory pressure or memory-mapped files paged in"},
    {"device_wait_share", device_wait_share, Comparison::at_least, &T::device_wait_share,
     "time waiting for the device: synchronisation, serialised launches"},
    {"device_copy_share", device_copy_share, Comparison::at_least, &T::device_copy_share,
     "time copying between host and device"},
}};

}  // namespace

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
    if (m.outside_regions_s > 0) {
        non_model.push_back(
            RegionShare{"(outside any region)", m.outside_regions_s, m.outside_regions_s / wall_s});
    }
    m.share = std::min(1.0, m.model_s / wall_s);
    std::stable_sort(
        non_model.begin(), non_model.end(),
        [](const RegionShare& a, const RegionShare& b) { return a.total_s > b.total_s; });
    if (non_model.size() > top_n) non_model.resize(top_n);
    m.top_non_model = std::move(non_model);
    return m;
}

int roof_threads_for_busy_cores(double busy_cores, const Thresholds& t, int logical_cpus) {
    int threads = 1;
    if (std::isfinite(busy_cores) && busy_cores > 0) {
        // 1e-9: 2.1 busy cores at a 5 % tolerance is exactly 2 threads, not 3 by rounding.
        const double k = std::ceil(busy_cores / (1 + t.above_roof_tolerance) - 1e-9);
        threads = static_cast<int>(std::clamp(k, 1.0, 1e6));
    }
    return logical_cpus > 0 ? std::min(threads, logical_cpus) : threads;
}

std::span<const SystemRule> system_rules() { return rules; }

std::vector<SystemSignal> system_evidence(const ProcessAccounting& p, const Thresholds& t) {
    std::vector<SystemSignal> out;
    for (const auto& r : rules) {
        SystemSignal s;
        s.name = std::string(r.name);
        s.value = r.metric(p);
        s.threshold = t.*r.threshold;
        s.fired = s.value && (r.comparison == Comparison::at_least ? *s.value >= s.threshold
                                                                   : *s.value < s.threshold);
        s.meaning = std::string(r.meaning);
        out.push_back(std::move(s));
    }
    return out;
}

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

    d.system = system_evidence(in.process, t);
    conclude(d, t);
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
    j.at("name").get_to(r.name);
    get_optional(j, "parent", r.parent);
    j.at("model").get_to(r.model);
    j.at("total_s").get_to(r.total_s);
    j.at("count").get_to(r.count);
    get_optional(j, "non_model_s", r.non_model_s);
}

void to_json(nlohmann::json& j, const ProcessAccounting& p) {
    j = {{"wall_s", p.wall_s},
         {"cores_used", p.cores_used},
         {"user_s", p.user_s},
         {"system_s", p.system_s},
         {"voluntary_context_switches", p.voluntary_context_switches},
         {"involuntary_context_switches", p.involuntary_context_switches},
         {"minor_page_faults", p.minor_page_faults},
         {"major_page_faults", p.major_page_faults},
         {"device_wait_s", p.device_wait_s},
         {"device_copy_s", p.device_copy_s},
         {"peak_rss_bytes", p.peak_rss_bytes}};
}
void from_json(const nlohmann::json& j, ProcessAccounting& p) {
    j.at("wall_s").get_to(p.wall_s);
    get_optional(j, "cores_used", p.cores_used);
    get_optional(j, "user_s", p.user_s);
    get_optional(j, "system_s", p.system_s);
    get_optional(j, "voluntary_context_switches", p.voluntary_context_switches);
    get_optional(j, "involuntary_context_switches", p.involuntary_context_switches);
    get_optional(j, "minor_page_faults", p.minor_page_faults);
    get_optional(j, "major_page_faults", p.major_page_faults);
    get_optional(j, "device_wait_s", p.device_wait_s);
    get_optional(j, "device_copy_s", p.device_copy_s);
    get_optional(j, "peak_rss_bytes", p.peak_rss_bytes);
}

}  // namespace ceiling
