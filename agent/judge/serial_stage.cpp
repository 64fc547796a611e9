// A run's serial stage: a pipeline whose stages record ranges on their own threads, or run as
// processes of its tree, lasts as long as its slowest stage's work end to end. A producer decoding
// on one thread (99 % of the wall time) beside a consumer that waited for it three quarters of the
// time read "bound unknown: measure what is missing first", with both stages' ranges listed and
// nothing saying that one of them set the run's length.
#include <algorithm>
#include <string>

#include "agent/judge/judge_record.hpp"
#include "agent/judge/region_judging.hpp"
#include "diagnosis/statistics.hpp"
#include "diagnosis/format.hpp"

namespace ceiling::judge {
namespace {

// Its instances end to end span at least this share of the wall time (for ranges, of the
// time from the program's first range to its last: a start-up before them, imports or a
// sanitizer's, is not the pipeline's): the run cannot end much sooner than they do.
constexpr double spans_wall_min = 0.80;
// One instance at a time (side by side in one process counted once: RecordedRegion::
// concurrency), and its own thread busy at least half of it: it computes, not waits.
constexpr double one_at_a_time_max = 1.10;
constexpr double own_core_min = 0.50;
// Instances per execution at least: one range around the whole run (a main loop beside a
// loader) spans it trivially, and has no instances to run side by side.
constexpr double instances_min = 4;
// Other stages' ranges kept this many cores busy beside it, and at least this many CPUs
// idled: the others did work of their own and there was room for more of its.
constexpr double beside_min_cores = 0.10;
constexpr double idle_min_cpus = 0.25;
// A process busy within this of one core over the time it was seen, and its other
// processes' cores beside it at least this: a stage feeding it (`gen` in `gen | gzip` used
// 0.11, `cat` of a file into it 0.028), not a shell waiting for its one child (0.000).
constexpr double one_core_margin = 0.15;
constexpr double beside_min_process_cores = 0.01;

// The same for a process of its tree: one process busy about a core over most of the run
// while its other processes did a little beside it and CPUs idled (`gen | gzip -1`: gzip
// 0.98 cores, gen blocked on the pipe, a CPU idle, read "bound unknown" with the processes
// listed). Its threads are not known here, so a process at one core's worth may be one
// busy thread or several sharing it; either way the others wait for it.
std::optional<IdleCores> serial_process(const RunRecord& record, double cpus) {
    const auto timed = record.timed_executions();
    if (timed.empty() || timed.front()->processes.size() < 2) return std::nullopt;
    const Execution& e = *timed.front();
    if (!(e.wall_s > 0)) return std::nullopt;
    double total = 0;
    for (const auto& p : e.processes) total += p.cpu_s;
    const ProcessUse* stage = nullptr;
    for (const auto& p : e.processes) {
        if (!(p.seen_s >= spans_wall_min * e.wall_s)) continue;
        const double cores = p.cpu_s / p.seen_s;
        if (cores < 1 - one_core_margin || cores > 1 + one_core_margin) continue;
        if (stage) return std::nullopt;  // two such: neither is the one the others wait for
        stage = &p;
    }
    if (!stage) return std::nullopt;
    const double others = (total - stage->cpu_s) / e.wall_s, idle = cpus - total / e.wall_s;
    if (others < beside_min_process_cores || idle < idle_min_cpus) return std::nullopt;
    const std::string name = stage->name + " (pid " + std::to_string(stage->pid) + ")";
    const std::string span = percent(std::min(1.0, stage->seen_s / e.wall_s));
    Finding f{FindingKind::assumption,
              name + " is the run's serial stage: busy " + fixed(stage->cpu_s / stage->seen_s, 2) +
                  " cores over the " + fixed(stage->seen_s, 2) + " s it was seen (" + span +
                  " of the wall time), while its other processes kept " + fixed(others, 2) +
                  " cores busy beside it and " + fixed(idle, 2) + " of the " + fixed(cpus, 2) +
                  " CPUs idled: the run lasts as long as its work, whatever the processes "
                  "beside it do (they wait for it: on a pipe, a socket, a queue). Make it "
                  "faster, or split its work over the idle cores (more processes or threads "
                  "on that stage, a parallel version of the tool)"};
    return IdleCores{std::move(f), "start with " + name + ", the serial stage (busy " +
                                       fixed(stage->cpu_s / stage->seen_s, 2) + " cores over " +
                                       span +
                                       " of the wall time, beside processes that wait "
                                       "for it): "};
}

}  // namespace

std::optional<IdleCores> serial_stage(const RunRecord& record) {
    const double wall = record.whole.duration_s.count ? record.whole.duration_s.mean : 0.0;
    // The time its ranges ran: the wall time less that before the first and after the last.
    double ranged = wall;
    if (!record.before_regions_s_per_execution.empty() &&
        !record.after_regions_s_per_execution.empty())
        ranged -= mean(record.before_regions_s_per_execution) +
                  mean(record.after_regions_s_per_execution);
    if (!(ranged > 0)) ranged = wall;
    const auto cpus = usable_cpus(record);
    if (!cpus) return std::nullopt;
    if (!(wall > 0)) return serial_process(record, *cpus);
    const RecordedRegion* stage = nullptr;
    for (const auto& reg : record.regions) {
        if (reg.kind != RegionKind::range || !reg.parent.empty() || reg.processes > 1 ||
            reg.concurrency.value_or(1.0) > one_at_a_time_max || !reg.busy_cores ||
            !reg.beside_busy_cores || *reg.beside_busy_cores < beside_min_cores ||
            static_cast<double>(reg.instances) <
                instances_min * std::max<std::size_t>(1, reg.total_s_per_execution.size()))
            continue;
        const double own =
            *reg.busy_cores - *reg.beside_busy_cores - reg.unranged_busy_cores.value_or(0.0);
        if (own < own_core_min || reg.open_s_per_execution() < spans_wall_min * ranged ||
            *cpus - *reg.busy_cores < idle_min_cpus)
            continue;
        // Two stages that each span the run (a balanced pipeline, each busy all along) both
        // set its length: neither is the one the others wait for.
        if (stage) return std::nullopt;
        stage = &reg;
    }
    if (!stage) return serial_process(record, *cpus);
    const double idle = *cpus - *stage->busy_cores;
    const std::string span = percent(std::min(1.0, stage->open_s_per_execution() / ranged));
    Finding f{
        FindingKind::assumption,
        stage->path + " is the run's serial stage: its instances, one at a time, spanned " + span +
            " of the time from the program's first range to its last, its own "
            "thread busy " +
            fixed(*stage->busy_cores - *stage->beside_busy_cores -
                   stage->unranged_busy_cores.value_or(0.0), 2) +
            " of a core, while other threads' ranges kept " + fixed(*stage->beside_busy_cores, 2) +
            " cores busy beside it and " + fixed(idle, 2) + " of the " + fixed(*cpus, 2) +
            " CPUs idled: the run lasts as long as its instances end to end, whatever the "
            "stages beside it do (they wait for it). Make it faster (its own verdict), or "
            "run its instances side by side on the idle cores (more threads or processes "
            "on that stage)"};
    return IdleCores{std::move(f), "start with " + stage->path + ", the serial stage (" + span +
                                       " of the time its ranges ran, one instance at a time, "
                                       "beside "
                                       "stages that wait for it): "};
}

}  // namespace ceiling::judge
