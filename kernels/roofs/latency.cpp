#include "kernels/roofs/latency.hpp"

#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

namespace ceiling::kernels {

std::size_t build_chase(std::byte* buf, std::size_t bytes, std::size_t stride, std::uint64_t seed) {
    if (stride < sizeof(void*) || bytes < 2 * stride)
        throw std::invalid_argument("pointer chase needs at least two links");
    const std::size_t links = bytes / stride;
    std::vector<std::size_t> order(links);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::mt19937_64 rng(seed);
    // Sattolo's algorithm: a uniformly random single cycle through all links.
    for (std::size_t i = links - 1; i > 0; --i) {
        std::uniform_int_distribution<std::size_t> pick(0, i - 1);
        std::swap(order[i], order[pick(rng)]);
    }
    for (std::size_t i = 0; i < links; ++i) {
        auto* from = reinterpret_cast<void**>(buf + order[i] * stride);
        *from = buf + order[(i + 1) % links] * stride;
    }
    return links;
}

void* chase(void* start, std::int64_t steps) {
    void* p = start;
    std::int64_t i = 0;
    for (; i + 8 <= steps; i += 8) {
        p = *static_cast<void**>(p); p = *static_cast<void**>(p);
        p = *static_cast<void**>(p); p = *static_cast<void**>(p);
        p = *static_cast<void**>(p); p = *static_cast<void**>(p);
        p = *static_cast<void**>(p); p = *static_cast<void**>(p);
    }
    for (; i < steps; ++i) p = *static_cast<void**>(p);
    return p;
}

}  // namespace ceiling::kernels
