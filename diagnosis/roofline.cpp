#include "diagnosis/roofline.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <map>

#include "diagnosis/json_support.hpp"

namespace ceiling {
namespace {

// Memory levels in the order data moves outwards. Only these take part in "which level
// does a working set live in"; other bandwidth roofs (a host<->device link) are not levels.
struct LevelRank {
    std::string_view name;
    int rank;
    int cache_level;  // 0: not a cache
};
constexpr std::array<LevelRank, 6> level_ranks = {
    {{"L1", 1, 1}, {"L2", 2, 2}, {"L3", 3, 3}, {"L4", 4, 4}, {"DRAM", 10, 0}, {"HBM", 10, 0}}};

const LevelRank* find_rank(std::string_view level) {
    for (const auto& r : level_ranks)
        if (r.name == level) return &r;
    return nullptr;
}

// The best measurement at each thread count (any roof of the family), by thread count.
struct Candidate {
    int threads = 1;
    double value = 0;
    std::size_t index = 0;  // into the profile's roof list
};
struct Choice {
    double value = 0;
    int measured_threads = 1;
    std::size_t index = 0;
    RoofBasis basis = RoofBasis::measured;
};

// See make_roofline's comment for the rule; `candidates` holds one entry per thread count.
std::optional<Choice> scale_to_threads(const std::vector<Candidate>& candidates, int threads) {
    std::optional<Choice> lower;  // never below what fewer threads reached
    bool exact = false;
    for (const auto& c : candidates) {
        exact = exact || c.threads == threads;
        if (c.threads <= threads && (!lower || c.value > lower->value)) {
            lower = Choice{c.value, c.threads, c.index,
                           c.threads == threads ? RoofBasis::measured : RoofBasis::scaled};
        }
    }
    if (exact) return lower;
    std::optional<Choice> upper;  // at most linear from fewer threads, at most what more reached
    for (const auto& c : candidates) {
        const double v = c.threads < threads ? c.value * threads / c.threads : c.value;
        if (!upper || v < upper->value) upper = Choice{v, c.threads, c.index, RoofBasis::scaled};
    }
    if (lower && upper && lower->value > upper->value) return lower;
    return upper;
}

template <typename Roof, typename Value>
std::vector<Candidate> best_per_thread_count(const std::vector<Roof>& roofs, auto&& matches,
                                             Value&& value) {
    std::map<int, Candidate> best;
    for (std::size_t i = 0; i < roofs.size(); ++i) {
        const auto& r = roofs[i];
        if (!matches(r)) continue;
        const double v = value(r);
        auto it = best.find(r.threads);
        if (it == best.end() || v > it->second.value) best[r.threads] = Candidate{r.threads, v, i};
    }
    std::vector<Candidate> out;
    for (const auto& [t, c] : best) out.push_back(c);
    return out;
}

int effective_threads(const MachineProfile& p, int threads) {
    int most = p.host.logical_cpus;
    for (const auto& r : p.compute_roofs) most = std::max(most, r.threads);
    for (const auto& r : p.bandwidth_roofs) most = std::max(most, r.threads);
    threads = std::max(threads, 1);
    return most > 0 ? std::min(threads, most) : threads;
}

ComputeCeiling make_compute_ceiling(const ComputeRoof& r, const Choice& c, int threads) {
    ComputeCeiling out;
    out.name = r.name;
    out.precision = r.precision;
    out.engine = r.engine;
    out.instruction = r.instruction;
    out.threads = threads;
    out.measured_threads = c.measured_threads;
    out.basis = c.basis;
    out.ops_per_s = c.value;
    if (c.basis == RoofBasis::measured) {
        out.theoretical_ops_per_s = r.theoretical_ops_per_s;
        out.theoretical_from_measurement = r.theoretical_from_measurement;
    }
    out.noisy = r.noisy;
    return out;
}

std::optional<ComputeCeiling> compute_ceiling_where(const MachineProfile& p, int threads,
                                                    auto&& matches) {
    const auto candidates = best_per_thread_count(
        p.compute_roofs, matches, [](const ComputeRoof& r) { return r.ops_per_s.median; });
    const auto choice = scale_to_threads(candidates, threads);
    if (!choice) return std::nullopt;
    return make_compute_ceiling(p.compute_roofs[choice->index], *choice, threads);
}

// Capacity of a cache level as the threads see it: private caches add up over the
// instances the threads spread across.
std::optional<double> cache_capacity(const HostInfo& host, int cache_level, int threads) {
    const CacheInfo* c = host.cache(cache_level);
    if (!c || c->size_bytes == 0) return std::nullopt;
    const int sharers = std::max(c->shared_by_cpus, 1);
    const int used = std::clamp((threads + sharers - 1) / sharers, 1, std::max(c->instances, 1));
    return static_cast<double>(c->size_bytes) * used;
}

}  // namespace

const LevelRoof* Roofline::level(std::string_view name) const {
    for (const auto& l : levels)
        if (l.bandwidth.level == name) return &l;
    return nullptr;
}

const LevelRoof* Roofline::level_for(double working_set_bytes) const {
    if (levels.empty()) return nullptr;
    if (working_set_bytes > 0) {
        for (const auto& l : levels) {
            if (l.bandwidth.capacity_bytes && working_set_bytes <= *l.bandwidth.capacity_bytes)
                return &l;
        }
    }
    return &levels.back();
}

namespace {
constexpr std::string_view in_place_kernel = "update";
}  // namespace

Roofline make_roofline(const MachineProfile& p, Precision precision, Engine engine, int threads) {
    Roofline r;
    r.precision = precision;
    r.engine = engine;
    r.threads = threads;
    const int n = effective_threads(p, threads);
    r.compute = compute_ceiling_where(
        p, n, [&](const ComputeRoof& c) { return c.precision == precision && c.engine == engine; });

    std::vector<std::string> names;
    for (const auto& b : p.bandwidth_roofs) {
        if (find_rank(b.level) && std::find(names.begin(), names.end(), b.level) == names.end())
            names.push_back(b.level);
    }
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
        return find_rank(a)->rank < find_rank(b)->rank;
    });

    for (const auto& name : names) {
        // A level's own roof is the fastest stream that moves new data. Update (in place)
        // counts each line's load and its write-back, which a victim L3 moves for a read too
        // (Zen 4: update 165 GB/s in L3 on one thread, read 91): it judges in-place work
        // (diagnosis.cpp picks it by kernel), and is the level's roof only where the profile
        // has nothing else there (a profile filtered to that kernel).
        const bool others = std::ranges::any_of(p.bandwidth_roofs, [&](const BandwidthRoof& b) {
            return b.level == name && b.kernel != in_place_kernel;
        });
        const auto candidates = best_per_thread_count(
            p.bandwidth_roofs,
            [&](const BandwidthRoof& b) {
                return b.level == name && (!others || b.kernel != in_place_kernel);
            },
            [](const BandwidthRoof& b) { return b.bytes_per_s.median; });
        const auto choice = scale_to_threads(candidates, n);
        if (!choice) continue;
        const BandwidthRoof& src = p.bandwidth_roofs[choice->index];
        LevelRoof level;
        auto& b = level.bandwidth;
        b.level = name;
        b.kernel = src.kernel;
        b.threads = n;
        b.measured_threads = choice->measured_threads;
        b.basis = choice->basis;
        b.bytes_per_s = choice->value;
        b.noisy = src.noisy;
        // Where the plateau of this level ended at the thread count it was measured with.
        std::uint64_t plateau_end = 0;
        for (const auto& other : p.bandwidth_roofs) {
            if (other.level == name && other.threads == choice->measured_threads)
                plateau_end = std::max(plateau_end, other.max_working_set_bytes);
        }
        if (plateau_end > 0) {
            b.capacity_bytes = static_cast<double>(plateau_end);
            b.capacity_from = "plateau";
        } else if (const int cache = find_rank(name)->cache_level; cache > 0) {
            b.capacity_bytes = cache_capacity(p.host, cache, n);
            if (b.capacity_bytes) b.capacity_from = "cache";
        }
        if (r.compute)
            level.ridge_ops_per_byte = ridge_ops_per_byte(r.compute->ops_per_s, b.bytes_per_s);
        r.levels.push_back(std::move(level));
    }
    // The outermost level serves every working set, however large.
    if (!r.levels.empty()) {
        r.levels.back().bandwidth.capacity_bytes.reset();
        r.levels.back().bandwidth.capacity_from.clear();
    }
    return r;
}

