#include "agent/measure/roof_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "agent/measure/repeat.hpp"
#include "diagnosis/roofline.hpp"
#include "kernels/buffer.hpp"
#include "kernels/cpu_features.hpp"
#include "kernels/parallel.hpp"
#include "kernels/roofs/bandwidth.hpp"
#include "kernels/roofs/compute.hpp"

namespace ceiling::measure {
namespace {

// Seconds per timed run, and runs: long enough that thread start-up is noise, short enough
// that a check of two thread counts adds well under a second to a run. Five short looks
// rather than three longer ones: the slowest of them is kept too, and a host whose bandwidth
// toggles within tenths of a second shows it in more of them.
constexpr double target_s = 0.03;
constexpr int timed_runs = 5;

// Best and slowest rate over the timed runs of `seconds` (one call per run) for `work`.
template <typename Run>
std::pair<double, double> best_and_slowest(double work, Run&& seconds) {
    double best = 0, slowest = 0;
    for (int i = 0; i < timed_runs; ++i) {
        const double r = work / seconds();
        best = std::max(best, r);
        slowest = i == 0 ? r : std::min(slowest, r);
    }
    return {best, slowest};
}

const BandwidthRoof* dram_roof(const MachineProfile& p, int threads) {
    const BandwidthRoof* best = nullptr;
    for (const auto& r : p.bandwidth_roofs)
        if (r.level == "DRAM" && r.threads == threads &&
            (!best || r.bytes_per_s.median > best->bytes_per_s.median))
            best = &r;
    return best;
}

// The profile's DRAM roof of `kernel` measured at `threads`, if any.
const BandwidthRoof* dram_roof_of(const MachineProfile& p, const std::string& kernel, int threads) {
    for (const auto& r : p.bandwidth_roofs)
        if (r.level == "DRAM" && r.kernel == kernel && r.threads == threads) return &r;
    return nullptr;
}

int arrays_of(const std::string& kernel) {
    for (const auto& k : kernels::bandwidth_kernels)
        if (k.name == kernel) return k.arrays;
    return 0;
}

// The figures of one kind of roof in a note: what it is, its unit, what may share it.
struct CheckWords {
    RoofKind kind;
    const char* what;    // "DRAM bandwidth"
    const char* unit;    // "GB/s", per 1e9
    const char* shared;  // what on the host the program shares without ceiling seeing it
    const char* fractions;
};
constexpr CheckWords check_words[] = {
    {RoofKind::bandwidth, "DRAM bandwidth", "GB/s",
     "memory shared with work ceiling cannot see on this host", "DRAM fractions"},
    {RoofKind::compute, "Compute roofs", "Gop/s",
     "cores shared with work ceiling cannot see on this host, such as another tenant on an SMT "
     "sibling",
     "compute fractions"},
};

std::string rate(double per_s, const char* unit) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %s", per_s / 1e9, unit);
    return buf;
}

const ComputeRoof* compute_roof(const MachineProfile& p, const std::string& name, int threads) {
    for (const auto& r : p.compute_roofs)
        if (r.name == name && r.threads == threads) return &r;
    return nullptr;
}

}  // namespace

std::vector<RoofCheck> measure_dram_now(const MachineProfile& profile, const std::set<int>& threads) {
    std::vector<RoofCheck> out;
    const auto& impl = kernels::best_bandwidth_impl();
    for (const int t : threads) {
        // Where the profile has no DRAM roof at t, the verdicts were judged against one derived
        // from another thread count (roofline.hpp): that derived figure is what is checked,
        // with the kernel and working sets of the roof it came from.
        const BandwidthRoof* roof = dram_roof(profile, t);
        double profile_per_s = roof ? roof->bytes_per_s.median : 0;
        if (!roof) {
            const Roofline derived = make_roofline(profile, Precision::fp32, Engine::vector, t);
            if (const LevelRoof* dram = derived.level("DRAM")) {
                profile_per_s = dram->bandwidth.bytes_per_s;
                roof = dram_roof_of(profile, dram->bandwidth.kernel, dram->bandwidth.measured_threads);
            }
        }
        const int arrays = roof ? arrays_of(roof->kernel) : 0;
        if (!roof || arrays == 0 || profile_per_s <= 0 || t < 1 || t > kernels::available_cpus()) continue;
        // In the roof's plateau: 4x the last-level cache where the plateau reaches that far.
        const std::uint64_t llc = profile.host.last_level_cache_bytes();
        const std::uint64_t ws =
            std::clamp<std::uint64_t>(4 * llc, roof->min_working_set_bytes,
                                      std::max(roof->min_working_set_bytes, roof->max_working_set_bytes));
        const std::size_t n = ws / static_cast<std::uint64_t>(t) / static_cast<std::uint64_t>(arrays) /
                              sizeof(float) / kernels::bandwidth_block_floats *
                              kernels::bandwidth_block_floats;
        if (n == 0) continue;
        const std::size_t per_thread = kernels::bandwidth_footprint_floats(n, arrays);
        kernels::Buffer arena(per_thread * static_cast<std::size_t>(t) * sizeof(float));
        // First touch by the thread that uses each part (page placement), no zero pages.
        kernels::run_on_threads(t, [&](int i) {
            float* p = arena.floats() + static_cast<std::size_t>(i) * per_thread;
            std::fill(p, p + per_thread, 1.0f);
        });
        auto run = [&](int passes) {
            return team_wall_seconds(t, [&](int i) {
                kernels::run_bandwidth_kernel(impl, roof->kernel,
                                              arena.floats() + static_cast<std::size_t>(i) * per_thread,
                                              n, passes);
            });
        };
        const double one = run(1);  // also the warm-up
        const int passes = std::max(1, static_cast<int>(std::lround(target_s / std::max(one, 1e-9))));
        const double bytes = static_cast<double>(n) * sizeof(float) * arrays * t * passes;
        const auto [best, slowest] = best_and_slowest(bytes, [&] { return run(passes); });
        out.push_back({"DRAM", roof->kernel, t, profile_per_s, best, RoofKind::bandwidth, slowest, roof->threads});
    }
    return out;
}

