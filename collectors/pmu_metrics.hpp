#pragma once
// Derived metrics from raw counts, as pure functions so every formula is tested on
// recorded values: FLOPs from the FLOP events of a table, bytes from memory-controller
// or cache-miss events, ratios that are absent (not 0) when the denominator is, and the
// self-validation verdict that decides whether a PMU is believed at all.

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "collectors/counter_scaling.hpp"
#include "collectors/pmu_tables.hpp"

namespace ceiling::collectors {

// Counts of one interval by table event name, already scaled for multiplexing.
using EventCounts = std::map<std::string, ScaledCount, std::less<>>;

struct DerivedValue {
    std::optional<double> value;             // absent when any input is absent
    bool low_confidence = false;             // an input is low-confidence
    bool estimate = false;                   // computed from a proxy
    std::optional<double> running_fraction;  // the smallest of the inputs', when multiplexed
    std::string note;                        // why absent, low-confidence or an estimate
};

// FLOPs = sum of count x flops_per_count over the terms in `groups`, optionally only
// those of one precision ("fp64"). Absent when a needed count is absent: a partial sum
// would understate the work.
DerivedValue flops_from_counts(std::span<const FlopTerm> terms, const EventCounts& counts,
                               std::span<const std::string_view> groups,
                               std::string_view precision = {});

// Bytes = sum of count x bytes_per_count over the recipe's terms. Absent when a term's
// count is absent; marked as an estimate when the recipe is a proxy.
DerivedValue bytes_from_counts(const ByteRecipe& recipe, const EventCounts& counts);

// numerator / denominator; absent when either is absent or the denominator is 0 or not
// finite: "no cycles counted" must not read as "IPC 0".
std::optional<double> ratio(std::optional<double> numerator, std::optional<double> denominator);

// Self-validation: a kernel with known work runs under the PMU, and the counters are
// believed only if they agree with it.
enum class Verdict {
    trusted,          // within tolerance of the known work
    untrusted_zero,   // read 0 for work that certainly happened (VMs do this)
    untrusted_ratio,  // off by more than the tolerance
    not_measured,     // the counter could not be read at all
};
std::string_view to_string(Verdict v);
std::optional<Verdict> parse_verdict(std::string_view name);  // to_string's inverse

// FP_ARITH on a roof kernel counts exactly the kernel's instructions; memory-controller
// traffic includes other activity and prefetch, hence the wider band.
inline constexpr double flops_tolerance = 0.05;
inline constexpr double bytes_tolerance = 0.25;

struct Validation {
    Verdict verdict = Verdict::not_measured;
    double expected = 0;
    std::optional<double> measured;
    std::optional<double> ratio;  // measured / expected
    double tolerance = 0;         // accepted |ratio - 1|
    std::string explanation;      // one line, with the numbers compared
};

// `what` names the quantity ("FLOPs"). expected must be positive (known work).
Validation validate_count(std::string_view what, double expected, std::optional<double> measured,
                          double tolerance);

}  // namespace ceiling::collectors