Roofline make_busy_roofline(const MachineProfile& p, Precision precision, Engine engine,
                            double busy_cores) {
    const double cores = std::isfinite(busy_cores) ? std::max(1.0, busy_cores) : 1.0;
    // 1e-9: 2.0 busy cores are 2 threads, not 3 by rounding.
    const int threads = static_cast<int>(std::min(std::ceil(cores - 1e-9), 1e6));
    Roofline r = make_roofline(p, precision, engine, threads);
    const Roofline one = make_roofline(p, precision, engine, 1);
    if (r.compute && one.compute) {
        // A core computes no faster alone than beside others (they share no execution units;
        // shared power only slows them), so a 1-thread roof below the per-core share of one
        // measured on more cores was measured while the host took that core's time: the
        // per-core share is then the better figure. Seen on a Zen 3 guest: 1 thread 73.6
        // Gop/s (its clock read 2.33 GHz) against 177 on 2 cores, and every 2-thread FMA
        // program judged 1.1-1.2x above the roof. (Bandwidth has no such rule: one core
        // often cannot draw its share of DRAM's.)
        double per_core = one.compute->ops_per_s;
        if (r.compute->basis == RoofBasis::measured)
            per_core = std::max(per_core, r.compute->ops_per_s / r.compute->threads);
        if (cores * per_core < r.compute->ops_per_s) {
            r.compute->ops_per_s = cores * per_core;
            r.compute->measured_threads =
                per_core > one.compute->ops_per_s ? r.compute->threads : 1;
            r.compute->basis = RoofBasis::scaled;
            r.compute->theoretical_ops_per_s.reset();
            r.compute->theoretical_from_measurement = false;
        }
    }
    for (auto& level : r.levels) {
        auto& b = level.bandwidth;
        if (const LevelRoof* o = one.level(b.level);
            o && cores * o->bandwidth.bytes_per_s < b.bytes_per_s) {
            b.bytes_per_s = cores * o->bandwidth.bytes_per_s;
            b.kernel = o->bandwidth.kernel;  // the 1-thread roof's fastest kernel may differ
            b.measured_threads = 1;
            b.basis = RoofBasis::scaled;
        }
        if (r.compute)
            level.ridge_ops_per_byte = ridge_ops_per_byte(r.compute->ops_per_s, b.bytes_per_s);
    }
    return r;
}

