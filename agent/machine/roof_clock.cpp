#include "agent/machine/roof_clock.hpp"

#include <algorithm>

#include "agent/machine/repeat.hpp"

namespace ceiling::measure {
namespace {

// Fastest of `reps` runs, in seconds per iteration (the team's CPU time, team_cpu_seconds).
double seconds_per_iteration(void (*run)(std::int64_t, kernels::RoofOperands*), int threads,
                             const std::vector<std::unique_ptr<kernels::RoofOperands>>& ops,
                             std::int64_t n, int reps) {
    double best = 0;
    for (int r = 0; r < reps; ++r) {
        const double t = team_cpu_seconds(
            threads, [&](int i) { run(n, ops[static_cast<std::size_t>(i)].get()); });
        if (r == 0 || t < best) best = t;
    }
    return best / static_cast<double>(n);
}

}  // namespace

std::optional<BindingChain> find_binding_chain(
    const kernels::ComputeKernel& k, int threads,
    const std::vector<std::unique_ptr<kernels::RoofOperands>>& ops, std::int64_t iterations,
    int reps, std::string& why, int shortest) {
    const auto runs = kernels::chained_runs(k.roof);
    if (runs.empty()) {
        why = "no chained variant of " + std::string(k.roof);
        return std::nullopt;
    }
    // Every time below is the fastest seen so far at that point, and the roof's own time is
    // timed again at each step: on a shared core (a neighbour on the SMT sibling halves even
    // the tile unit here) a burst can slow every repeat of one timing, and a slowed roof
    // hides every binding length while a slowed pair of lengths looks chain-bound.
    double roof = seconds_per_iteration(k.run, threads, ops, iterations, reps);
    std::vector<double> best(runs.size(), 0);
    auto time_at = [&](std::size_t i) {
        const double t = seconds_per_iteration(runs[i].run, threads, ops, iterations, reps);
        best[i] = best[i] > 0 ? std::min(best[i], t) : t;
        roof = std::min(roof, seconds_per_iteration(k.run, threads, ops, iterations, reps));
        return best[i];
    };
    // Length i binds: its iteration takes longer than the roof's, and the next length
    // confirms its clock: chain-bound, the clock grows by less than half of what the extra
    // adds would give if the roof's instructions still set the time, and does not fall.
    auto binds = [&](std::size_t i) {
        if (time_at(i) < binds_above * roof) return false;
        if (i + 1 == runs.size()) return true;  // the longest chain: nothing to confirm with
        const double clock = runs[i].chain / best[i];
        const double longer = static_cast<double>(runs[i + 1].chain) / runs[i].chain;
        // A next length reading a clock well below this one's was slowed: timed again.
        for (int retry = 0; retry < 4; ++retry)
            if (runs[i + 1].chain / time_at(i + 1) >= clock * (1 - confirm_below)) break;
        const double clock_next = runs[i + 1].chain / best[i + 1];
        return clock_next <= clock * (1 + 0.5 * (longer - 1)) &&
               clock_next >= clock * (1 - confirm_below);
    };
    std::size_t i = 0;
    while (i + 1 < runs.size() && runs[i].chain < shortest) ++i;
    // A length is taken when it binds at two looks: a burst that slowed the length and the
    // next one alike rarely lasts to the second.
    for (; i < runs.size(); ++i)
        if (binds(i) && binds(i)) break;
    if (i == runs.size()) {
        why = "no chain length up to " + std::to_string(runs.back().chain) + " adds per " +
              std::to_string(k.instructions_per_iteration) +
              " instructions set the time at two looks: an instruction slower than the ladder "
              "covers, or a host too busy to tell (run `ceiling machine` again when it is quieter)";
        return std::nullopt;
    }
    return BindingChain{&runs[i], roof / best[i]};
}

}  // namespace ceiling::measure
