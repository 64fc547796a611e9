#pragma once
// Budgets (DESIGN.md step 5): latency judged on the distribution at p50 and p99, never on
// one run; peak memory; energy per run and mean power where measured. Each check passes or
// fails with its margin; one not measured is unknown, never a pass.
//
// Budget file (JSON): any of the fields below, each a number in the unit its name ends
// with, or a string with a unit: {"latency_s": "12ms", "latency_p99_s": 0.02,
// "memory_bytes": "1.5GiB", "energy_j": "5J", "power_w": 30, "because": "..."}.
// `because` is the sentence that makes them a budget ("if we miss any of these, the product
// does not work, because ..."); without it they are shown as a preference.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "diagnosis/statistics.hpp"
#include "diagnosis/thresholds.hpp"
#include "diagnosis/units.hpp"

namespace ceiling {

struct Budgets {
    std::optional<double> latency_s;      // applies at p50 and at p99 unless given apart
    std::optional<double> latency_p50_s;  // overrides latency_s at p50
    std::optional<double> latency_p99_s;  // overrides latency_s at p99
    std::optional<double> memory_bytes;   // peak footprint
    std::optional<double> energy_j;       // per run
    std::optional<double> power_w;        // mean over a run
    std::string because;                  // why missing them breaks the product; empty: none
    bool empty() const;                   // no number set (a sentence alone is no budget)
};

struct BudgetField {
    std::string_view name;  // JSON key, unit-suffixed
    std::string_view flag;  // short name for flags: "latency", "latency-p99", "memory", ...
    QuantityKind kind;
    std::optional<double> Budgets::*member;
};
std::span<const BudgetField> budget_fields();

// Sets one budget by JSON key or flag name from text with a unit ("12ms", "40MB").
// Throws std::invalid_argument naming the budget for an unknown name or a bad value.
void set_budget(Budgets& b, std::string_view name, std::string_view value);

// Throws std::invalid_argument (one line) for invalid JSON, an unknown key, or a bad value.
Budgets parse_budgets(const std::string& json_text);

// What a run achieved, for the budgets to be judged against.
struct BudgetActuals {
    std::optional<Summary> latency_s;  // one value per repeat (or per request)
    std::optional<double> peak_memory_bytes;
    std::optional<double> energy_j;  // per run
    std::optional<double> power_w;   // mean
};

enum class BudgetOutcome { pass, fail, unknown };
inline constexpr std::array<std::string_view, 3> budget_outcome_names = {"pass", "fail", "unknown"};

struct BudgetCheck {
    std::string name;  // "latency_p50_s", "latency_p99_s", "memory_bytes", "energy_j", "power_w"
    double budget = 0;
    std::optional<double> actual;  // absent: not measured
    BudgetOutcome outcome = BudgetOutcome::unknown;
    // (budget - actual) / budget: the headroom as a share of the budget, negative when over.
    std::optional<double> margin;
    std::string note;  // caveats: few samples for a p99, an unstable distribution
};

// One check per budget that is set (latency gives two: p50 and p99). At the budget passes.
std::vector<BudgetCheck> judge_budgets(const Budgets& b, const BudgetActuals& a,
                                       const Thresholds& t);

// false when any check failed; true when all passed; nullopt when none failed but some are
// unknown (or there are no checks).
std::optional<bool> budgets_met(std::span<const BudgetCheck> checks);

void to_json(nlohmann::json& j, const Budgets& b);
void from_json(const nlohmann::json& j, Budgets& b);
void to_json(nlohmann::json& j, BudgetOutcome o);
void from_json(const nlohmann::json& j, BudgetOutcome& o);
void to_json(nlohmann::json& j, const BudgetCheck& c);
void from_json(const nlohmann::json& j, BudgetCheck& c);
void to_json(nlohmann::json& j, const BudgetActuals& a);
void from_json(const nlohmann::json& j, BudgetActuals& a);

}  // namespace ceiling
