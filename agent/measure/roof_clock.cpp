#include "agent/measure/roof_clock.hpp"

#include <algorithm>

#include "agent/measure/repeat.hpp"

namespace ceiling::measure {
namespace {

// Fastest of `reps` runs, in seconds per iteration (the slowest thread's CPU time).
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
    int reps, std::string& why) {
    const auto runs = kernels::chained_runs(k.roof);
    if (runs.empty()) {
        why = "no chained variant of " + std::string(k.roof);
        return std::nullopt;
    }
    const double roof = seconds_per_iteration(k.run, threads, ops, iterations, reps);
    auto time_of = [&](const kernels::ChainedRun& r) {
        return seconds_per_iteration(r.run, threads, ops, iterations, reps);
    };
    std::size_t i = 0;
    double t = 0;
    for (; i < runs.size(); ++i) {
        t = time_of(runs[i]);
        if (t >= binds_above * roof) break;
    }
    while (i < runs.size()) {
        if (i + 1 == runs.size()) break;  // the longest chain: nothing left to confirm with
        const double t_next = time_of(runs[i + 1]);
        const double clock = runs[i].chain / t, clock_next = runs[i + 1].chain / t_next;
        const double longer = static_cast<double>(runs[i + 1].chain) / runs[i].chain;
        // Chain-bound: the clock grows by less than half of what the extra adds would give
        // if the roof's instructions still set the time.
        if (clock_next <= clock * (1 + 0.5 * (longer - 1))) break;
        ++i;
        t = t_next;
    }
    if (i == runs.size()) {
        why = "the longest chain (" + std::to_string(runs.back().chain) + " adds per " +
              std::to_string(k.instructions_per_iteration) +
              " instructions) never set the time: this instruction issues slower than the table's "
              "ladder covers";
        return std::nullopt;
    }
    return BindingChain{&runs[i], roof / t};
}

}  // namespace ceiling::measure
