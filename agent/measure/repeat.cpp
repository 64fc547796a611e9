#include "agent/measure/repeat.hpp"

#include <algorithm>
#include <cmath>

#include "collectors/clock.hpp"

namespace ceiling::measure {

std::int64_t calibrate(const std::function<void(std::int64_t)>& run, double target_s) {
    std::int64_t n = 1;
    for (;;) {
        const double t = collectors::time_s([&] { run(n); });
        if (t >= target_s / 8 || n > (std::int64_t{1} << 40)) {
            const double scale = target_s / std::max(t, 1e-9);
            return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(static_cast<double>(n) * scale)));
        }
        n *= 2;
    }
}

std::vector<double> time_runs(const std::function<void()>& run, int warmup, int repeats) {
    for (int i = 0; i < warmup; ++i) run();
    std::vector<double> t;
    t.reserve(static_cast<std::size_t>(repeats));
    for (int i = 0; i < repeats; ++i) t.push_back(collectors::time_s(run));
    return t;
}

Summary best_block_rate(const std::function<void()>& run, double work, const RepeatPlan& plan) {
    Summary best;
    for (int b = 0; b < plan.blocks; ++b) {
        const auto t = time_runs(run, b == 0 ? plan.warmup : 0, plan.repeats);
        const Summary s = summarize_reciprocal(t, work);
        if (b == 0 || s.median > best.median) best = s;
    }
    return best;
}

}  // namespace ceiling::measure
