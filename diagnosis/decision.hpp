#pragma once
// DESIGN.md's decision table as data: each row an observation (a condition on measured
// signals against a threshold), the bound it diagnoses, the first move, and the levers in
// DESIGN.md's lever order. The verdict bands (done / good / far) are a table too.

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "diagnosis/premises.hpp"
#include "diagnosis/thresholds.hpp"
#include "diagnosis/work.hpp"

namespace ceiling {

enum class Bound { compute, bandwidth, latency, not_the_model, capacity };
inline constexpr std::array<std::string_view, 5> bound_names = {"compute", "bandwidth", "latency",
                                                                "not_the_model", "capacity"};
inline std::string_view to_string(Bound b) { return enum_name(b, bound_names); }
inline std::optional<Bound> parse_bound(std::string_view s) {
    return enum_parse<Bound>(s, bound_names);
}

// DESIGN.md step 6, in its order: fix the system first, then quantisation, then
// compiler/kernel work, then architecture, then pruning; always mention changing the problem.
enum class Lever {
    system,
    quantisation,
    compiler_kernel,
    architecture,
    pruning,
    change_the_problem
};
inline constexpr std::array<std::string_view, 6> lever_names = {
    "system", "quantisation", "compiler_kernel", "architecture", "pruning", "change_the_problem"};
inline std::string_view to_string(Lever l) { return enum_name(l, lever_names); }

// How far a piece of work is from its roof. above_roof: the point exceeds its roof beyond
// noise, so a measurement or the roof is wrong; unknown: no roof comparison was possible.
enum class Verdict { done, good, far, above_roof, unknown };
inline constexpr std::array<std::string_view, 5> verdict_names = {"done", "good", "far",
                                                                  "above_roof", "unknown"};
inline std::string_view to_string(Verdict v) { return enum_name(v, verdict_names); }
// How a verdict reads to a person: the band a fraction of a roof lies in, near / mid / far,
// without praise words ("14 % of roof (good)" read as praise). JSON keeps verdict_names.
inline constexpr std::array<std::string_view, 5> band_names = {"near", "mid", "far", "above roof",
                                                               "unknown"};
inline std::string_view band_name(Verdict v) { return enum_name(v, band_names); }

// The measured quantities the table's conditions read. Each is absent when it was not
// measured; an absent signal never satisfies a condition (unknown is not zero).
enum class Signal {
    compute_fraction,       // achieved ops/s / compute roof
    bandwidth_fraction,     // achieved bytes/s / bandwidth roof of the working set's level
    roof_fraction,          // the larger of the two; known only when both are
    model_share,            // wall time in model regions / wall time
    capacity_fraction,      // footprint / capacity (memory or memory budget, whichever is less)
    storage_fraction,       // the process's storage traffic / the storage roof (the larger way)
    quota_throttled_share,  // CPU-quota periods its control group ran out of quota / periods
    // Busy cores over the fewer of its working threads and its CPUs, where the threads took
    // turns (most switches voluntary, or switches unknown); absent where they queued instead.
    thread_concurrency,
    // Threads blocked on storage per second of wall time, where its own code (user time)
    // left its cores idle.
    storage_wait_threads,
    // System time over all its CPU time, where its cores were busy (not waiting).
    kernel_time_share,
    // Threads blocked in sleeps, on sockets or in event loops per second of wall time, where
    // its own code (user time) left its cores idle.
    outside_wait_threads,
};
inline constexpr std::array<std::string_view, 11> signal_names = {
    "compute_fraction",     "bandwidth_fraction", "roof_fraction",         "model_share",
    "capacity_fraction",    "storage_fraction",   "quota_throttled_share", "thread_concurrency",
    "storage_wait_threads", "kernel_time_share",  "outside_wait_threads"};

// The kernel row's diagnosis, which other findings about kernel time refer to.
inline constexpr std::string_view kernel_bound_diagnosis = "not the model (kernel bound)";

struct Signals {
    std::optional<double> compute_fraction;
    std::optional<double> bandwidth_fraction;
    std::optional<double> model_share;
    std::optional<double> capacity_fraction;
    std::optional<double> storage_fraction;
    std::optional<double> quota_throttled_share;
    std::optional<double> thread_concurrency;
    std::optional<double> storage_wait_threads;
    std::optional<double> kernel_time_share;
    std::optional<double> outside_wait_threads;
    std::optional<double> value(Signal s) const;
};

enum class Comparison { at_least, below };

struct Condition {
    Signal signal;
    Comparison comparison;
    double Thresholds::*threshold;
};

// A move names the evidence that licenses it (diagnosis/premises.hpp): the row's measured
// bound, or more ("synchronisation" needs two threads, "the interpreter" a program that runs
// in one). A move whose premise the evidence does not license is not shown.
struct MovePart {
    std::string_view text;
    Premise premise = Premise::measured_bound;
};

// A lever's moves are parts too; consecutive parts of one lever read as one line.
struct LeverMove {
    Lever lever;
    std::string_view move;
    Premise premise = Premise::measured_bound;
};

struct DecisionRow {
    Bound bound;
    std::string_view observation;  // DESIGN.md's "Observation" column
    Condition condition;
    // When several rows hold, the lowest precedence wins; equal precedence goes to the row
    // whose signal clears its threshold by the larger ratio.
    int precedence;
    std::string_view diagnosis;  // DESIGN.md's "Diagnosis" column
    // DESIGN.md's "First move" column: a lead ("move fewer bytes: ") and its parts, joined
    // by ", " where licensed (first_move_for).
    std::string_view move_lead;
    std::span<const MovePart> first_move;
    std::span<const LeverMove> levers;  // in lever order, ending with change_the_problem
};

// The row's first move as the evidence licenses it: its lead and the parts whose premise holds.
std::string first_move_for(const DecisionRow& row, const Evidence& e);

struct LeverAdvice {
    Lever lever = Lever::system;
    std::string move;
};
// The row's levers as the evidence licenses them, each lever's moves on one line.
std::vector<LeverAdvice> levers_for(const DecisionRow& row, const Evidence& e);

// The table, in DESIGN.md's row order. A bound may have more than one row (not the model:
// the model's share of the time, or storage at its roof); decision_row gives its first.
std::span<const DecisionRow> decision_table();
const DecisionRow& decision_row(Bound b);

bool holds(const Condition& c, const Signals& s, const Thresholds& t);

struct Decision {
    const DecisionRow* row = nullptr;      // nullptr: no row holds (the signals are unknown)
    std::vector<const DecisionRow*> held;  // every row that held, winner first
};
Decision decide(const Signals& s, const Thresholds& t);

// The verdict band of a fraction of a roof: done at or above `done`, far below `far`,
// good between; above_roof beyond 1 + above_roof_tolerance.
struct VerdictBand {
    Verdict verdict;
    double Thresholds::*at_least;  // nullptr: any fraction
};
std::span<const VerdictBand> verdict_bands();
Verdict verdict_for(double fraction, const Thresholds& t);

void to_json(nlohmann::json& j, Bound b);
void from_json(const nlohmann::json& j, Bound& b);
void to_json(nlohmann::json& j, Lever l);
void from_json(const nlohmann::json& j, Lever& l);
void to_json(nlohmann::json& j, Verdict v);
void from_json(const nlohmann::json& j, Verdict& v);

}  // namespace ceiling
