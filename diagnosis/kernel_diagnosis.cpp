// diagnose_kernel (diagnosis/diagnosis.hpp): one measurement judged against the roofline of
// its kind, step by step; the decision itself is conclude's (diagnosis.cpp).
#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "diagnosis/diagnosis.hpp"
#include "diagnosis/premises.hpp"
#include "diagnosis/statistics.hpp"
#include "diagnosis/format.hpp"

namespace ceiling {
namespace {

void add_finding(Diagnosis& d, FindingKind k, std::string detail) {
    d.findings.push_back(Finding{k, std::move(detail)});
}

// Instances of the same work on a host where other work competed: judged at this quantile of
// their durations (the unhindered ones), where there are at least this many.
constexpr double unhindered_quantile = 0.25;
constexpr std::size_t unhindered_min_instances = 4;

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
std::optional<RidgeSide> ridge_side(const Diagnosis& d, const Evidence& e) {
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
                             "code" +
                             std::string(licensed(Premise::stores_from_two_threads, e)
                                             ? ", lines written by two cores at once)"
                                             : ")"),
                         false, true};
    return RidgeSide{
        where + ": its roof is " + memory->level + " bandwidth (" + percent(*memory->fraction) +
            " of it): the gap is in how fast it asks for bytes: memory latency left exposed "
            "(dependent loads, too few misses in flight: prefetch, more independent streams or "
            "threads) or a core too slow to issue the loads (scalar or unvectorised loops, "
            "dependency chains)",
        false};
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

// What the steps of diagnose_kernel share, each step filling in what it finds: the work's
// kind and the roofline it is judged against, its typical duration, its counts.
struct KernelJudging {
    const MachineProfile& profile;
    const Measurement& m;
    const Thresholds& t;
    std::optional<double> busy_cores;
    bool analytic = false;
    Precision precision = Precision::fp32;
    Engine engine = Engine::vector;
    bool on_gpu = false;
    Roofline roofline{};
    double seconds = 0;
    std::optional<double> ops{}, bytes{};
    std::optional<Source> ops_source{}, bytes_source{};