MachineProfile with_bandwidth_kernel(const MachineProfile& profile, std::string_view kernel) {
    MachineProfile only;
    only.host = profile.host;
    only.compute_roofs = profile.compute_roofs;
    std::ranges::copy_if(profile.bandwidth_roofs, std::back_inserter(only.bandwidth_roofs),
                         [&](const BandwidthRoof& r) { return r.kernel == kernel; });
    return only;
}

Roofline make_gpu_roofline(const GpuProfile& gpu, Precision precision, Engine engine) {
    Roofline r;
    r.precision = precision;
    r.engine = engine;
    if (const auto* c = gpu.best_compute_roof(precision, engine)) {
        ComputeCeiling cc;
        cc.name = c->name;
        cc.precision = precision;
        cc.engine = engine;
        cc.instruction = c->method;
        cc.ops_per_s = c->ops_per_s.median;
        cc.theoretical_ops_per_s = c->theoretical_ops_per_s;
        cc.noisy = c->noisy;
        r.compute = cc;
    }
    for (const char* name : {"L2", "HBM"}) {
        const auto* b = gpu.best_bandwidth_roof(name);
        if (!b) continue;
        LevelRoof level;
        level.bandwidth.level = name;
        level.bandwidth.kernel = b->kernel;
        level.bandwidth.bytes_per_s = b->bytes_per_s.median;
        level.bandwidth.noisy = b->noisy;
        if (std::string_view(name) == "L2" && gpu.l2_bytes > 0) {
            level.bandwidth.capacity_bytes = static_cast<double>(gpu.l2_bytes);
            level.bandwidth.capacity_from = "cache";
        }
        if (r.compute)
            level.ridge_ops_per_byte =
                ridge_ops_per_byte(r.compute->ops_per_s, level.bandwidth.bytes_per_s);
        r.levels.push_back(std::move(level));
    }
    if (!r.levels.empty()) {
        r.levels.back().bandwidth.capacity_bytes.reset();
        r.levels.back().bandwidth.capacity_from.clear();
    }
    return r;
}