std::vector<RoofCheck> measure_compute_now(const MachineProfile& profile,
                                           const std::set<std::pair<std::string, int>>& roofs) {
    std::vector<RoofCheck> out;
    for (const auto& [name, t] : roofs) {
        const ComputeRoof* roof = compute_roof(profile, name, t);
        const kernels::ComputeKernel* k = kernels::find_compute_kernel(name);
        if (!roof || !k || !k->supported(kernels::cpu_features()) || t < 1 ||
            t > kernels::available_cpus())
            continue;
        if (k->needs_amx_permission && !kernels::request_amx_permission().empty()) continue;
        // Per-thread operands, as `ceiling machine` times them (never a shared cache line).
        std::vector<kernels::RoofOperands> ops(static_cast<std::size_t>(t));
        for (auto& o : ops) kernels::fill_check_operands(*k, o);
        const std::int64_t n = calibrate([&](std::int64_t m) { k->run(m, &ops[0]); }, target_s);
        const double work = static_cast<double>(t) * static_cast<double>(n) *
                            k->instructions_per_iteration * k->ops_per_instruction;
        const auto [best, slowest] = best_and_slowest(work, [&] {
            return team_cpu_seconds(t, [&](int j) { k->run(n, &ops[static_cast<std::size_t>(j)]); });
        });
        out.push_back({"", roof->name, t, roof->ops_per_s.median, best, RoofKind::compute, slowest, t});
    }
    return out;
}

std::vector<std::string> describe_roof_checks(const std::vector<RoofCheck>& checks) {
    std::vector<std::string> lines;
    char tol[8];
    std::snprintf(tol, sizeof tol, "%.0f", roof_check_tolerance * 100);
    for (const auto& w : check_words) {
        std::string s = std::string(w.what) + " measured again after the run:";
        bool any = false, off = false;
        for (const auto& c : checks) {
            if (c.kind != w.kind) continue;
            char ratio[16];
            std::snprintf(ratio, sizeof ratio, "%.2f", c.ratio());
            s += std::string(any ? ";" : "") + " " + std::to_string(c.threads) +
                 (c.threads == 1 ? " thread " : " threads ") + c.kernel + " " +
                 rate(c.now_per_s, w.unit) + ", " + ratio + " x the profile's " +
                 rate(c.profile_per_s, w.unit);
            if (c.derived())
                s += " (derived from " + std::to_string(*c.profile_threads) +
                     (*c.profile_threads == 1 ? " thread" : " threads") + ": the profile has no " +
                     std::to_string(c.threads) + "-thread roof)";
            // Named whenever it matters: it fell below the tolerance, or the looks disagreed.
            if (const auto slow = c.slowest_ratio();
                moved_within(c) || (slow && *slow < 1 - roof_check_tolerance))
                s += " (its slowest look " + rate(*c.slowest_per_s, w.unit) +
                     ": the host moved during the check)";
            any = true;
            off = off || outside_tolerance(c);
        }
        if (!any) continue;
        s += off ? std::string(": more than ") + tol + " % off (" + w.shared + "): " + w.fractions +
                       " may be off by as much; judge the distribution with --repeat"
                 : std::string(": within ") + tol + " % of the profile";
        lines.push_back(s);
    }
    return lines;
}

// Verdicts that a roof can decide (a fraction of it at least `far`): what the host gives now,
// measured again for those roofs at their thread counts, as evidence of how far off the
// verdicts may be (roof_check.hpp). Work far below its roof is not checked: a drifting roof
// cannot change its verdict, and the check would only cost time.
void check_roofs(RunRecord& record) {
    if (!record.machine_profile) return;
    // DRAM: thread counts by the kernel whose roof the verdicts used (a stream with stores is
    // judged against the triad's roof, a read stream against the read roof), each checked
    // with that kernel against its own roof.
    std::map<std::string, std::set<int>> dram;
    std::set<std::pair<std::string, int>> compute;
    auto collect = [&](const Diagnosis& d) {
        for (const auto& r : d.roofs) {
            if (!r.fraction || *r.fraction < record.thresholds.far) continue;
            if (r.kind == RoofKind::bandwidth && r.level == "DRAM") dram[r.kernel].insert(r.threads);
            if (r.kind == RoofKind::compute) compute.insert({r.roof, r.threads});
        }
    };
    for (const auto& v : record.region_diagnoses) collect(v.diagnosis);
    if (record.diagnosis) collect(*record.diagnosis);
    record.roof_checks.clear();
    for (const auto& [kernel, threads] : dram) {
        // A record from before comparisons named their kernel: the level's best, as then.
        const MachineProfile& p = *record.machine_profile;
        for (auto& c : measure_dram_now(kernel.empty() ? p : with_bandwidth_kernel(p, kernel), threads))
            record.roof_checks.push_back(std::move(c));
    }
    for (auto& c : measure_compute_now(*record.machine_profile, compute))
        record.roof_checks.push_back(std::move(c));
    for (auto& line : describe_roof_checks(record.roof_checks)) record.notes.push_back(std::move(line));
}

}  // namespace ceiling::measure
