// Resident memory that kept growing through a run: capacity is judged at the peak, and a
// program whose peak is its last sample is not done growing. A cache that never evicted
// (64 MiB kept every 50 ms, 2.5 GiB at the end of a 2 s run) read "footprint 2.50 GiB of 23.5
// GiB memory (11%)" and nothing else; the same loop an hour long, or a training loop keeping
// each step's loss with its autograd graph, runs out of memory.
#include <algorithm>
#include <string>

#include "agent/judge/region_judging.hpp"
#include "diagnosis/format.hpp"

namespace ceiling::judge {
namespace {

// Looks and span enough to tell growth from an allocation at start-up.
constexpr std::size_t looks_min = 10;
constexpr double span_min_s = 0.5;
// Growth after the first quarter of the run at least this share of the footprint at its end
// and at least growth_min_bytes, and in each of the three quarters after the first a tenth
// of it or more: a steady rise, still rising at the end. Slowing still grows (a cache filled
// 64 MiB at a time grew 250 MiB of its 1.6 GiB in the last quarter); one allocation
// halfway, or a script's imports filling its first three quarters, leave a quarter flat.
constexpr double growth_share_min = 0.25;
constexpr double growth_min_bytes = 64.0 * 1024 * 1024;
constexpr double quarter_share_min = 0.10;

// The level at the first look at or after `t`.
double level_at(const Series& s, std::size_t n, double t) {
    for (std::size_t i = 0; i < n; ++i)
        if (s.t_s[i] >= t) return s.values[i];
    return s.values[n - 1];
}

// Seconds, minutes or hours, three figures.
std::string time_text(double s) {
    if (s < 120) return g3(s) + " s";
    if (s < 7200) return g3(s / 60) + " min";
    return g3(s / 3600) + " h";
}

}  // namespace

std::optional<Finding> footprint_growth(const RunRecord& record) {
    const auto timed = record.timed_executions();
    if (timed.empty()) return std::nullopt;
    const auto& all = timed.front()->time_series;
    const auto it =
        std::find_if(all.begin(), all.end(), [](const Series& s) { return s.name == "rss_bytes"; });
    if (it == all.end() || it->t_s.size() != it->values.size()) return std::nullopt;
    const Series& s = *it;
    // Up to its last look with memory resident: the looks after the program exited read 0.
    std::size_t n = s.values.size();
    while (n > 0 && !(s.values[n - 1] > 0)) --n;
    if (n < looks_min) return std::nullopt;
    const double t0 = s.t_s.front(), t_end = s.t_s[n - 1], span = t_end - t0;
    if (!(span >= span_min_s)) return std::nullopt;
    const double quarter = level_at(s, n, t0 + 0.25 * span);
    const double end = s.values[n - 1];
    const double growth = end - quarter;
    if (growth < growth_min_bytes || growth < growth_share_min * end) return std::nullopt;
    double before = quarter;
    for (const double at : {0.5, 0.75, 1.0}) {
        const double level = at < 1.0 ? level_at(s, n, t0 + at * span) : end;
        if (level - before < quarter_share_min * growth) return std::nullopt;
        before = level;
    }
    const double rate = growth / (0.75 * span);
    std::string text =
        "resident memory grew all through the run: " + bytes(quarter) +
        " a quarter of the way in, " + bytes(end) + " at its last look (" +
        bytes(rate) +
        "/s, in each quarter after the first): memory kept by its work as it "
        "goes (a cache that never evicts, results gathered in a list, tensors kept with their "
        "autograd graphs, a leak)";
    if (record.diagnosis && record.diagnosis->capacity &&
        record.diagnosis->capacity->capacity_bytes > end) {
        const auto& c = *record.diagnosis->capacity;
        const double left = c.capacity_bytes - end;
        text += ". Longer (more steps, a service left running), at this rate the " +
                bytes(left) + " left of the " + c.against + " fill in " +
                time_text(left / rate) + ": it would be capacity bound";
    }
    return Finding{FindingKind::assumption, text};
}

}  // namespace ceiling::judge