std::vector<ComputeCeiling> compute_ceilings(const MachineProfile& p, int threads) {
    const int n = effective_threads(p, threads);
    std::vector<std::string> names;
    for (const auto& c : p.compute_roofs)
        if (std::find(names.begin(), names.end(), c.name) == names.end()) names.push_back(c.name);
    std::vector<ComputeCeiling> out;
    for (const auto& name : names) {
        if (auto c =
                compute_ceiling_where(p, n, [&](const ComputeRoof& r) { return r.name == name; }))
            out.push_back(std::move(*c));
    }
    std::stable_sort(out.begin(), out.end(), [](const ComputeCeiling& a, const ComputeCeiling& b) {
        return a.ops_per_s > b.ops_per_s;
    });
    return out;
}

std::optional<ComputeCeiling> best_compute_ceiling(const MachineProfile& p, Precision precision,
                                                   int threads) {
    std::optional<ComputeCeiling> best;
    for (std::size_t e = 0; e < engine_names.size(); ++e) {
        const auto r = make_roofline(p, precision, static_cast<Engine>(e), threads);
        if (r.compute && (!best || r.compute->ops_per_s > best->ops_per_s)) best = r.compute;
    }
    return best;
}

double attainable_ops_per_s(double compute_ops_per_s, double intensity_ops_per_byte,
                            double bytes_per_s) {
    return std::min(compute_ops_per_s, intensity_ops_per_byte * bytes_per_s);
}

double ridge_ops_per_byte(double compute_ops_per_s, double bytes_per_s) {
    return compute_ops_per_s / bytes_per_s;
}

std::optional<RooflinePoint> place(const Roofline& roofline, const Work& work) {
    const double intensity = work.intensity();
    if (!roofline.compute || !std::isfinite(intensity)) return std::nullopt;
    const LevelRoof* level = roofline.level_for(work.working_set_bytes);
    if (!level) return std::nullopt;
    RooflinePoint p;
    p.intensity_ops_per_byte = intensity;
    p.level = level->bandwidth.level;
    p.working_set_known = work.working_set_bytes > 0;
    p.compute_ops_per_s = roofline.compute->ops_per_s;
    p.bytes_per_s = level->bandwidth.bytes_per_s;
    p.ridge_ops_per_byte = ridge_ops_per_byte(p.compute_ops_per_s, p.bytes_per_s);
    p.attainable_ops_per_s = attainable_ops_per_s(p.compute_ops_per_s, intensity, p.bytes_per_s);
    p.limited_by = intensity >= p.ridge_ops_per_byte ? RoofKind::compute : RoofKind::bandwidth;
    return p;
}

void to_json(nlohmann::json& j, RoofKind k) { j = std::string(to_string(k)); }
void from_json(const nlohmann::json& j, RoofKind& k) {
    k = enum_from_json<RoofKind>(j, roof_kind_names, "roof kind");
}
void to_json(nlohmann::json& j, RoofBasis b) { j = std::string(to_string(b)); }
void from_json(const nlohmann::json& j, RoofBasis& b) {
    b = enum_from_json<RoofBasis>(j, roof_basis_names, "roof basis");
}

