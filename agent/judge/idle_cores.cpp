// What the cores a region left idle say: cores the host had free where more threads would
// raise its roof ("use the idle cores"), a narrower affinity mask than its quota, and
// threads that shared its work but took turns (region_judging.hpp).
#include <algorithm>
#include <cmath>

#include "agent/judge/region_judging.hpp"
#include "diagnosis/format.hpp"
#include "diagnosis/process_evidence.hpp"

namespace ceiling::judge {

// A region that left at least half the host's CPUs idle (not busy with it, with processes it
// started, or with other processes) gets them named where the roof nearest it is this many
// times as high at every CPU as at the cores it was judged at: a single-threaded loop at its
// 1-thread FMA roof is "done" on one core of two, and the other core is the first lever (the
// system first, threading among it); a stream whose DRAM roof barely grows with threads is
// left alone.
constexpr double idle_headroom_ratio = 1.5;

std::optional<IdleCores> idle_cores(const MachineProfile& profile, Measurement m,
                                    const Thresholds& t, const RecordedRegion& reg,
                                    const Diagnosis& d, const CpuLimits& limits) {
    const int host = profile.host.logical_cpus;
    // The whole CPUs its quota lets it use, and of those the ones its affinity mask allows: a
    // mask narrower than the quota's is itself the lever (taskset -c 0 around eight threads
    // read "use the idle cores ... more threads" before).
    const auto whole = [](double cpus) { return static_cast<int>(std::floor(cpus + 1e-9)); };
    const int reachable = limits.quota ? std::min(host, whole(*limits.quota)) : host;
    const int allowed = limits.affinity ? std::min(reachable, whole(*limits.affinity)) : reachable;
    const bool masked = allowed < reachable;
    const int cpus = reachable;
    // Idle is told from busy elsewhere only where the host's other work was measured, and
    // busy cores only from instances long enough to read them.
    if (cpus < 2 || !reg.busy_cores || !reg.other_busy_cores ||
        reg.busy_cores_error.value_or(0.0) > 0.25 || *reg.busy_cores < waited_below_cores)
        return std::nullopt;
    const double own = *reg.busy_cores, below = reg.descendant_busy_cores.value_or(0.0),
                 others = *reg.other_busy_cores;
    // Other processes outside its control group do not spend its quota, but take CPUs; so
    // do its own other threads' ranges open beside it.
    const double idle =
        std::min<double>(cpus, host - others) - own - below - reg.beside_busy_cores.value_or(0.0);
    if (idle < std::max(1.0, cpus / 2.0) - 0.25) return std::nullopt;
    // The roof it came nearest to (the one that binds it), against the same roof at every CPU.
    const RoofComparison* binding = nullptr;
    for (const auto& c : d.roofs)
        if (c.fraction && c.roof_per_s && (!binding || *c.fraction > *binding->fraction))
            binding = &c;
    if (!binding) return std::nullopt;
    m.threads = cpus;
    const Diagnosis all = diagnose_kernel(profile, m, t, static_cast<double>(cpus));
    const auto same =
        std::find_if(all.roofs.begin(), all.roofs.end(), [&](const RoofComparison& c) {
            return c.kind == binding->kind && c.level == binding->level && c.roof_per_s;
        });
    if (same == all.roofs.end()) return std::nullopt;
    const double ratio = *same->roof_per_s / *binding->roof_per_s;
    if (!(ratio >= idle_headroom_ratio)) return std::nullopt;
    const std::string n = std::to_string(cpus);
    const std::string roof = binding->kind == RoofKind::compute ? "compute " + binding->roof
                                                                : binding->level + " bandwidth";
    // "<own> busy ... idle while it was open", after naming which CPUs.
    const std::string busy =
        " busy" + (below > 0 ? " (" + fixed(below, 2) + " in processes it started)" : "") +
        " and other processes " + fixed(others, 2) + ": " + fixed(idle, 2) + " idle while it was open";
    if (masked)
        return IdleCores{
            {FindingKind::assumption,
             "its CPU affinity allowed " + std::to_string(allowed) + " of the " + n +
                 " CPUs it could use (taskset, numactl, a container's cpuset); it kept " +
                 fixed(own + below, 2) + busy + ". The roof nearest it (" + roof + ") is " +
                 fixed(ratio, 2) + " x as high at " + n +
                 " threads: a wider mask, and threads to fill it, raise what it can reach"},
            "widen its CPU affinity (it allowed " + std::to_string(allowed) + " of " + n +
                " CPUs; " + fixed(ratio, 2) + " x its roof at " + n + " threads); then "};
    return IdleCores{
        {FindingKind::assumption,
         "it kept " + fixed(own + below, 2) + " of the " +
             (cpus < host ? n + " CPUs its control group's quota gives" : "host's " + n + " CPUs") +
             busy + ". The roof nearest it (" + roof + ") is " + fixed(ratio, 2) + " x as high at " +
             n +
             " threads: if its work divides, more threads (a pool, OpenMP, "
             "torch.set_num_threads, worker processes) raise what it can reach"},
        "use the idle cores (" + fixed(ratio, 2) + " x its roof at " + n +
            " threads, if its work divides); then "};
}

// Threads that shared its work but took turns: the program's working threads while it was
// open well above the cores it kept busy (busy over the fewer of those threads and the CPUs
// it could use below thread_concurrency), while CPUs sat idle, so nothing else held them
// off. Four threads handing one lock round read "use the idle cores ... more threads"
// before, which adds a fifth thread to the queue. Not asked of a region that mostly waited
// (below waited_below_cores: I/O, a device), nor where the host's other work is unknown.
std::optional<IdleCores> took_turns(const MachineProfile& profile, const Thresholds& t,
                                    const RecordedRegion& reg, const CpuLimits& limits) {
    const auto usable = within(limits, profile.host.logical_cpus > 0
                                           ? std::optional<double>(profile.host.logical_cpus)
                                           : std::nullopt);
    if (!reg.busy_cores || !reg.other_busy_cores || !usable) return std::nullopt;
    // The program's: its working threads are the whole program's too.
    const double busy = *reg.busy_cores + reg.descendant_busy_cores.value_or(0.0) +
                        reg.beside_busy_cores.value_or(0.0);
    const auto share = thread_concurrency(busy, reg.working_threads, *usable);
    const double idle = std::min(*usable, profile.host.logical_cpus - *reg.other_busy_cores) - busy;
    if (!share || busy < waited_below_cores || !(*share < t.thread_concurrency) || idle < 0.5)
        return std::nullopt;
    const double could = std::min(*reg.working_threads, *usable);
    const std::string threads = fixed(*reg.working_threads, 2) + " threads shared the program's work";
    return IdleCores{
        {FindingKind::assumption,
         "its threads took turns: " + threads + " while it was open, but " + fixed(busy, 2) +
             " cores were busy at once, " + fixed(idle, 2) + " CPUs idle (thread_concurrency " +
             fixed(*share, 2) + ", below " + fixed(t.thread_concurrency, 2) +
             "): they waited on each other, a lock held while working (Python's GIL, a mutex "
             "around the work) or hand-offs between stages. Running at once they could keep " +
             fixed(could, 2) + " cores busy; more threads would only queue"},
        "let its threads run at once (" + threads + ", " + fixed(busy, 2) +
            " cores busy: they took turns; processes instead of threads under the GIL, native "
            "code that releases it, finer locks); then "};
}

// Its process's threads queued for a CPU while it was open (the scheduler's statistics) as
// much as they ran, and half a thread or more on average: the region was slow because it
// waited for a CPU, whatever its code. Two data-loader workers on two CPUs left a training
// step's forward pass 0.07 cores with 1.6 threads queued, and it read "latency bound: the
// core or the caches". Who held the CPUs is said from the same readings.
namespace {

// The thread-pool setting a program's team is sized by, to name in a move: torch's own for a
// PyTorch region, else the OpenMP variable OpenMP and the BLAS pools (OpenBLAS, MKL) read.
std::string pool_setting(const RecordedRegion& reg, int threads) {
    if (reg.labels.count(torch_role_label))
        return "torch.set_num_threads(" + std::to_string(threads) + ")";
    return "OMP_NUM_THREADS=" + std::to_string(threads);
}

}  // namespace

std::optional<IdleCores> queued_for_cpu(const Thresholds& t, const RecordedRegion& reg,
                                        std::optional<double> cpus) {
    if (!reg.busy_cores || !reg.queued_threads || *reg.queued_threads < t.queued_threads ||
        *reg.queued_threads < *reg.busy_cores)
        return std::nullopt;
    std::vector<std::string> holders;
    if (reg.descendant_busy_cores && *reg.descendant_busy_cores >= competing_cores_min)
        holders.push_back("the processes it started kept " + fixed(*reg.descendant_busy_cores, 2) +
                          " cores busy");
    if (reg.other_busy_cores && *reg.other_busy_cores >= competing_cores_min)
        holders.push_back("other processes (the program's others, or other programs) " +
                          fixed(*reg.other_busy_cores, 2));
    std::string who;
    for (std::size_t i = 0; i < holders.size(); ++i)
        who += (i == 0 ? "" : i + 1 == holders.size() ? " and " : ", ") + holders[i];
    if (who.empty()) who = "its own threads outnumbered the CPUs";
    // Each of its threads ran busy / (busy + queued) of the time it was ready to: the queue
    // made its work that much slower, whatever the work.
    const double slowdown = (*reg.busy_cores + *reg.queued_threads) / *reg.busy_cores;
    IdleCores q{
        {FindingKind::assumption,
         "it waited for a CPU: its process's threads were queued " + fixed(*reg.queued_threads, 2) +
             " on average while it was open (runnable, not running: the scheduler's "
             "statistics) and kept " +
             fixed(*reg.busy_cores, 2) + " cores busy; meanwhile " + who +
             ". Its time is the queue's before its code's (up to " + fixed(slowdown, 1) +
             "x), and its roof fractions understate what its code does with a CPU"},
        "give it the CPUs (its threads queued " + fixed(*reg.queued_threads, 2) + " on average, " +
            fixed(*reg.busy_cores, 2) +
            " cores busy: fewer workers beside it (a data loader's num_workers, pool sizes), "
            "their priority lowered (nice), or its own threads as many as the CPUs); then "};
    // A team of its own threads on fewer CPUs than other work left free: the setting that
    // sizes the team, at the CPUs that were free, comes first (a torch script with two
    // intra-op threads on two CPUs, one held by other work, ran 3-15x faster at one).
    const double others = reg.other_busy_cores.value_or(0.0) + reg.descendant_busy_cores.value_or(0.0);
    if (cpus && reg.working_threads && *reg.working_threads >= 1.5) {
        const int free = std::max(1, static_cast<int>(std::floor(*cpus - others + 0.25)));
        if (*reg.working_threads > free + 0.25)
            q.move = "size its thread pool to the CPUs other work left free: " +
                     pool_setting(reg, free) + " (its " + fixed(*reg.working_threads, 1) +
                     " threads shared " + fixed(*cpus - others, 2) +
                     " free CPUs and queued: up to " + fixed(slowdown, 1) +
                     "x slower for it); or free the CPUs (fewer workers beside it, their "
                     "priority lowered); then ";
    }
    return q;
}

// Busy cores from which one thread is taken as working all along, and CPUs idle beside it
// from which they are said.
constexpr double one_thread_busy_min = 0.8;
constexpr double idle_cpus_min = 0.75;

std::optional<Finding> one_thread_busy(const ProcessAccounting& p, std::optional<double> cpus) {
    if (!cpus || !p.working_threads || !p.user_s || !p.system_s || !(p.wall_s > 0) ||
        *p.working_threads >= working_threads_min)
        return std::nullopt;
    const double busy = (*p.user_s + *p.system_s) / p.wall_s;
    // A CPU another process kept busy is not idle: the host's runnable threads beside its own
    // (the sampler's integral) held that many on average.
    double others = 0;
    if (p.host_runnable_thread_s && p.own_runnable_thread_s)
        others = std::clamp((*p.host_runnable_thread_s - *p.own_runnable_thread_s) / p.wall_s, 0.0,
                            std::max(0.0, *cpus - busy));
    const double idle = *cpus - busy - others;
    if (busy < one_thread_busy_min || idle < idle_cpus_min) return std::nullopt;
    return Finding{FindingKind::assumption,
                   "one thread did its work (its CPU time shared by " + fixed(*p.working_threads, 2) +
                       " threads, " + fixed(busy, 2) + " cores busy of " + fixed(*cpus, 2) +
                       " CPUs" +
                       (others > 0.05 ? ", other work held " + fixed(others, 2) : std::string()) +
                       "): whatever bounds its code, " + fixed(idle, 2) +
                       " CPUs sat idle beside it; where its work divides (threads, OpenMP, worker "
                       "processes, a library's threaded build) they are a lever of up to " +
                       fixed((busy + idle) / busy, 2) + "x"};
}

std::optional<Finding> held_cores_unresolved(const MachineProfile& profile, const Thresholds& t,
                                             const RecordedRegion& reg, const CpuLimits& limits,
                                             std::optional<double> interval_s) {
    const auto usable = within(limits, profile.host.logical_cpus > 0
                                           ? std::optional<double>(profile.host.logical_cpus)
                                           : std::nullopt);
    // Only where the sampler could have told (a one-process program, sampled) and did not.
    if (reg.peak_busy_cores || !reg.busy_cores || !reg.working_threads || !usable || !interval_s ||
        !(*interval_s > 0) || reg.processes > 1 || reg.measurement.durations_s.empty())
        return std::nullopt;
    const double p50 = reg.measurement.duration_s.median;
    // Three whole looks inside an instance need about four intervals of it.
    if (!(p50 < 4 * *interval_s)) return std::nullopt;
    const double busy = *reg.busy_cores, could = std::min(*reg.working_threads, *usable);
    // Working threads are the participation ratio of their CPU shares, (sum)^2 / sum of
    // squares: a team of two whose second thread works a third of the first's time reads 1.6
    // of them for 1.33 busy cores, at most ~0.3 apart for two threads; so fewer busy cores than
    // that by 10 % and 0.15 cores, and not so few that they took turns (took_turns says that).
    if (could < 1.1 * std::max(1.0, busy) || could - busy < 0.15 ||
        busy < t.thread_concurrency * could)
        return std::nullopt;
    const double ms = std::floor(p50 / 6 * 1e3);
    const std::string ask =
        ms >= 1 ? "run again with --interval " +
                      std::to_string(static_cast<int>(std::min(ms, 5.0))) + "ms to judge it at them"
                : "too short even for the sampler's 1 ms looks: a range around several of them, "
                  "or ranges on each thread, would show them";
    return Finding{FindingKind::assumption,
                   "its program's " + fixed(*reg.working_threads, 2) + " working threads kept " +
                       fixed(busy, 2) +
                       " cores busy on average while it was open: a team waiting for its "
                       "slowest thread (load imbalance) or a serial section reads so, and then "
                       "the idle part is distance from a roof of more cores; but its instances "
                       "(p50 " +
                       duration(p50) + ") are shorter than four of the sampler's " +
                       duration(*interval_s) +
                       " looks, so the cores it held at once are not known: " + ask};
}

}  // namespace ceiling::judge
