#pragma once
// Budgets (DESIGN.md step 5): latency judged on the distribution at p50 and p99, never on
// one run; peak memory; energy per run and mean power where measured. Each check passes or
// fails with its margin; one not measured is unknown, never a pass.
//
// Budget file (JSON): any of the fields below, each a number in the unit its name ends
// with, or a string with a unit: {"latency_s": "12ms", "latency_p99_s": 0.02,
// "memory_bytes": "1.5GiB", "energy_j": "5J", "power_w": 30, "cost_per_1000": 0.02,
// "price_per_hour": 3.06, "regions": {"model": {"latency_p50_s": "12ms",
// "latency_p99_s": "15ms", "cost_per_1000": 0.01}}, "because": "..."}.
// `because` is the sentence that makes them a budget ("if we miss any of these, the product
// does not work, because ..."); without it they are shown as a preference.
// Latency budgets on a region (its path, its name, or "model") are judged on the durations
// of its instances (frames, requests) over every timed execution, at p50 and p99. A cost
// budget is per 1000 executions (or region instances), in the currency of price_per_hour,
// the machine's price: the measured throughput (wall time per execution, or timed wall time
// over the region's instances) at that price.

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

// The budgets of one region's instances: latency and cost only (memory, energy and power
// belong to the process).
struct RegionBudget {
    std::string region;  // a region path, a region name, or "model"
    std::optional<double> latency_s;
    std::optional<double> latency_p50_s;
    std::optional<double> latency_p99_s;
    std::optional<double> cost_per_1000;  // per 1000 instances
    bool empty() const;
};

struct Budgets {
    std::optional<double> latency_s;      // applies at p50 and at p99 unless given apart
    std::optional<double> latency_p50_s;  // overrides latency_s at p50
    std::optional<double> latency_p99_s;  // overrides latency_s at p99
    std::optional<double> memory_bytes;   // peak footprint
    std::optional<double> energy_j;       // per run
    std::optional<double> power_w;        // mean over a run
    std::optional<double> cost_per_1000;  // per 1000 executions, at price_per_hour
    std::optional<double> price_per_hour;  // the machine's price (not a budget: cost uses it)
    std::vector<RegionBudget> regions;
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
// A region's budget from "REGION:NAME=VALUE" ("model:latency-p99=15ms"), added to b.regions
// (or to the region's entry already there). Throws std::invalid_argument saying what is wrong.
void set_region_budget(Budgets& b, std::string_view spec);

// Throws std::invalid_argument (one line) for invalid JSON, an unknown key, or a bad value.
Budgets parse_budgets(const std::string& json_text);

// What a run achieved, for the budgets to be judged against.
struct BudgetActuals {
    std::optional<Summary> latency_s;  // one value per repeat (or per request)
    std::optional<double> peak_memory_bytes;
    std::optional<double> energy_j;  // per run
    std::optional<double> power_w;   // mean
    // Wall time the machine spends per execution (or region instance): what a cost per 1000
    // is made of, at the budget's price per hour.
    std::optional<double> seconds_per_item;
};

enum class BudgetOutcome { pass, fail, unknown };
inline constexpr std::array<std::string_view, 3> budget_outcome_names = {"pass", "fail", "unknown"};

struct BudgetCheck {
    // "latency_p50_s", "latency_p99_s", "memory_bytes", "energy_j", "power_w", "cost_per_1000"
    std::string name;
    std::string region;  // the region budget it checks (as the budget named it); empty: executions
    double budget = 0;
    std::optional<double> actual;  // absent: not measured
    BudgetOutcome outcome = BudgetOutcome::unknown;
    // (budget - actual) / budget: the headroom as a share of the budget, negative when over.
    std::optional<double> margin;
    std::string note;  // caveats: few samples for a p99, an unstable distribution
};

// One check per budget that is set (latency gives two: p50 and p99). At the budget passes.
// Region budgets are not judged here (their actuals come from the record's regions).
std::vector<BudgetCheck> judge_budgets(const Budgets& b, const BudgetActuals& a,
                                       const Thresholds& t);
// The checks of one region budget, at the budgets' price, named after rb.region.
std::vector<BudgetCheck> judge_region_budget(const RegionBudget& rb,
                                             std::optional<double> price_per_hour,
                                             const BudgetActuals& a, const Thresholds& t);
// The cost of 1000 items that each take `seconds_per_item` of a machine at `price_per_hour`.
inline double cost_per_1000(double price_per_hour, double seconds_per_item) {
    return price_per_hour / 3600.0 * seconds_per_item * 1000.0;
}

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
