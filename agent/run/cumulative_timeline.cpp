#include "agent/run/cumulative_timeline.hpp"

#include <algorithm>

namespace ceiling::measure {

CumulativeTimeline::CumulativeTimeline(std::vector<TimelinePoint> points,
                                       std::optional<double> max_rate_per_s)
    : points_(std::move(points)) {
    std::stable_sort(
        points_.begin(), points_.end(),
        [](const TimelinePoint& a, const TimelinePoint& b) { return a.t_ns < b.t_ns; });
    for (std::size_t i = 1; i < points_.size(); ++i)
        points_[i].value = std::max(points_[i].value, points_[i - 1].value);
    if (max_rate_per_s) max_rate_per_ns_ = *max_rate_per_s * 1e-9;
}

std::size_t CumulativeTimeline::first_not_before(std::int64_t t, std::size_t from) const {
    const std::size_t n = points_.size();
    auto is_first = [&](std::size_t i) {
        return i <= n && (i == 0 || points_[i - 1].t_ns < t) && (i == n || points_[i].t_ns >= t);
    };
    if (is_first(from)) return from;
    if (is_first(from + 1)) return from + 1;
    return static_cast<std::size_t>(
        std::lower_bound(points_.begin(), points_.end(), t,
                         [](const TimelinePoint& p, std::int64_t x) { return p.t_ns < x; }) -
        points_.begin());
}

std::optional<Estimate> CumulativeTimeline::at(std::int64_t t) const {
    return at_index(t, first_not_before(t, 0));
}

std::optional<Estimate> CumulativeTimeline::at_index(std::int64_t t, std::size_t index) const {
    if (points_.empty()) return std::nullopt;
    const auto after = points_.begin() + static_cast<std::ptrdiff_t>(index);
    if (after != points_.end() && after->t_ns == t) return Estimate{after->value, 0.0};
    const double rate = max_rate_per_ns_.value_or(0.0);
    double lo = 0, hi = 0, v = 0;
    if (after != points_.begin() && after != points_.end()) {
        const TimelinePoint& p0 = *(after - 1);
        const TimelinePoint& p1 = *after;
        lo = p0.value;
        hi = p1.value;
        if (max_rate_per_ns_) {
            lo = std::max(lo, p1.value - rate * static_cast<double>(p1.t_ns - t));
            hi = std::min(hi, p0.value + rate * static_cast<double>(t - p0.t_ns));
        }
        v = p0.value + (p1.value - p0.value) * static_cast<double>(t - p0.t_ns) /
                           static_cast<double>(p1.t_ns - p0.t_ns);
    } else if (!max_rate_per_ns_) {
        return std::nullopt;  // outside the known points nothing bounds an unbounded quantity
    } else {
        // Beyond the ends: carry on at the rate of the nearest segment, within the bound.
        const bool before_first = after == points_.begin();
        const TimelinePoint& p = before_first ? points_.front() : points_.back();
        const double gap = static_cast<double>(before_first ? p.t_ns - t : t - p.t_ns);
        double segment_rate = 0;
        if (points_.size() >= 2) {
            const TimelinePoint& a = before_first ? points_[0] : points_[points_.size() - 2];
            const TimelinePoint& b = before_first ? points_[1] : points_.back();
            if (b.t_ns > a.t_ns)
                segment_rate = (b.value - a.value) / static_cast<double>(b.t_ns - a.t_ns);
        }
        if (before_first) {
            lo = std::max(0.0, p.value - rate * gap);
            hi = p.value;
            v = p.value - segment_rate * gap;
        } else {
            lo = p.value;
            hi = p.value + rate * gap;
            v = p.value + segment_rate * gap;
        }
    }
    v = std::clamp(v, lo, std::max(lo, hi));
    return Estimate{v, std::max(hi - v, v - lo)};
}

std::optional<Estimate> CumulativeTimeline::between(std::int64_t begin_ns, std::int64_t end_ns,
                                                    std::size_t* hint) const {
    const std::size_t i = first_not_before(begin_ns, hint ? *hint : 0);
    if (hint) *hint = i;
    const auto a = at_index(begin_ns, i);
    const auto b = at_index(end_ns, first_not_before(end_ns, i));
    if (!a || !b) return std::nullopt;
    return Estimate{std::max(0.0, b->value - a->value), a->error + b->error};
}

}  // namespace ceiling::measure
