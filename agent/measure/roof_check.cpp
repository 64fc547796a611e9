#include "agent/measure/roof_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "agent/measure/repeat.hpp"
#include "kernels/buffer.hpp"
#include "kernels/parallel.hpp"
#include "kernels/roofs/bandwidth.hpp"

namespace ceiling::measure {
namespace {

// Seconds per timed run, and runs: long enough that thread start-up is noise, short enough
// that a check of two thread counts adds well under a second to a run.
constexpr double target_s = 0.05;
constexpr int timed_runs = 3;

const BandwidthRoof* dram_roof(const MachineProfile& p, int threads) {
    const BandwidthRoof* best = nullptr;
    for (const auto& r : p.bandwidth_roofs)
        if (r.level == "DRAM" && r.threads == threads &&
            (!best || r.bytes_per_s.median > best->bytes_per_s.median))
            best = &r;
    return best;
}

int arrays_of(const std::string& kernel) {
    for (const auto& k : kernels::bandwidth_kernels)
        if (k.name == kernel) return k.arrays;
    return 0;
}

std::string gbs(double bytes_per_s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GB/s", bytes_per_s / 1e9);
    return buf;
}

}  // namespace

std::vector<RoofCheck> measure_dram_now(const MachineProfile& profile, const std::set<int>& threads) {
    std::vector<RoofCheck> out;
    const auto& impl = kernels::best_bandwidth_impl();
    for (const int t : threads) {
        const BandwidthRoof* roof = dram_roof(profile, t);
        const int arrays = roof ? arrays_of(roof->kernel) : 0;
        if (!roof || arrays == 0 || t < 1 || t > kernels::available_cpus()) continue;
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
        double best = 0;
        for (int i = 0; i < timed_runs; ++i) best = std::max(best, bytes / run(passes));
        out.push_back({"DRAM", roof->kernel, t, roof->bytes_per_s.median, best});
    }
    return out;
}

std::string describe_dram_checks(const std::vector<RoofCheck>& checks) {
    std::string s = "DRAM bandwidth measured again after the run:";
    bool off = false;
    for (std::size_t i = 0; i < checks.size(); ++i) {
        const auto& c = checks[i];
        char ratio[16];
        std::snprintf(ratio, sizeof ratio, "%.2f", c.ratio());
        s += std::string(i ? ";" : "") + " " + std::to_string(c.threads) +
             (c.threads == 1 ? " thread " : " threads ") + c.kernel + " " + gbs(c.now_bytes_per_s) +
             ", " + ratio + " x the profile's " + gbs(c.profile_bytes_per_s);
        off = off || outside_tolerance(c);
    }
    char tol[8];
    std::snprintf(tol, sizeof tol, "%.0f", dram_check_tolerance * 100);
    s += off ? std::string(": more than ") + tol +
                   " % off (memory shared with work ceiling cannot see on this host): DRAM "
                   "fractions may be off by as much; judge the distribution with --repeat"
             : std::string(": within ") + tol + " % of the profile";
    return s;
}

// Verdicts that a DRAM roof can decide (a fraction of it at least `far`): the bandwidth the
// host gives now, measured again at the thread counts of those roofs, as evidence of how far
// off they may be (roof_check.hpp). Work far below its DRAM roof is not checked: a drifting
// roof cannot change its verdict, and the check would only cost time.
void check_dram_roofs(RunRecord& record) {
    if (!record.machine_profile) return;
    std::set<int> threads;
    auto collect = [&](const Diagnosis& d) {
        for (const auto& r : d.roofs)
            if (r.kind == RoofKind::bandwidth && r.level == "DRAM" && r.fraction &&
                *r.fraction >= record.thresholds.far)
                threads.insert(r.threads);
    };
    for (const auto& v : record.region_diagnoses) collect(v.diagnosis);
    if (record.diagnosis) collect(*record.diagnosis);
    if (threads.empty()) return;
    record.roof_checks = measure_dram_now(*record.machine_profile, threads);
    if (!record.roof_checks.empty())
        record.notes.push_back(describe_dram_checks(record.roof_checks));
}

}  // namespace ceiling::measure
