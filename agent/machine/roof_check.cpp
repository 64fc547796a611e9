#include "agent/machine/roof_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "agent/machine/repeat.hpp"
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

// The DRAM looks' memory: one buffer every live look shares, grown to the largest asked for.
// Looks run one at a time, but the suite keeps one per (kernel, threads) for its whole run,
// and each spans the far end of the profile's sweep (up to a quarter of memory): a buffer
// each would be several times that.
struct DramArena {
    kernels::Buffer buffer;
};

std::shared_ptr<DramArena> dram_arena(std::size_t floats_per_thread, int t) {
    static std::weak_ptr<DramArena> shared;
    auto arena = shared.lock();
    if (!arena) shared = arena = std::make_shared<DramArena>();
    const std::size_t floats = floats_per_thread * static_cast<std::size_t>(t);
    if (arena->buffer.bytes() < floats * sizeof(float)) {
        arena->buffer = kernels::Buffer();  // the old one goes first: never two at once
        arena->buffer = kernels::Buffer(floats * sizeof(float));
        // First touch by the thread that uses each part (page placement), no zero pages.
        kernels::run_on_threads(t, [&](int i) {
            float* p = arena->buffer.floats() + static_cast<std::size_t>(i) * floats_per_thread;
            std::fill(p, p + floats_per_thread, 1.0f);
        });
    }
    return arena;
}

const kernels::BandwidthKernelInfo* kernel_info(const std::string& kernel) {
    for (const auto& k : kernels::bandwidth_kernels)
        if (k.name == kernel) return &k;
    return nullptr;
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

std::unique_ptr<RoofLook> RoofLook::dram(const MachineProfile& profile, int t) {
    const auto& impl = kernels::best_bandwidth_impl();
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
    const kernels::BandwidthKernelInfo* info = roof ? kernel_info(roof->kernel) : nullptr;
    const int arrays = info ? info->arrays : 0;
    if (!roof || arrays == 0 || profile_per_s <= 0 || t < 1 || t > kernels::available_cpus())
        return nullptr;
    // The plateau's far end, against what the profile measured there: the plateau's first
    // points can sit in cache a VM does not show (machine_profile.hpp), so a look there read
    // a moving roof on a still host (1.14 of the profile here; 2.35 on a CI host, where the
    // verdict corpus then took a twice-counted triad for the host's moment). A profile
    // without the far end's figure is looked at 4x its last-level cache, against the median.
    std::uint64_t ws = std::max(roof->min_working_set_bytes, roof->max_working_set_bytes);
    if (roof->far_end_bytes_per_s > 0 && roof->bytes_per_s.median > 0) {
        profile_per_s *= roof->far_end_bytes_per_s / roof->bytes_per_s.median;
    } else {
        ws = std::clamp<std::uint64_t>(4 * profile.host.last_level_cache_bytes(),
                                       roof->min_working_set_bytes, ws);
    }
    const std::size_t n = ws / static_cast<std::uint64_t>(t) / static_cast<std::uint64_t>(arrays) /
                          sizeof(float) / kernels::bandwidth_block_floats *
                          kernels::bandwidth_block_floats;
    if (n == 0) return nullptr;
    const std::size_t per_thread = kernels::bandwidth_footprint_floats(n, arrays);
    const auto arena = dram_arena(per_thread, t);
    const std::string kernel = roof->kernel;
    auto run = [arena, kernel, n, per_thread, t, &impl](int passes) {
        return team_wall_seconds(t, [&](int i) {
            kernels::run_bandwidth_kernel(
                impl, kernel, arena->buffer.floats() + static_cast<std::size_t>(i) * per_thread,
                n, passes);
        });
    };
    const double one = run(1);  // also the warm-up
    const int passes = std::max(1, static_cast<int>(std::lround(target_s / std::max(one, 1e-9))));
    std::unique_ptr<RoofLook> look(new RoofLook);
    look->base_.level = "DRAM";
    look->base_.kernel = kernel;
    look->base_.threads = t;
    look->base_.profile_per_s = profile_per_s;
    look->base_.kind = RoofKind::bandwidth;
    look->base_.profile_threads = roof->threads;
    look->work_ = static_cast<double>(n) * sizeof(float) * info->accesses * t * passes;
    look->seconds_ = [run, passes] { return run(passes); };
    return look;
}

std::unique_ptr<RoofLook> RoofLook::compute(const MachineProfile& profile, const std::string& name,
                                            int t) {
    const ComputeRoof* roof = compute_roof(profile, name, t);
    const kernels::ComputeKernel* k = kernels::find_compute_kernel(name);
    if (!roof || !k || !k->supported(kernels::cpu_features()) || t < 1 ||
        t > kernels::available_cpus())
        return nullptr;
    if (k->needs_amx_permission && !kernels::request_amx_permission().empty()) return nullptr;
    // Per-thread operands, as `ceiling machine` times them (never a shared cache line).
    auto ops = std::make_shared<std::vector<kernels::RoofOperands>>(static_cast<std::size_t>(t));
    for (auto& o : *ops) kernels::fill_check_operands(*k, o);
    const std::int64_t n = calibrate([&](std::int64_t m) { k->run(m, &(*ops)[0]); }, target_s);
    std::unique_ptr<RoofLook> look(new RoofLook);
    look->base_.kernel = roof->name;
    look->base_.threads = t;
    look->base_.profile_per_s = roof->ops_per_s.median;
    look->base_.kind = RoofKind::compute;
    look->base_.profile_threads = t;
    look->work_ = static_cast<double>(t) * static_cast<double>(n) * k->instructions_per_iteration *
                  k->ops_per_instruction;
    look->seconds_ = [ops, k, n, t] {
        return team_cpu_seconds(t, [&](int j) { k->run(n, &(*ops)[static_cast<std::size_t>(j)]); });
    };
    return look;
}

void RoofLook::look() { rates_.push_back(work_ / seconds_()); }

RoofCheck RoofLook::check() const {
    RoofCheck c = base_;
    if (rates_.empty()) return c;
    c.now_per_s = *std::max_element(rates_.begin(), rates_.end());
    c.slowest_per_s = *std::min_element(rates_.begin(), rates_.end());
    return c;
}

namespace {

// The check as `run` takes it: a few looks in a row.
std::optional<RoofCheck> looked(std::unique_ptr<RoofLook> l) {
    if (!l) return std::nullopt;
    for (int i = 0; i < timed_runs; ++i) l->look();
    return l->check();
}

}  // namespace

std::vector<RoofCheck> measure_dram_now(const MachineProfile& profile,
                                        const std::set<int>& threads) {
    std::vector<RoofCheck> out;
    for (const int t : threads)
        if (auto c = looked(RoofLook::dram(profile, t))) out.push_back(std::move(*c));
    return out;
}

std::vector<RoofCheck> measure_compute_now(const MachineProfile& profile,
                                           const std::set<std::pair<std::string, int>>& roofs) {
    std::vector<RoofCheck> out;
    for (const auto& [name, t] : roofs)
        if (auto c = looked(RoofLook::compute(profile, name, t))) out.push_back(std::move(*c));
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
