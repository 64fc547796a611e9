#include "diagnosis/diagnosis.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <optional>
#include <string_view>
#include <utility>

#include "diagnosis/json_support.hpp"
#include "diagnosis/format.hpp"

namespace ceiling {
namespace {

// Latency bound says only that the work is near neither roof. Which side of the ridge its
// intensity lies on says which roof it should approach, and so where to look: right of it (a
// naive matmul at 25 % of the FMA roof) in the core or the caches, left of it (a pointer
// chase; a GEMV whose scalar loop could not issue loads fast enough) in how fast it asks for
// bytes. Said with the figures; nothing for other bounds, or where a side is unknown.
struct RidgeSide {
    std::string finding;
    bool right = false;
    bool l1 = false;  // left of it with its working set in L1
};
std::optional<RidgeSide> ridge_side(const Diagnosis& d) {
    if (d.bound != Bound::latency) return std::nullopt;
    const auto pos = ridge_position(d);
    if (!pos || !pos->compute->fraction || !pos->memory->fraction) return std::nullopt;
    if (!d.intensity_ops_per_byte && !pos->unbounded) return std::nullopt;
    const RoofComparison *compute = pos->compute, *memory = pos->memory;
    const double ridge = pos->ridge_ops_per_byte;
    const bool right = pos->right, registers = pos->unbounded;
    const std::string at = " of the ridge (" + g3(ridge) + " op/B at " + memory->level + ")";
    const std::string where =
        registers ? "no bytes declared, its intensity is unbounded: it lies right" + at
                  : "its intensity, " + g3(*d.intensity_ops_per_byte) + " op/B, lies " +
                        (right ? "right" : "left") + at;
    if (right)
        return RidgeSide{
            where + ": its roof is the compute roof (" + percent(*compute->fraction) +
                " of it), and by the declared bytes memory does not hold it back: the gap is in "
                "the core (dependency chains, code not vectorised to the roof's width) or in the "
                "caches (operands read many times more than the declared bytes: tile for reuse)",
            true};
    if (memory->level == "L1")
        return RidgeSide{where + ": its roof is L1 bandwidth (" + percent(*memory->fraction) +
                             " of it), and its data is in the nearest cache, where no miss "
                             "waits: the gap is in how fast the core issues its loads and "
                             "stores (dependency chains through memory, scalar or unvectorised "
                             "code, lines written by two cores at once)",
                         false, true};
    return RidgeSide{
        where + ": its roof is " + memory->level + " bandwidth (" + percent(*memory->fraction) +
            " of it): the gap is in how fast it asks for bytes: memory latency left exposed "
            "(dependent loads, too few misses in flight: prefetch, more independent streams or "
            "threads) or a core too slow to issue the loads (scalar or unvectorised loops, "
            "dependency chains)",
        false};
}

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

// Sweep kernels of the profile that only store (kernels/roofs/bandwidth.hpp names them): a
// work reads its inputs, so a store-only roof (half of what the bus moves is counted) never
// describes it.
constexpr std::string_view store_only_kernels[] = {"write"};

// The level's roofs differ by kernel (read, copy, triad: their mixes of loads and stores,
// explicit bytes counted); where a work's own mix is unknown (Work::written_bytes absent; else
// matching_stream_roof): of the kernels' roofs at this
// level (each built like the best one, `roofline_of` the profile as that kernel saw it), the
// lowest the work's rate does not exceed, with its kernel; none when the rate
// exceeds them all.
std::optional<std::pair<std::string, double>> tightest_stream_roof(const MachineProfile& profile,
                                                                   const std::string& level,
                                                                   double achieved,
                                                                   auto&& roofline_of) {
    std::vector<std::string> kernels;
    for (const auto& r : profile.bandwidth_roofs)
        if (r.level == level && std::ranges::find(kernels, r.kernel) == kernels.end() &&
            std::ranges::find(store_only_kernels, r.kernel) == std::end(store_only_kernels))
            kernels.push_back(r.kernel);
    std::optional<std::pair<std::string, double>> tightest;
    for (const auto& kernel : kernels) {
        const Roofline r = roofline_of(with_bandwidth_kernel(profile, kernel));
        const LevelRoof* l = r.level(level);
        if (!l || l->bandwidth.bytes_per_s < achieved) continue;
        if (!tightest || l->bandwidth.bytes_per_s < tightest->second)
            tightest = std::pair{kernel, l->bandwidth.bytes_per_s};
    }
    return tightest;
}

// The stream kernels' shares of stores among the bytes they count (kernels/roofs/bandwidth.hpp:
// read loads one array, copy loads one and stores one, triad loads two and stores one, update
// loads one and stores it back in place). Copy comes before update: of two kernels with the
// same share the first is matched, and a work beyond it goes on to the lowest roof it does
// not exceed (an in-place update, which skips the read for ownership, reaches update's).
struct StreamMix {
    std::string_view kernel;
    double stored;
};
constexpr StreamMix stream_mixes[] = {
    {"read", 0.0}, {"copy", 0.5}, {"triad", 1.0 / 3}, {"write", 1.0}, {"update", 0.5}};

// A work whose stores are known (Work::written_bytes) is judged against the stream kernel
// whose share of stores is nearest its own. Decode GEMMs and GEMV only read; judged instead
// against the lowest roof their rate did not exceed (tightest_stream_roof), a GEMM streaming
// its weights at 0.69 of the read roof read 0.93 of copy's, "done". Returns the profile's
// kernel at this level, its share and its roof; none when the profile has no such kernel.
struct MatchingStream {
    std::string kernel;
    double stored = 0;
    double bytes_per_s = 0;
};
std::optional<MatchingStream> matching_stream_roof(const MachineProfile& profile,
                                                   const std::string& level, double stored,
                                                   auto&& roofline_of) {
    const StreamMix* best = nullptr;
    for (const auto& mix : stream_mixes) {
        const bool measured = std::ranges::any_of(profile.bandwidth_roofs, [&](const auto& r) {
            return r.level == level && r.kernel == mix.kernel;
        });
        if (measured && (!best || std::abs(mix.stored - stored) < std::abs(best->stored - stored)))
            best = &mix;
    }
    if (!best) return std::nullopt;
    const Roofline r = roofline_of(with_bandwidth_kernel(profile, best->kernel));
    const LevelRoof* l = r.level(level);
    if (!l) return std::nullopt;
    return MatchingStream{std::string(best->kernel), best->stored, l->bandwidth.bytes_per_s};
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

Signals signals_of(const Diagnosis& d) {
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
    // waits spends what CPU time it has in its calls, and what it waits on decides.
    const bool waited = std::ranges::any_of(d.system, [](const SystemSignal& g) {
        return g.name == utilisation_signal_name && g.fired;
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

    const Signals s = signals_of(d);
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
    d.first_move = std::string(row.first_move);
    for (const auto& l : row.levers) d.levers.push_back(LeverAdvice{l.lever, std::string(l.move)});
    // Bounds, once each: a bound's second row (not the model by I/O and by the model's share)
    // adds nothing to the list.
    for (std::size_t i = 1; i < decision.held.size(); ++i) {
        const Bound b = decision.held[i]->bound;
        if (b != row.bound &&
            std::find(d.also_held.begin(), d.also_held.end(), b) == d.also_held.end())
            d.also_held.push_back(b);
    }
}

Diagnosis diagnose_kernel(const MachineProfile& profile, const Measurement& m, const Thresholds& t,
                          std::optional<double> busy_cores) {
    Diagnosis d;
    d.subject = m.name;
    const bool analytic = m.work.has_value();
    // The work's kind: declared with analytic work, else from the counters that counted it.
    const std::optional<CountedKind> kind =
        analytic ? CountedKind{m.work->device, m.work->precision, m.work->engine} : m.measured_kind;
    const Precision precision = kind ? kind->precision : Precision::fp32;
    const Engine engine = kind ? kind->engine : Engine::vector;
    if (!kind) {
        add_finding(
            d, FindingKind::assumption,
            "no analytic work: precision and engine unknown, compared with the fp32 vector roof");
    }
    // GPU work is judged against the GPU's roofs (the first device of the profile; suites
    // and runs measure device 0), never the host's.
    const bool on_gpu = kind && kind->device == Device::gpu;
    if (on_gpu && profile.gpus.empty())
        add_finding(d, FindingKind::no_roof,
                    "GPU work, but the machine profile has no GPU section: run `ceiling machine` "
                    "on a machine with the GPU");
    auto cpu_roofline = [&](const MachineProfile& p) {
        return busy_cores ? make_busy_roofline(p, precision, engine, *busy_cores)
                          : make_roofline(p, precision, engine, m.threads);
    };
    const Roofline roofline =
        !on_gpu
            ? cpu_roofline(profile)
            : (profile.gpus.empty() ? Roofline{}
                                    : make_gpu_roofline(profile.gpus.front(), precision, engine));

    std::optional<Summary> duration;
    if (m.duration_s.count > 0) {
        duration = m.duration_s;
    } else if (!m.durations_s.empty()) {
        duration = summarize(m.durations_s);
    }
    d.duration_s = duration;
    // Instances of different sizes: their durations spread with their work, and the work per
    // instance is the mean (total work / instances), so the rate is the total work over the
    // total time, the mean duration. Where all did the same work (or within 10 %, where the
    // two agree within the noise) the median, which a slow outlier cannot move.
    const bool sizes_differ = instances_differ_in_size(m);
    const double typical = !duration ? 0.0 : sizes_differ ? duration->mean : duration->median;
    // 0 when there is no duration (then every rate below stays unknown).
    const double seconds = typical > 0 ? typical : 0.0;
    if (!(seconds > 0))
        add_finding(d, FindingKind::unknown_counter, "no timed execution: every rate is unknown");
    if (sizes_differ && seconds > 0) {
        add_finding(d, FindingKind::assumption,
                    "instances did different amounts of work (the largest " + g3(*m.work_spread) +
                        "x the smallest): judged at their total work over their total time (the "
                        "mean duration, not the median)");
    } else if (duration && unstable(*duration, t.unstable_spread)) {
        add_finding(d, FindingKind::unstable,
                    "durations spread " + percent(duration->rel_spread) +
                        " ((p90 - p10) / median) over " + std::to_string(duration->count) +
                        " runs, above " + percent(t.unstable_spread) +
                        ": the median is used, the verdict is less certain");
    }

    std::optional<double> ops, bytes;
    std::optional<Source> ops_source, bytes_source;
    if (analytic) {
        ops = m.work->ops;
        bytes = m.work->compulsory_bytes;
        ops_source = bytes_source = Source::analytic;
    } else {
        ops = m.measured_ops;
        bytes = m.measured_bytes;
        ops_source = m.measured_ops_source;
        bytes_source = m.measured_bytes_source;
        if (!ops) {
            add_finding(d, FindingKind::unknown_counter,
                        "operations not counted (no analytic work, no counter)");
        }
        if (!bytes) {
            add_finding(d, FindingKind::unknown_counter,
                        "bytes not counted (no analytic work, no counter)");
        }
    }
    auto rate = [&](const std::optional<double>& count) -> std::optional<double> {
        if (count && seconds > 0) return *count / seconds;
        return std::nullopt;
    };

    RoofComparison compute;
    compute.kind = RoofKind::compute;
    compute.precision = precision;
    compute.engine = engine;
    compute.threads = m.threads;
    compute.achieved_per_s = rate(ops);
    compute.source = ops ? ops_source : std::nullopt;
    if (roofline.compute) {
        compute.roof = roofline.compute->name;
        compute.kernel = roofline.compute->instruction;
        compute.roof_per_s = roofline.compute->ops_per_s;
        if (roofline.compute->basis == RoofBasis::scaled) {
            const int from = roofline.compute->measured_threads;
            add_finding(d, FindingKind::assumption,
                        from == roofline.compute->threads
                            ? "compute roof " + compute.roof + ": the per-core share of its " +
                                  std::to_string(from) + "-thread measurement, times the cores busy"
                            : "compute roof " + compute.roof + " at " +
                                  std::to_string(roofline.compute->threads) +
                                  " threads derived from its " + std::to_string(from) +
                                  "-thread measurement");
        }
    } else {
        compute.roof = std::string(to_string(precision)) + "_" + std::string(to_string(engine));
        add_finding(d, FindingKind::no_roof,
                    "the machine profile has no " + std::string(to_string(precision)) + " " +
                        std::string(to_string(engine)) + " compute roof");
    }
    d.roofs.push_back(compare(compute, t));

    const double working_set = analytic ? m.work->working_set_bytes : 0;
    if (const LevelRoof* level = roofline.level_for(working_set)) {
        if (analytic && working_set <= 0) {
            add_finding(d, FindingKind::assumption,
                        "working set unknown: compared with the outermost level, " +
                            level->bandwidth.level);
        }
        if (level->bandwidth.basis == RoofBasis::scaled) {
            add_finding(
                d, FindingKind::assumption,
                level->bandwidth.level + " bandwidth roof at " +
                    std::to_string(level->bandwidth.threads) + " threads derived from its " +
                    std::to_string(level->bandwidth.measured_threads) + "-thread measurement");
        }
        RoofComparison bw;
        bw.kind = RoofKind::bandwidth;
        bw.roof = level->bandwidth.level;
        bw.level = level->bandwidth.level;
        bw.kernel = level->bandwidth.kernel;
        bw.threads = m.threads;
        bw.achieved_per_s = rate(bytes);
        bw.roof_per_s = level->bandwidth.bytes_per_s;
        const bool mix_known = analytic && m.work->written_bytes && bytes && *bytes > 0;
        const double stored = mix_known ? *m.work->written_bytes / *bytes : 0;
        const auto mix = !on_gpu && mix_known
                             ? matching_stream_roof(profile, bw.level, stored, cpu_roofline)
                             : std::nullopt;
        // Beyond its own kernel's roof (past the noise) a work with stores skipped the read for
        // ownership (non-temporal stores: a depthwise convolution's output, 1.04 x the copy
        // roof): then the lowest roof it does not exceed, as for a work of unknown mix. A
        // read-only work beyond the read roof is above the roof.
        const bool beyond_mix =
            mix && mix->stored > 0 && bw.achieved_per_s &&
            *bw.achieved_per_s > mix->bytes_per_s * (1 + t.above_roof_tolerance);
        if (beyond_mix)
            add_finding(d, FindingKind::assumption,
                        bw.level + " bandwidth beyond the " + mix->kernel +
                            " roof of its mix of stores (" + percent(stored) + "; " +
                            g3(mix->bytes_per_s) +
                            " bytes/s), as stores that skip the read for ownership run (in place, "
                            "or non-temporal), or a roof measured low: judged against the lowest "
                            "roof it does not exceed");
        if (mix && !beyond_mix) {
            if (mix->kernel != bw.kernel) {
                bw.kernel = mix->kernel;
                bw.roof_per_s = mix->bytes_per_s;
                add_finding(d, FindingKind::assumption,
                            bw.level + " bandwidth judged against the " + bw.kernel + " roof (" +
                                g3(*bw.roof_per_s) +
                                " bytes/s), the stream whose share of stores (" +
                                percent(mix->stored) + ") is nearest the work's (" +
                                percent(stored) + "; " + level->bandwidth.kernel + " reaches " +
                                g3(level->bandwidth.bytes_per_s) + ")");
            }
        } else if (!on_gpu && bw.achieved_per_s) {
            if (const auto k =
                    tightest_stream_roof(profile, bw.level, *bw.achieved_per_s, cpu_roofline);
                // Lower than the level's own roof, or above it where the work outran it (an
                // in-place stream past every stream of new data: update's, roofline.cpp).
                k && k->first != bw.kernel &&
                (k->second < *bw.roof_per_s || *bw.achieved_per_s > *bw.roof_per_s)) {
                bw.kernel = k->first;
                bw.roof_per_s = k->second;
                add_finding(
                    d, FindingKind::assumption,
                    bw.level + " bandwidth judged against the " + bw.kernel + " roof (" +
                        g3(*bw.roof_per_s) +
                        " bytes/s), the lowest of the level's that the work does not exceed (the "
                        "level's own, " +
                        level->bandwidth.kernel + ", reaches " + g3(level->bandwidth.bytes_per_s) +
                        ")" +
                        (mix_known ? std::string()
                                   : ": the work's mix of loads and stores is not declared "
                                     "(written=), and a stream's roof depends on it (each store "
                                     "reads its line first, write-allocate, unless in place)"));
            }
        }
        bw.source = bytes ? bytes_source : std::nullopt;
        d.roofs.push_back(compare(bw, t));
        d.level = level->bandwidth.level;
        if (ops && bytes && *bytes > 0) {
            d.intensity_ops_per_byte = *ops / *bytes;
            if (roofline.compute) {
                d.attainable_ops_per_s = attainable_ops_per_s(
                    roofline.compute->ops_per_s, *d.intensity_ops_per_byte, *bw.roof_per_s);
            }
        }
    } else {
        add_finding(d, FindingKind::no_roof, "the machine profile has no bandwidth roof");
    }
    conclude(d, t);
    // The side says which roof to approach, so where the first move starts.
    if (auto side = ridge_side(d)) {
        add_finding(d, FindingKind::assumption, std::move(side->finding));
        d.first_move = std::string(side->right ? right_of_ridge_move
                                   : side->l1  ? left_of_ridge_l1_move
                                               : left_of_ridge_move) +
                       d.first_move;
    }
    return d;
}

void insert_before_roofline_move(Diagnosis& d, std::string_view prefix) {
    std::size_t at = std::string::npos;
    for (const auto side : {right_of_ridge_move, left_of_ridge_move, left_of_ridge_l1_move})
        at = std::min(at, d.first_move.find(side));
    if (at == std::string::npos && d.bound) {
        const std::string_view table = decision_row(*d.bound).first_move;
        at = d.first_move.ends_with(table) ? d.first_move.size() - table.size() : 0;
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
    j.at("kind").get_to(c.kind);
    const std::string u = unit_of(c.kind);
    j.at("roof").get_to(c.roof);
    j.at("level").get_to(c.level);
    j.at("kernel").get_to(c.kernel);
    get_optional(j, "precision", c.precision);
    get_optional(j, "engine", c.engine);
    j.at("threads").get_to(c.threads);
    get_optional(j, ("achieved_" + u).c_str(), c.achieved_per_s);
    get_optional(j, ("roof_" + u).c_str(), c.roof_per_s);
    get_optional(j, "fraction", c.fraction);
    get_optional(j, "source", c.source);
    j.at("verdict").get_to(c.verdict);
}

void to_json(nlohmann::json& j, const Finding& f) { j = {{"kind", f.kind}, {"detail", f.detail}}; }
void from_json(const nlohmann::json& j, Finding& f) {
    j.at("kind").get_to(f.kind);
    j.at("detail").get_to(f.detail);
}

void to_json(nlohmann::json& j, const RegionShare& r) {
    j = {{"name", r.name}, {"total_s", r.total_s}, {"share", r.share}};
}
void from_json(const nlohmann::json& j, RegionShare& r) {
    j.at("name").get_to(r.name);
    j.at("total_s").get_to(r.total_s);
    j.at("share").get_to(r.share);
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
    j.at("model_s").get_to(m.model_s);
    j.at("wall_s").get_to(m.wall_s);
    j.at("share").get_to(m.share);
    j.at("outside_regions_s").get_to(m.outside_regions_s);
    get_optional(j, "before_regions_s", m.before_regions_s);
    get_optional(j, "after_regions_s", m.after_regions_s);
    j.at("overlapping").get_to(m.overlapping);
    j.at("top_non_model").get_to(m.top_non_model);
}

void to_json(nlohmann::json& j, const CapacityEvidence& c) {
    j = {{"footprint_bytes", c.footprint_bytes},
         {"capacity_bytes", c.capacity_bytes},
         {"fraction", c.fraction},
         {"against", c.against}};
}
void from_json(const nlohmann::json& j, CapacityEvidence& c) {
    j.at("footprint_bytes").get_to(c.footprint_bytes);
    j.at("capacity_bytes").get_to(c.capacity_bytes);
    j.at("fraction").get_to(c.fraction);
    j.at("against").get_to(c.against);
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
    j.at("name").get_to(s.name);
    get_optional(j, "value", s.value);
    j.at("threshold").get_to(s.threshold);
    j.at("fired").get_to(s.fired);
    j.at("meaning").get_to(s.meaning);
    get_optional(j, "qualifier", s.qualifier);
    get_optional(j, "qualifier_value", s.qualifier_value);
}

void to_json(nlohmann::json& j, const LeverAdvice& l) {
    j = {{"lever", l.lever}, {"move", l.move}};
}
void from_json(const nlohmann::json& j, LeverAdvice& l) {
    j.at("lever").get_to(l.lever);
    j.at("move").get_to(l.move);
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
    j.at("subject").get_to(d.subject);
    get_optional(j, "bound", d.bound);
    j.at("observation").get_to(d.observation);
    j.at("diagnosis").get_to(d.diagnosis);
    j.at("first_move").get_to(d.first_move);
    j.at("levers").get_to(d.levers);
    j.at("also_held").get_to(d.also_held);
    j.at("verdict").get_to(d.verdict);
    get_optional(j, "intensity_ops_per_byte", d.intensity_ops_per_byte);
    get_optional(j, "attainable_ops_per_s", d.attainable_ops_per_s);
    get_optional(j, "level", d.level);
    j.at("roofs").get_to(d.roofs);
    get_optional(j, "model_share", d.model_share);
    get_optional(j, "capacity", d.capacity);
    j.at("system").get_to(d.system);
    j.at("findings").get_to(d.findings);
    get_optional(j, "duration_s", d.duration_s);
}

}  // namespace ceiling
