#include "collectors/pmu_metrics.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace ceiling::collectors {

namespace {

// Adds one input's count x factor to `out`, or marks `out` absent naming the missing input.
void accumulate(DerivedValue& out, double& sum, bool& missing, const EventCounts& counts,
                std::string_view event, double factor) {
    const auto it = counts.find(event);
    if (it == counts.end() || !it->second.value) {
        if (!missing) out.note = std::string(event) + " was not counted";
        missing = true;
        return;
    }
    const ScaledCount& c = it->second;
    sum += *c.value * factor;
    if (c.low_confidence) {
        out.low_confidence = true;
        if (out.note.empty()) out.note = std::string(event) + ": " + c.note;
    }
    if (c.running_fraction)
        out.running_fraction = std::min(out.running_fraction.value_or(1.0), *c.running_fraction);
}

std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

}  // namespace

DerivedValue flops_from_counts(std::span<const FlopTerm> terms, const EventCounts& counts,
                               std::span<const std::string_view> groups,
                               std::string_view precision) {
    DerivedValue out;
    double sum = 0;
    bool missing = false, any = false;
    for (const FlopTerm& t : terms) {
        if (std::find(groups.begin(), groups.end(), t.group) == groups.end()) continue;
        if (!precision.empty() && t.precision != precision) continue;
        any = true;
        accumulate(out, sum, missing, counts, t.event, t.flops_per_count);
        if (t.low_confidence && !missing) {
            out.low_confidence = true;
            if (out.note.empty()) out.note = std::string(t.event) + ": " + std::string(t.note);
        }
    }
    if (!any) {
        out.note = precision.empty() ? "no FLOP events for this CPU"
                                     : "no " + std::string(precision) + " FLOP events for this CPU";
        return out;
    }
    if (!missing) out.value = sum;
    return out;
}

DerivedValue bytes_from_counts(const ByteRecipe& recipe, const EventCounts& counts) {
    DerivedValue out;
    double sum = 0;
    bool missing = false;
    for (const ByteTerm& t : recipe.terms)
        accumulate(out, sum, missing, counts, t.event, t.bytes_per_count);
    if (missing) return out;
    out.value = sum;
    out.estimate = recipe.estimate;
    if (out.note.empty()) out.note = std::string(recipe.note);
    return out;
}

std::optional<double> ratio(std::optional<double> numerator, std::optional<double> denominator) {
    if (!numerator || !denominator || *denominator == 0 || !std::isfinite(*denominator) ||
        !std::isfinite(*numerator))
        return std::nullopt;
    return *numerator / *denominator;
}

namespace {
constexpr std::array<std::string_view, 4> verdict_names = {"trusted", "untrusted_zero",
                                                           "untrusted_ratio", "not_measured"};
}  // namespace

std::string_view to_string(Verdict v) { return verdict_names.at(static_cast<std::size_t>(v)); }

std::optional<Verdict> parse_verdict(std::string_view name) {
    for (std::size_t i = 0; i < verdict_names.size(); ++i)
        if (verdict_names[i] == name) return static_cast<Verdict>(i);
    return std::nullopt;
}

Validation validate_count(std::string_view what, double expected, std::optional<double> measured,
                          double tolerance) {
    if (!(expected > 0))
        throw std::invalid_argument("validate_count: expected work must be positive");
    Validation v;
    v.expected = expected;
    v.measured = measured;
    v.tolerance = tolerance;
    const std::string w(what);
    if (!measured) {
        v.verdict = Verdict::not_measured;
        v.explanation = w + ": not measured (the counter could not be read)";
        return v;
    }
    if (*measured == 0) {
        v.verdict = Verdict::untrusted_zero;
        v.ratio = 0.0;
        v.explanation = w + ": counter read 0 for known work of " + number(expected) +
                        "; untrusted (some VMs and broken PMUs read zero)";
        return v;
    }
    v.ratio = *measured / expected;
    const bool within = std::fabs(*v.ratio - 1.0) <= tolerance;
    v.verdict = within ? Verdict::trusted : Verdict::untrusted_ratio;
    v.explanation = w + ": measured " + number(*measured) + " for known " + number(expected) +
                    " (ratio " + number(*v.ratio) + ", tolerance +/-" + number(tolerance * 100) +
                    "%)" + (within ? ": trusted" : ": untrusted");
    return v;
}

}  // namespace ceiling::collectors