    Roofline cpu_roofline(const MachineProfile& p) const {
        return busy_cores ? make_busy_roofline(p, precision, engine, *busy_cores)
                          : make_roofline(p, precision, engine, m.threads);
    }
    std::optional<double> rate(const std::optional<double>& count) const {
        if (count && seconds > 0) return *count / seconds;
        return std::nullopt;
    }
};

void find_kind_and_roofline(Diagnosis& d, KernelJudging& kj) {
    const Measurement& m = kj.m;
    kj.analytic = m.work.has_value();
    // The work's kind: declared with analytic work, else from the counters that counted it.
    const std::optional<CountedKind> kind =
        kj.analytic ? CountedKind{m.work->device, m.work->precision, m.work->engine}
                    : m.measured_kind;
    kj.precision = kind ? kind->precision : Precision::fp32;
    kj.engine = kind ? kind->engine : Engine::vector;
    if (!kind) {
        add_finding(
            d, FindingKind::assumption,
            "no analytic work: precision and engine unknown, compared with the fp32 vector roof");
    }
    // GPU work is judged against the GPU's roofs (the first device of the profile; suites
    // and runs measure device 0), never the host's.
    kj.on_gpu = kind && kind->device == Device::gpu;
    if (kj.on_gpu && kj.profile.gpus.empty())
        add_finding(d, FindingKind::no_roof,
                    "GPU work, but the machine profile has no GPU section: run `ceiling machine` "
                    "on a machine with the GPU");
    kj.roofline = !kj.on_gpu
                      ? kj.cpu_roofline(kj.profile)
                      : (kj.profile.gpus.empty()
                             ? Roofline{}
                             : make_gpu_roofline(kj.profile.gpus.front(), kj.precision, kj.engine));
}

// The duration the rates are taken over, with d.duration_s and the findings on its spread.
double typical_seconds(Diagnosis& d, const Measurement& m, const Thresholds& t) {
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
    double typical = !duration ? 0.0 : sizes_differ ? duration->mean : duration->median;
    // The same work per instance, spread by a host where other work was measured competing:
    // the slow instances are the host's, the fast ones what the code does with a CPU. Judged
    // from the unhindered quarter, so the verdict does not move with the neighbours (torch.mm
    // 2048^3 read compute bound in one run, latency bound in the next two, its calls 54-127 ms).
    if (!sizes_differ && duration && unstable(*duration, t.unstable_spread) && m.host_interference &&
        m.durations_s.size() >= unhindered_min_instances) {
        std::vector<double> sorted = m.durations_s;
        std::sort(sorted.begin(), sorted.end());
        typical = percentile(sorted, unhindered_quantile);
        add_finding(d, FindingKind::unstable,
                    "its instances of the same work took " + ceiling::duration(sorted.front()) + " to " +
                        ceiling::duration(sorted.back()) + " (median " + ceiling::duration(duration->median) +
                        ") while " + *m.host_interference + ": judged at its unhindered instances (the " +
                        "fastest quarter's bound, " + ceiling::duration(typical) +
                        "), what its code does with a CPU; the slower ones are the host's");
        return typical;
    }
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
    return seconds;
}

// Operations and bytes per execution: the analytic work's, else what the counters counted.
void take_counts(Diagnosis& d, KernelJudging& kj) {
    const Measurement& m = kj.m;
    if (kj.analytic) {
        kj.ops = m.work->ops;
        kj.bytes = m.work->compulsory_bytes;
        kj.ops_source = kj.bytes_source = Source::analytic;
    } else {
        kj.ops = m.measured_ops;
        kj.bytes = m.measured_bytes;
        kj.ops_source = m.measured_ops_source;
        kj.bytes_source = m.measured_bytes_source;
        if (!kj.ops) {
            add_finding(d, FindingKind::unknown_counter,
                        "operations not counted (no analytic work, no counter)");
        }
        if (!kj.bytes) {
            add_finding(d, FindingKind::unknown_counter,
                        "bytes not counted (no analytic work, no counter)");
        }
    }
}

void compare_with_compute_roof(Diagnosis& d, const KernelJudging& kj) {
    const Roofline& roofline = kj.roofline;
    RoofComparison compute;
    compute.kind = RoofKind::compute;
    compute.precision = kj.precision;
    compute.engine = kj.engine;
    compute.threads = kj.m.threads;
    compute.achieved_per_s = kj.rate(kj.ops);
    compute.source = kj.ops ? kj.ops_source : std::nullopt;
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
        compute.roof =
            std::string(to_string(kj.precision)) + "_" + std::string(to_string(kj.engine));
        add_finding(d, FindingKind::no_roof,
                    "the machine profile has no " + std::string(to_string(kj.precision)) + " " +
                        std::string(to_string(kj.engine)) + " compute roof");
    }
    d.roofs.push_back(compare(compute, kj.t));
}

// Where neither the work's mix of stores nor the level's own roof fits it, the lowest of the
// level's stream roofs its rate does not exceed (tightest_stream_roof).
void judge_against_tightest_stream(Diagnosis& d, const KernelJudging& kj, const LevelRoof& level,
                                   RoofComparison& bw, bool mix_known) {
    const auto cpu_roofline = [&kj](const MachineProfile& p) { return kj.cpu_roofline(p); };
    if (const auto k = tightest_stream_roof(kj.profile, bw.level, *bw.achieved_per_s, cpu_roofline);
        // Lower than the level's own roof, or above it where the work outran it (an
        // in-place stream past every stream of new data: update's, roofline.cpp).
        k && k->first != bw.kernel &&
        (k->second < *bw.roof_per_s || *bw.achieved_per_s > *bw.roof_per_s)) {
        bw.kernel = k->first;
        bw.roof_per_s = k->second;
        add_finding(d, FindingKind::assumption,
                    bw.level + " bandwidth judged against the " + bw.kernel + " roof (" +
                        g3(*bw.roof_per_s) +
                        " bytes/s), the lowest of the level's that the work does not exceed (the "
                        "level's own, " +
                        level.bandwidth.kernel + ", reaches " + g3(level.bandwidth.bytes_per_s) +
                        ")" +
                        (mix_known ? std::string()
                                   : ": the work's mix of loads and stores is not declared "
                                     "(written=), and a stream's roof depends on it (each store "
                                     "reads its line first, write-allocate, unless in place)"));
    }
}

// Which of the level's stream roofs bw is judged against (it starts at the level's own): the
// one matching the work's mix of stores where that is known and fits, else the tightest.
void choose_stream_roof(Diagnosis& d, const KernelJudging& kj, const LevelRoof& level,
                        RoofComparison& bw) {
    const auto cpu_roofline = [&kj](const MachineProfile& p) { return kj.cpu_roofline(p); };
    const bool mix_known = kj.analytic && kj.m.work->written_bytes && kj.bytes && *kj.bytes > 0;
    const double stored = mix_known ? *kj.m.work->written_bytes / *kj.bytes : 0;
    const auto mix = !kj.on_gpu && mix_known
                         ? matching_stream_roof(kj.profile, bw.level, stored, cpu_roofline)
                         : std::nullopt;
    // Beyond its own kernel's roof (past the noise) a work with stores skipped the read for
    // ownership (non-temporal stores: a depthwise convolution's output, 1.04 x the copy
    // roof): then the lowest roof it does not exceed, as for a work of unknown mix. A
    // read-only work beyond the read roof is above the roof.
    const bool beyond_mix = mix && mix->stored > 0 && bw.achieved_per_s &&
                            *bw.achieved_per_s > mix->bytes_per_s * (1 + kj.t.above_roof_tolerance);
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
                            g3(*bw.roof_per_s) + " bytes/s), the stream whose share of stores (" +
                            percent(mix->stored) + ") is nearest the work's (" + percent(stored) +
                            "; " + level.bandwidth.kernel + " reaches " +
                            g3(level.bandwidth.bytes_per_s) + ")");
        }
    } else if (!kj.on_gpu && bw.achieved_per_s) {
        judge_against_tightest_stream(d, kj, level, bw, mix_known);
    }
}

