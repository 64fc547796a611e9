// Labelled program: latency bound. One thread follows a random cycle through cache lines of
// a buffer four times the last-level cache: each load needs the previous one's result.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "verdict_work.hpp"

namespace {

struct alignas(64) Line {
    std::uint64_t next;
    std::uint64_t pad[7];
};

}  // namespace

int main() {
    using namespace verdicts;
    const std::size_t lines =
        std::clamp<std::size_t>(4 * llc_bytes(), std::size_t{64} << 20, std::size_t{512} << 20) /
        sizeof(Line);
    std::unique_ptr<Line[]> buf(new Line[lines]);
    // Sattolo's shuffle: one cycle through every line.
    std::vector<std::uint32_t> order(lines);
    for (std::size_t i = 0; i < lines; ++i) order[i] = static_cast<std::uint32_t>(i);
    std::mt19937_64 rng(42);
    for (std::size_t i = lines - 1; i > 0; --i)
        std::swap(order[i], order[std::uniform_int_distribution<std::size_t>(0, i - 1)(rng)]);
    for (std::size_t i = 0; i < lines; ++i) buf[order[i]].next = order[(i + 1) % lines];

    auto chase = [&](std::int64_t steps, std::uint64_t at) {
        for (std::int64_t k = 0; k < steps; ++k) at = buf[at].next;
        return at;
    };
    // Steps for ~0.2 s here.
    const double t0 = now_s();
    std::uint64_t at = chase(100000, 0);
    const auto steps = static_cast<std::int64_t>(100000 * 0.2 / std::max(now_s() - t0, 1e-6));

    // One dependent load per step, a cache line moved for each.
    nvtxRangePushA(declared("chase", static_cast<double>(steps), 64.0 * static_cast<double>(steps),
                            static_cast<double>(lines * sizeof(Line)))
                       .c_str());
    at = chase(steps, at);
    nvtxRangePop();
    std::printf("steps=%lld at=%llu\n", static_cast<long long>(steps),
                static_cast<unsigned long long>(at));
    return 0;
}
