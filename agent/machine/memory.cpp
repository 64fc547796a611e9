// Bandwidth roofs from a working-set sweep, and latency per level by pointer chase.
#include <algorithm>
#include <cmath>
#include <optional>

#include "agent/machine/machine.hpp"
#include "agent/machine/repeat.hpp"
#include "diagnosis/format.hpp"
#include "collectors/clock.hpp"
#include "diagnosis/plateau.hpp"
#include "kernels/buffer.hpp"
#include "kernels/parallel.hpp"
#include "kernels/roofs/bandwidth.hpp"
#include "kernels/roofs/latency.hpp"

namespace ceiling::measure {
namespace {

constexpr std::uint64_t KiB = 1024;
constexpr std::uint64_t MiB = 1024 * KiB;
constexpr std::uint64_t GiB = 1024 * MiB;

// Largest working set of the sweep: at least 4x the last-level cache and 512 MiB so the last
// points sit in DRAM (a VM may not show every L3 its vCPUs use: on a 2-vCPU Zen 5 guest with
// one 32 MiB L3 shown, 2-thread bandwidth still fell from ~60 GB/s at 64 MiB to ~47 at 256
// and 512 MiB), but never more than a quarter of memory.
std::uint64_t sweep_limit(const HostInfo& h) {
    const std::uint64_t llc = std::max<std::uint64_t>(h.last_level_cache_bytes(), 8 * MiB);
    const std::uint64_t want = std::max<std::uint64_t>(4 * llc, 512 * MiB);
    const std::uint64_t cap = h.memory_bytes > 0 ? h.memory_bytes / 4 : 2 * GiB;
    return std::min(want, cap);
}

// Geometric steps from 4 KiB to the limit, plus 2x and 3x the last-level cache so the
// memory plateau has at least three points even in a coarse sweep.
std::vector<std::uint64_t> sweep_sizes(std::uint64_t limit, std::uint64_t llc, bool quick) {
    const double factor = quick ? 2.0 : std::sqrt(2.0);
    std::vector<std::uint64_t> sizes;
    for (double s = 4 * KiB; s <= static_cast<double>(limit) * 1.0001; s *= factor)
        sizes.push_back(static_cast<std::uint64_t>(s));
    for (std::uint64_t extra : {2 * llc, 3 * llc, limit})
        if (extra <= limit) sizes.push_back(extra);
    std::sort(sizes.begin(), sizes.end());
    // Drop near-duplicates (within 10%).
    std::vector<std::uint64_t> out;
    for (auto s : sizes)
        if (out.empty() || static_cast<double>(s) > 1.1 * static_cast<double>(out.back()))
            out.push_back(s);
    return out;
}

// Capacity of each cache level as the sweep's threads see it: private caches add up
// across the threads using them, a shared cache counts once per instance in use.
std::vector<LevelCapacity> capacities(const HostInfo& h, int threads) {
    std::vector<LevelCapacity> out;
    for (int level = 1; level <= 4; ++level) {
        const CacheInfo* c = h.cache(level);
        if (!c) continue;
        const int per_instance = std::max(1, c->shared_by_cpus);
        const int instances_used =
            std::min(c->instances, (threads + per_instance - 1) / per_instance);
        out.push_back({"L" + std::to_string(level),
                       static_cast<double>(c->size_bytes) * std::max(1, instances_used)});
    }
    return out;
}

struct Point {
    std::uint64_t working_set_bytes;
    Summary bytes_per_s;
};

}  // namespace

namespace {
// --quick sweeps read (what decode-like kernels stream) and triad (STREAM's reference); the
// full run adds write, copy and update (in place).
std::vector<kernels::BandwidthKernelInfo> sweep_kernels_for(bool quick) {
    std::vector<kernels::BandwidthKernelInfo> out;
    for (const auto& k : kernels::bandwidth_kernels)
        if (!quick || k.name == "read" || k.name == "triad") out.push_back(k);
    return out;
}
}  // namespace

int memory_steps(const MachineProfile& p, std::size_t thread_counts, bool quick) {
    int caches = 0;
    for (int level = 1; level <= 3; ++level) caches += p.host.cache(level) ? 1 : 0;
    // + 1: DRAM
    return static_cast<int>(thread_counts * sweep_kernels_for(quick).size()) + caches + 1;
}

namespace {

// What every point of the sweep shares: the kernels' implementation, the working sets, the
// repeat plan, and the arena the threads' arrays are cut from.
struct Sweep {
    const kernels::BandwidthImpl& impl;
    const std::vector<std::uint64_t>& sizes;
    const RepeatPlan& plan;
    const kernels::Buffer& arena;
};

// The arena every point of the sweep runs in.
kernels::Buffer sweep_arena(std::uint64_t limit, int max_threads) {
    // Room for the sweep's largest working set plus the inter-array padding of every thread.
    const std::size_t arena_floats =
        limit / sizeof(float) +
        8 * kernels::bandwidth_array_pad_floats * static_cast<std::size_t>(max_threads);
    kernels::Buffer arena(arena_floats * sizeof(float));
    // First touch by the threads that will use it (page placement), and no zero pages.
    kernels::run_on_threads(max_threads, [&](int t) {
        const std::size_t n = arena_floats;
        const std::size_t lo =
            n * static_cast<std::size_t>(t) / static_cast<std::size_t>(max_threads);
        const std::size_t hi =
            n * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(max_threads);
        std::fill(arena.floats() + lo, arena.floats() + hi, 1.0f);
    });
    return arena;
}

// One visit to the point of working set `ws`; none when it leaves a thread no whole block.
std::optional<Point> measure_point(const Sweep& s, const kernels::BandwidthKernelInfo& kernel,
                                   int threads, std::uint64_t ws) {
    // Each thread gets `arrays` arrays of n floats, n a multiple of the block.
    const std::uint64_t per_thread = ws / static_cast<std::uint64_t>(threads);
    const std::size_t n = per_thread / static_cast<std::uint64_t>(kernel.arrays) / sizeof(float) /
                          kernels::bandwidth_block_floats * kernels::bandwidth_block_floats;
    if (n == 0) return std::nullopt;
    const double bytes_per_pass =
        static_cast<double>(n) * sizeof(float) * kernel.accesses * threads;
    auto run = [&](int passes) {
        return team_wall_seconds(threads, [&](int t) {
            float* base =
                s.arena.floats() +
                static_cast<std::size_t>(t) * kernels::bandwidth_footprint_floats(n, kernel.arrays);
            kernels::run_bandwidth_kernel(s.impl, kernel.name, base, n, passes);
        });
    };
    const double one = run(1);
    const int passes = std::max(1, static_cast<int>(s.plan.target_s / std::max(one, 1e-9)));
    const int repeats = one > 0.05 ? std::max(1, s.plan.repeats - 1) : s.plan.repeats;
    const auto t = time_runs([&] { return run(passes); }, s.plan.warmup, repeats);
    return Point{static_cast<std::uint64_t>(bytes_per_pass),
                 summarize_reciprocal(t, bytes_per_pass * passes)};
}

// The sweep of one kernel at `threads`, `blocks` times over; each point keeps its best block.
std::vector<Point> sweep_points(const Sweep& s, const kernels::BandwidthKernelInfo& kernel,
                                int threads) {
    std::vector<Point> points;
    for (int block = 0; block < s.plan.blocks; ++block) {
        std::size_t index = 0;
        for (std::uint64_t ws : s.sizes) {
            const auto pt = measure_point(s, kernel, threads, ws);
            if (!pt) continue;
            if (index == points.size())
                points.push_back(*pt);
            else if (pt->bytes_per_s.median > points[index].bytes_per_s.median)
                points[index] = *pt;
            ++index;
        }
    }
    return points;
}

// A bandwidth roof per plateau of the sweep's points that a level of `levels` names.
void add_plateau_roofs(MachineProfile& p, const kernels::BandwidthKernelInfo& kernel, int threads,
                       const std::vector<Point>& points, const std::vector<LevelCapacity>& levels) {
    std::vector<SweepSample> samples;
    for (const auto& pt : points)
        samples.push_back({static_cast<double>(pt.working_set_bytes), pt.bytes_per_s.median});
    const auto plateaus = detect_plateaus(samples);
    for (const auto& lp : label_plateaus(samples, plateaus, levels)) {
        std::vector<double> values;
        for (std::size_t i = lp.plateau.first; i <= lp.plateau.last; ++i)
            values.push_back(samples[i].value);
        BandwidthRoof r;
        r.level = lp.level;
        r.kernel = std::string(kernel.name);
        r.threads = threads;
        r.bytes_per_s = summarize(values);
        r.min_working_set_bytes = points[lp.plateau.first].working_set_bytes;
        r.max_working_set_bytes = points[lp.plateau.last].working_set_bytes;
        r.far_end_bytes_per_s = samples[lp.plateau.last].value;
        // Memory's tail without a plateau (plateau.hpp) has no spread to show its noise.
        r.noisy = r.bytes_per_s.rel_spread > noisy_spread ||
                  lp.plateau.points() < PlateauOptions{}.min_points;
        p.bandwidth_roofs.push_back(r);
    }
}

// An absence for each level of `levels` that got no roof of `kernel` at `threads`.
void say_levels_without_plateau(MachineProfile& p, const kernels::BandwidthKernelInfo& kernel,
                                int threads, const std::vector<LevelCapacity>& levels) {
    for (const auto& l : levels)
        if (std::none_of(
                p.bandwidth_roofs.begin(), p.bandwidth_roofs.end(), [&](const BandwidthRoof& r) {
                    return r.level == l.level && r.kernel == kernel.name && r.threads == threads;
                }))
            // Said, not dropped in silence: under a busy neighbour the sweep's
            // points inside a level can scatter past the tolerance (seen for L1 at
            // one thread on a Zen 3 guest while another process ran).
            p.absent.push_back(
                {l.level + " " + std::string(kernel.name) + " bandwidth at " +
                     threads_label(threads),
                 "no plateau in the working-set sweep: the points inside the level "
                 "varied by more than " +
                     std::to_string(static_cast<int>(PlateauOptions{}.tolerance * 100)) +
                     " % (a busy or noisy host?)"});
}

// The roofs of `threads` (those from index `first_roof` on) in level order.
void order_roofs_by_level(MachineProfile& p, std::size_t first_roof, int threads) {
    // Inner levels first, DRAM last, each level's kernels in sweep order: a level that
    // one kernel lacks (L3 read with no plateau) must not put its row after DRAM.
    const auto levels = capacities(p.host, threads);
    const auto rank = [&](const BandwidthRoof& r) {
        for (std::size_t l = 0; l < levels.size(); ++l)
            if (levels[l].level == r.level) return l;
        return levels.size();
    };
    std::stable_sort(p.bandwidth_roofs.begin() + static_cast<std::ptrdiff_t>(first_roof),
                     p.bandwidth_roofs.end(), [&](const BandwidthRoof& a, const BandwidthRoof& b) {
                         return rank(a) < rank(b);
                     });
}

}  // namespace

void measure_bandwidth_roofs(MachineProfile& p, const std::vector<int>& thread_counts,
                             const MachineOptions& o) {
    const auto& impl = kernels::best_bandwidth_impl();
    const std::uint64_t limit = sweep_limit(p.host);
    const auto sizes = sweep_sizes(limit, p.host.last_level_cache_bytes(), o.quick);
    // No separate warm-up: the single pass that sizes each point warms it. Points that take
    // long per pass (memory-sized) get fewer repeats. The sweep runs `blocks` times and each
    // point keeps its best block: a neighbour's burst on a shared host then spoils one
    // visit to a point, not the point.
    const RepeatPlan plan = o.quick ? RepeatPlan{0.004, 0, 2, 2} : RepeatPlan{0.01, 0, 3, 2};
    const auto sweep_kernels = sweep_kernels_for(o.quick);
    p.method["bandwidth_isa"] = std::string(impl.isa);
    p.method["bandwidth_sweep"] = "4 KiB to " + bytes(static_cast<double>(limit)) + ", x" +
                                  (o.quick ? std::string("2") : std::string("1.41")) + " steps";

    const int max_threads = *std::max_element(thread_counts.begin(), thread_counts.end());
    const kernels::Buffer arena = sweep_arena(limit, max_threads);
    const Sweep sweep{impl, sizes, plan, arena};

    for (int threads : thread_counts) {
        const std::size_t first_roof = p.bandwidth_roofs.size();
        for (const auto& kernel : sweep_kernels) {
            o.on_step
                ? o.on_step(std::string("bandwidth sweep ") + std::string(kernel.name) + ", " +
                            std::to_string(threads) + (threads == 1 ? " thread" : " threads"))
                : void();
            const std::vector<Point> points = sweep_points(sweep, kernel, threads);
            for (const auto& pt : points)
                p.sweep.push_back(
                    {std::string(kernel.name), threads, pt.working_set_bytes, pt.bytes_per_s});
            const auto levels = capacities(p.host, threads);
            add_plateau_roofs(p, kernel, threads, points, levels);
            say_levels_without_plateau(p, kernel, threads, levels);
        }
        order_roofs_by_level(p, first_roof, threads);
    }
}

void measure_latencies(MachineProfile& p, const MachineOptions& o) {
    const std::uint64_t limit = sweep_limit(p.host);
    const std::size_t line =
        p.host.cache(1) && p.host.cache(1)->line_bytes ? p.host.cache(1)->line_bytes : 64;
    // One point inside each level: the middle of the level's measured bandwidth plateau
    // (1 thread, read) when the sweep found one, since a VM's nominal cache sizes can be the
    // host's; else half the nominal size. DRAM at the sweep's limit with every other line
    // (still twice the LLC in distinct lines).
    struct Target {
        std::string level;
        std::uint64_t bytes;
        std::size_t stride;
    };
    auto measured_middle = [&](const std::string& level) -> std::uint64_t {
        for (const auto& r : p.bandwidth_roofs)
            if (r.level == level && r.threads == 1 && r.kernel == "read")
                return static_cast<std::uint64_t>(
                    std::sqrt(static_cast<double>(r.min_working_set_bytes) *
                              static_cast<double>(r.max_working_set_bytes)));
        return 0;
    };
    std::vector<Target> targets;
    for (int level = 1; level <= 3; ++level)
        if (const CacheInfo* c = p.host.cache(level)) {
            const std::string name = "L" + std::to_string(level);
            const std::uint64_t prev =
                level > 1 && p.host.cache(level - 1) ? p.host.cache(level - 1)->size_bytes : 0;
            const std::uint64_t measured = measured_middle(name);
            targets.push_back(
                {name, measured ? measured : std::max(c->size_bytes / 2, 2 * prev), line});
        }
    targets.push_back({"DRAM", limit, 2 * line});

    const RepeatPlan plan = o.quick ? RepeatPlan{0.01, 1, 3, 1} : RepeatPlan{0.03, 1, 5, 1};
    kernels::Buffer buf(limit);
    for (const auto& t : targets) {
        if (o.on_step)
            o.on_step("latency " + t.level + " (" + bytes(static_cast<double>(t.bytes)) +
                      ")");
        kernels::build_chase(buf.data(), t.bytes, t.stride, 42);
        void* sink = buf.data();
        const std::int64_t n =
            calibrate([&](std::int64_t m) { sink = kernels::chase(sink, m); }, plan.target_s);
        const auto times = time_runs(
            [&] { return team_cpu_seconds(1, [&](int) { sink = kernels::chase(sink, n); }); },
            plan.warmup, plan.repeats);
        std::vector<double> per_load;
        for (double x : times) per_load.push_back(x / static_cast<double>(n));
        LatencyMeasurement m;
        m.level = t.level;
        m.working_set_bytes = t.bytes;
        m.seconds = summarize(per_load);
        if (const auto* c = p.clock("scalar", 1)) m.cycles = m.seconds.median * c->hz.median;
        p.latencies.push_back(m);
        asm volatile("" : : "r"(sink));
    }
}

}  // namespace ceiling::measure
