// A run's serial stage: a pipeline whose stages record ranges on their own threads lasts as
// long as its slowest stage's instances end to end. A producer decoding on one thread (99 %
// of the wall time) beside a consumer that waited for it three quarters of the time read
// "bound unknown: measure what is missing first", with both stages' ranges listed and
// nothing saying that one of them set the run's length.
#include <algorithm>
#include <string>

#include "agent/measure/region_diagnosis.hpp"
#include "agent/measure/region_judging.hpp"
#include "diagnosis/text.hpp"

namespace ceiling::measure {
namespace {

// Its instances end to end span at least this share of the wall time: the run cannot end
// much sooner than they do.
constexpr double spans_wall_min = 0.80;
// One instance at a time (side by side in one process counted once: RecordedRegion::
// concurrency), and its own thread busy at least half of it: it computes, not waits.
constexpr double one_at_a_time_max = 1.10;
// Instances per execution at least: one range around the whole run (a main loop beside a
// loader) spans it trivially, and has no instances to run side by side.
constexpr double instances_min = 4;
constexpr double own_core_min = 0.50;
// Other stages' ranges kept this many cores busy beside it, and at least this many CPUs
// idled: the others did work of their own and there was room for more of its.
constexpr double beside_min_cores = 0.10;
constexpr double idle_min_cpus = 0.25;

}  // namespace

std::optional<IdleCores> serial_stage(const RunRecord& record) {
    const double wall = record.whole.duration_s.count ? record.whole.duration_s.mean : 0.0;
    const auto cpus = usable_cpus(record);
    if (!(wall > 0) || !cpus) return std::nullopt;
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
        if (own < own_core_min || reg.open_s_per_execution() < spans_wall_min * wall ||
            *cpus - *reg.busy_cores < idle_min_cpus)
            continue;
        // Two stages that each span the run (a balanced pipeline, each busy all along) both
        // set its length: neither is the one the others wait for.
        if (stage) return std::nullopt;
        stage = &reg;
    }
    if (!stage) return std::nullopt;
    const double idle = *cpus - *stage->busy_cores;
    const std::string span = percent(stage->open_s_per_execution() / wall);
    Finding f{FindingKind::assumption,
              stage->path + " is the run's serial stage: its instances, one at a time, spanned " +
                  span + " of the wall time, its own thread busy " +
                  fixed2(*stage->busy_cores - *stage->beside_busy_cores -
                         stage->unranged_busy_cores.value_or(0.0)) +
                  " of a core, while other threads' ranges kept " +
                  fixed2(*stage->beside_busy_cores) + " cores busy beside it and " + fixed2(idle) +
                  " of the " + fixed2(*cpus) +
                  " CPUs idled: the run lasts as long as its instances end to end, whatever the "
                  "stages beside it do (they wait for it). Make it faster (its own verdict), or "
                  "run its instances side by side on the idle cores (more threads or processes "
                  "on that stage)"};
    return IdleCores{std::move(f), "start with " + stage->path + ", the serial stage (" + span +
                                       " of the wall time, one instance at a time, beside "
                                       "stages that wait for it): "};
}

}  // namespace ceiling::measure