// The bandwidth roof of the level the working set lives in, and with it the intensity and
// the attainable rate.
void compare_with_bandwidth_roof(Diagnosis& d, const KernelJudging& kj) {
    const double working_set = kj.analytic ? kj.m.work->working_set_bytes : 0;
    const LevelRoof* level = kj.roofline.level_for(working_set);
    if (!level) {
        add_finding(d, FindingKind::no_roof, "the machine profile has no bandwidth roof");
        return;
    }
    if (kj.analytic && working_set <= 0) {
        add_finding(
            d, FindingKind::assumption,
            "working set unknown: compared with the outermost level, " + level->bandwidth.level);
    }
    if (level->bandwidth.basis == RoofBasis::scaled) {
        add_finding(d, FindingKind::assumption,
                    level->bandwidth.level + " bandwidth roof at " +
                        std::to_string(level->bandwidth.threads) + " threads derived from its " +
                        std::to_string(level->bandwidth.measured_threads) + "-thread measurement");
    }
    RoofComparison bw;
    bw.kind = RoofKind::bandwidth;
    bw.roof = level->bandwidth.level;
    bw.level = level->bandwidth.level;
    bw.kernel = level->bandwidth.kernel;
    bw.threads = kj.m.threads;
    bw.achieved_per_s = kj.rate(kj.bytes);
    bw.roof_per_s = level->bandwidth.bytes_per_s;
    choose_stream_roof(d, kj, *level, bw);
    bw.source = kj.bytes ? kj.bytes_source : std::nullopt;
    d.roofs.push_back(compare(bw, kj.t));
    d.level = level->bandwidth.level;
    if (kj.ops && kj.bytes && *kj.bytes > 0) {
        d.intensity_ops_per_byte = *kj.ops / *kj.bytes;
        if (kj.roofline.compute) {
            d.attainable_ops_per_s = attainable_ops_per_s(
                kj.roofline.compute->ops_per_s, *d.intensity_ops_per_byte, *bw.roof_per_s);
        }
    }
}

}  // namespace

Diagnosis diagnose_kernel(const MachineProfile& profile, const Measurement& m, const Thresholds& t,
                          std::optional<double> busy_cores, const Evidence& e) {
    Diagnosis d;
    d.subject = m.name;
    d.evidence = e;
    KernelJudging kj{profile, m, t, busy_cores};
    find_kind_and_roofline(d, kj);
    kj.seconds = typical_seconds(d, m, t);
    take_counts(d, kj);
    compare_with_compute_roof(d, kj);
    compare_with_bandwidth_roof(d, kj);
    conclude(d, t);
    // The side says which roof to approach, so where the first move starts; two cores storing
    // by the cores it is judged at.
    Evidence sides = e;
    if (busy_cores) sides.busy_cores = busy_cores;
    if (!sides.written_bytes && m.work) sides.written_bytes = m.work->written_bytes;
    if (auto side = ridge_side(d, sides)) {
        add_finding(d, FindingKind::assumption, std::move(side->finding));
        // The side's moves change the code (its loads, chains, vectors, tiles): a library's
        // op (Premise::own_code) keeps the finding and the table's move alone.
        if (!licensed(Premise::own_code, e)) return d;
        const bool two = licensed(Premise::stores_from_two_threads, sides);
        d.first_move = std::string(side->right ? right_of_ridge_move
                                   : side->l1  ? (two ? left_of_ridge_l1_move
                                                      : left_of_ridge_l1_one_core_move)
                                               : left_of_ridge_move) +
                       d.first_move;
    }
    return d;
}

}  // namespace ceiling
