#include "diagnosis/plateau.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "diagnosis/statistics.hpp"

namespace ceiling {
namespace {

double median_of(std::span<const double> v, std::size_t first, std::size_t last) {
    std::vector<double> x(v.begin() + static_cast<std::ptrdiff_t>(first),
                          v.begin() + static_cast<std::ptrdiff_t>(last) + 1);
    std::sort(x.begin(), x.end());
    return percentile(x, 0.5);
}

// Running median of three; the end points keep their value.
std::vector<double> smoothed(std::span<const SweepSample> s) {
    std::vector<double> v;
    for (const auto& x : s) v.push_back(x.value);
    std::vector<double> out = v;
    for (std::size_t i = 1; i + 1 < v.size(); ++i) out[i] = median_of(v, i - 1, i + 1);
    return out;
}

Plateau make_plateau(std::span<const SweepSample> s, std::size_t first, std::size_t last) {
    std::vector<double> raw;
    for (const auto& x : s) raw.push_back(x.value);
    Plateau p{first, last, median_of(raw, first, last), s[first].value, s[first].value};
    for (std::size_t i = first; i <= last; ++i) {
        p.min = std::min(p.min, s[i].value);
        p.max = std::max(p.max, s[i].value);
    }
    return p;
}

}  // namespace

std::vector<Plateau> detect_plateaus(std::span<const SweepSample> samples,
                                     const PlateauOptions& options) {
    for (std::size_t i = 1; i < samples.size(); ++i)
        if (samples[i].working_set_bytes < samples[i - 1].working_set_bytes)
            throw std::invalid_argument("sweep samples must be sorted by working-set size");
    const std::vector<double> v = smoothed(samples);
    std::vector<Plateau> out;
    std::size_t first = 0;
    while (first < samples.size()) {
        std::size_t last = first;
        while (last + 1 < samples.size()) {
            const double m = median_of(v, first, last);
            if (std::fabs(v[last + 1] - m) > options.tolerance * std::fabs(m)) break;
            ++last;
        }
        if (last - first + 1 >= options.min_points) out.push_back(make_plateau(samples, first, last));
        first = last + 1;
    }
    return out;
}

std::vector<LabelledPlateau> label_plateaus(std::span<const SweepSample> samples,
                                            std::span<const Plateau> plateaus,
                                            std::span<const LevelCapacity> levels,
                                            const PlateauOptions& options) {
    // Level index: 0 .. levels.size()-1 for caches, levels.size() for DRAM.
    const std::size_t dram = levels.size();
    const double outermost = levels.empty() ? 0 : levels.back().capacity_bytes;
    std::vector<std::pair<std::size_t, Plateau>> named;
    for (std::size_t i = 0; i < plateaus.size(); ++i) {
        const Plateau& p = plateaus[i];
        const double middle = std::sqrt(samples[p.first].working_set_bytes *
                                        samples[p.last].working_set_bytes);
        std::size_t level = dram;
        for (std::size_t l = 0; l < levels.size(); ++l)
            if (middle <= levels[l].capacity_bytes) {
                level = l;
                break;
            }
        // The sweep ends beyond the outermost cache, so the plateau holding its last point
        // is memory, even where a nominal cache size (a VM shows the host's whole L3) says
        // otherwise.
        if (i + 1 == plateaus.size() && p.last + 1 == samples.size() && !levels.empty() &&
            samples[p.last].working_set_bytes > outermost)
            level = dram;
        if (!named.empty() && named.back().first >= level) {
            if (p.points() > named.back().second.points()) named.back().second = p;
            continue;
        }
        named.emplace_back(level, p);
    }
    // A plateau that spans cache levels gives a level without one of its own the points that
    // lie inside it (above the capacity of the level within, up to its own), where they are
    // min_points or more and the plateau keeps as many: on Zen 5 stores that miss L1 ran at
    // L1's rate through L2 in some runs (one write plateau from 4 KiB to 512 KiB; ~200 GB/s
    // against ~270 in others), which left L2 with "no plateau" though its points had been
    // measured. Memory's plateau gives nothing: a VM's
    // nominal L3 may be the host's, and points past its real share belong to DRAM.
    const auto inside = [&](std::size_t level, const Plateau& p) {
        const double lo = level == 0 ? 0 : levels[level - 1].capacity_bytes;
        const double hi = levels[level].capacity_bytes;
        std::size_t first = p.last + 1, last = p.first;
        for (std::size_t i = p.first; i <= p.last; ++i)
            if (samples[i].working_set_bytes > lo && samples[i].working_set_bytes <= hi) {
                first = std::min(first, i);
                last = std::max(last, i);
            }
        return std::pair{first, last};  // first > last: none
    };
    for (std::size_t level = 0; level < levels.size(); ++level) {
        if (std::any_of(named.begin(), named.end(),
                        [&](const auto& n) { return n.first == level; }))
            continue;
        for (auto& [owner, p] : named) {
            if (owner == dram) continue;
            const auto [first, last] = inside(level, p);
            const auto [own_first, own_last] = inside(owner, p);
            if (first > last || last - first + 1 < options.min_points || own_first > own_last ||
                own_last - own_first + 1 < options.min_points)
                continue;
            const Plateau given = make_plateau(samples, first, last);
            // The rest, on the other side of the points given away.
            p = last < own_first ? make_plateau(samples, last + 1, p.last)
                                 : make_plateau(samples, p.first, first - 1);
            const auto at = std::find_if(named.begin(), named.end(),
                                         [&](const auto& n) { return n.first > level; });
            named.insert(at, {level, given});
            break;
        }
    }
    const bool has_memory = !named.empty() && named.back().first == dram;
    if (!has_memory && !levels.empty() && !samples.empty() &&
        samples.back().working_set_bytes > outermost) {
        const std::size_t last = samples.size() - 1;
        const double end = samples[last].value;
        // Never into a named plateau: the tail starts after the outermost one.
        const std::size_t floor = named.empty() ? 0 : named.back().second.last + 1;
        std::size_t first = last;
        while (first > floor && samples[first - 1].working_set_bytes > outermost &&
               std::fabs(samples[first - 1].value - end) <= options.tolerance * std::fabs(end))
            --first;
        named.emplace_back(dram, make_plateau(samples, first, last));
    }
    std::vector<LabelledPlateau> out;
    for (const auto& [level, p] : named)
        out.push_back({level == dram ? std::string("DRAM") : levels[level].level, p});
    return out;
}

}  // namespace ceiling