void to_json(nlohmann::json& j, const ComputeCeiling& c) {
    j = {{"name", c.name},
         {"precision", c.precision},
         {"engine", c.engine},
         {"instruction", c.instruction},
         {"threads", c.threads},
         {"measured_threads", c.measured_threads},
         {"basis", c.basis},
         {"ops_per_s", c.ops_per_s},
         {"theoretical_ops_per_s", c.theoretical_ops_per_s},
         {"theoretical_from_measurement", c.theoretical_from_measurement},
         {"noisy", c.noisy}};
}
void from_json(const nlohmann::json& j, ComputeCeiling& c) {
    get_field(j, "name", c.name);
    get_field(j, "precision", c.precision);
    get_field(j, "engine", c.engine);
    get_field(j, "instruction", c.instruction);
    get_field(j, "threads", c.threads);
    get_field(j, "measured_threads", c.measured_threads);
    get_field(j, "basis", c.basis);
    get_field(j, "ops_per_s", c.ops_per_s);
    get_optional(j, "theoretical_ops_per_s", c.theoretical_ops_per_s);
    // Absent in records written before it was kept: false, as those records were read.
    if (j.contains("theoretical_from_measurement"))
        get_field(j, "theoretical_from_measurement", c.theoretical_from_measurement);
    get_field(j, "noisy", c.noisy);
}

void to_json(nlohmann::json& j, const BandwidthCeiling& c) {
    j = {{"level", c.level},
         {"kernel", c.kernel},
         {"threads", c.threads},
         {"measured_threads", c.measured_threads},
         {"basis", c.basis},
         {"bytes_per_s", c.bytes_per_s},
         {"capacity_bytes", c.capacity_bytes},
         {"capacity_from", c.capacity_from},
         {"noisy", c.noisy}};
}
void from_json(const nlohmann::json& j, BandwidthCeiling& c) {
    get_field(j, "level", c.level);
    get_field(j, "kernel", c.kernel);
    get_field(j, "threads", c.threads);
    get_field(j, "measured_threads", c.measured_threads);
    get_field(j, "basis", c.basis);
    get_field(j, "bytes_per_s", c.bytes_per_s);
    get_optional(j, "capacity_bytes", c.capacity_bytes);
    get_field(j, "capacity_from", c.capacity_from);
    get_field(j, "noisy", c.noisy);
}

void to_json(nlohmann::json& j, const LevelRoof& l) {
    j = l.bandwidth;
    j["ridge_ops_per_byte"] = l.ridge_ops_per_byte;
}
void from_json(const nlohmann::json& j, LevelRoof& l) {
    j.get_to(l.bandwidth);
    get_optional(j, "ridge_ops_per_byte", l.ridge_ops_per_byte);
}

void to_json(nlohmann::json& j, const Roofline& r) {
    j = {{"precision", r.precision},
         {"engine", r.engine},
         {"threads", r.threads},
         {"compute", r.compute},
         {"levels", r.levels}};
}
void from_json(const nlohmann::json& j, Roofline& r) {
    get_field(j, "precision", r.precision);
    get_field(j, "engine", r.engine);
    get_field(j, "threads", r.threads);
    get_optional(j, "compute", r.compute);
    get_field(j, "levels", r.levels);
}

void to_json(nlohmann::json& j, const RooflinePoint& p) {
    j = {{"intensity_ops_per_byte", p.intensity_ops_per_byte},
         {"level", p.level},
         {"working_set_known", p.working_set_known},
         {"compute_ops_per_s", p.compute_ops_per_s},
         {"bytes_per_s", p.bytes_per_s},
         {"ridge_ops_per_byte", p.ridge_ops_per_byte},
         {"attainable_ops_per_s", p.attainable_ops_per_s},
         {"limited_by", p.limited_by}};
}
void from_json(const nlohmann::json& j, RooflinePoint& p) {
    get_field(j, "intensity_ops_per_byte", p.intensity_ops_per_byte);
    get_field(j, "level", p.level);
    get_field(j, "working_set_known", p.working_set_known);
    get_field(j, "compute_ops_per_s", p.compute_ops_per_s);
    get_field(j, "bytes_per_s", p.bytes_per_s);
    get_field(j, "ridge_ops_per_byte", p.ridge_ops_per_byte);
    get_field(j, "attainable_ops_per_s", p.attainable_ops_per_s);
    get_field(j, "limited_by", p.limited_by);
}

}  // namespace ceiling
