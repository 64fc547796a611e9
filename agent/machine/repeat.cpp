#include "agent/machine/repeat.hpp"

#include <algorithm>
#include <cmath>

#include "collectors/clock.hpp"
#include "kernels/parallel.hpp"

namespace ceiling::measure {

std::int64_t calibrate(const std::function<void(std::int64_t)>& run, double target_s) {
    std::int64_t n = 1;
    for (;;) {
        const double t = collectors::time_s([&] { run(n); });
        if (t >= target_s / 8 || n > (std::int64_t{1} << 40)) {
            const double scale = target_s / std::max(t, 1e-9);
            return std::max<std::int64_t>(
                1, static_cast<std::int64_t>(std::llround(static_cast<double>(n) * scale)));
        }
        n *= 2;
    }
}

std::vector<double> time_runs(const std::function<double()>& run, int warmup, int repeats) {
    for (int i = 0; i < warmup; ++i) run();
    std::vector<double> t;
    t.reserve(static_cast<std::size_t>(repeats));
    for (int i = 0; i < repeats; ++i) t.push_back(run());
    return t;
}

double team_cpu_seconds(int threads, const std::function<void(int)>& fn) {
    std::vector<std::int64_t> cpu(static_cast<std::size_t>(std::max(1, threads)));
    kernels::run_on_threads(threads, [&](int t) {
        const std::int64_t t0 = collectors::thread_cpu_ns();
        fn(t);
        cpu[static_cast<std::size_t>(t)] = collectors::thread_cpu_ns() - t0;
    });
    double rates = 0;  // sum of 1 / seconds
    for (const std::int64_t ns : cpu)
        rates += 1e9 / static_cast<double>(std::max<std::int64_t>(ns, 1));
    return static_cast<double>(cpu.size()) / rates;
}

double team_wall_seconds(int threads, const std::function<void(int)>& fn) {
    const auto n = static_cast<std::size_t>(std::max(1, threads));
    std::vector<double> start(n), end(n);
    kernels::run_on_threads(threads, [&](int t) {
        start[static_cast<std::size_t>(t)] = collectors::now_s();
        fn(t);
        end[static_cast<std::size_t>(t)] = collectors::now_s();
    });
    return *std::max_element(end.begin(), end.end()) - *std::min_element(start.begin(), start.end());
}

Summary best_block_rate(const std::function<double()>& run, double work, const RepeatPlan& plan) {
    Summary best;
    for (int b = 0; b < plan.blocks; ++b) {
        const auto t = time_runs(run, b == 0 ? plan.warmup : 0, plan.repeats);
        const Summary s = summarize_reciprocal(t, work);
        if (b == 0 || s.median > best.median) best = s;
    }
    return best;
}

PairedRates timed_block(const std::function<double()>& run, double work,
                        const std::function<double()>& companion, double companion_work, int warmup,
                        int repeats) {
    for (int i = 0; i < warmup; ++i) {
        if (companion) companion();
        run();
    }
    std::vector<double> tc, tm;
    for (int i = 0; i < repeats; ++i) {
        if (companion) tc.push_back(companion());
        tm.push_back(run());
    }
    return {summarize_reciprocal(tm, work),
            tc.empty() ? Summary{} : summarize_reciprocal(tc, companion_work)};
}

}  // namespace ceiling::measure
