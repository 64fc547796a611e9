#include "diagnosis/budget.hpp"

#include <array>
#include <cstdio>
#include <stdexcept>

#include "diagnosis/format.hpp"
#include "diagnosis/json_support.hpp"

namespace ceiling {
namespace {

using B = Budgets;
const std::array<BudgetField, 7> fields = {{
    {"latency_s", "latency", QuantityKind::duration, &B::latency_s},
    {"latency_p50_s", "latency-p50", QuantityKind::duration, &B::latency_p50_s},
    {"latency_p99_s", "latency-p99", QuantityKind::duration, &B::latency_p99_s},
    {"memory_bytes", "memory", QuantityKind::bytes, &B::memory_bytes},
    {"energy_j", "energy", QuantityKind::energy, &B::energy_j},
    {"power_w", "power", QuantityKind::power, &B::power_w},
    {"cost_per_1000", "cost", QuantityKind::count, &B::cost_per_1000},
}};

// What a region budget may set: the per-instance ones (memory, energy and power are the
// process's), with the member each sets.
struct RegionField {
    std::string_view name;
    std::optional<double> RegionBudget::*member;
};
const std::array<RegionField, 4> region_fields = {{
    {"latency_s", &RegionBudget::latency_s},
    {"latency_p50_s", &RegionBudget::latency_p50_s},
    {"latency_p99_s", &RegionBudget::latency_p99_s},
    {"cost_per_1000", &RegionBudget::cost_per_1000},
}};

// A non-negative number, or text with the kind's unit.
double budget_value(const std::string& key, const nlohmann::json& value, QuantityKind kind) {
    if (value.is_number()) {
        const double v = value.get<double>();
        if (!(v >= 0)) throw std::invalid_argument("budget " + key + " must not be negative");
        return v;
    }
    if (value.is_string()) {
        try {
            return parse_quantity(value.get<std::string>(), kind);
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument("budget " + key + ": " + e.what());
        }
    }
    throw std::invalid_argument("budget " + key + " must be a number or a string with a unit");
}

const BudgetField& field(std::string_view name, bool allow_flag_name);

// The region budget's field set by `name` (a JSON key or a flag name), or why not.
const RegionField& region_field(const std::string& region, std::string_view name) {
    const BudgetField& f = field(name, true);  // unknown names: the usual list
    for (const auto& r : region_fields)
        if (r.name == f.name) return r;
    std::string allowed;
    for (const auto& r : region_fields) allowed += (allowed.empty() ? "" : ", ") + std::string(r.name);
    throw std::invalid_argument("budget of region '" + region + "': " + std::string(f.name) +
                                " belongs to the whole process, not a region (a region takes " +
                                allowed + ")");
}

RegionBudget& region_entry(Budgets& b, const std::string& region) {
    for (auto& r : b.regions)
        if (r.region == region) return r;
    b.regions.push_back({region, {}, {}, {}, {}});
    return b.regions.back();
}

// Flags may use the short name; files use the unit-suffixed one only (units in field names).
const BudgetField& field(std::string_view name, bool allow_flag_name) {
    for (const auto& f : fields)
        if (f.name == name || (allow_flag_name && f.flag == name)) return f;
    std::string known;
    for (const auto& f : fields) known += (known.empty() ? "" : ", ") + std::string(f.name);
    known += ", because";
    throw std::invalid_argument("unknown budget '" + std::string(name) + "' (known: " + known +
                                ")");
}

using Opt = std::optional<double>;

// Each check: its name, the budget that applies, and the actual it is judged on.
struct CheckRule {
    std::string_view name;
    Opt (*budget)(const Budgets&);
    Opt (*actual)(const BudgetActuals&);
};
const std::array<CheckRule, 6> checks = {{
    {"latency_p50_s", [](const B& b) { return b.latency_p50_s ? b.latency_p50_s : b.latency_s; },
     [](const BudgetActuals& a) { return a.latency_s ? Opt(a.latency_s->median) : Opt(); }},
    {"latency_p99_s", [](const B& b) { return b.latency_p99_s ? b.latency_p99_s : b.latency_s; },
     [](const BudgetActuals& a) { return a.latency_s ? Opt(a.latency_s->p99) : Opt(); }},
    {"memory_bytes", [](const B& b) { return b.memory_bytes; },
     [](const BudgetActuals& a) { return a.peak_memory_bytes; }},
    {"energy_j", [](const B& b) { return b.energy_j; },
     [](const BudgetActuals& a) { return a.energy_j; }},
    {"power_w", [](const B& b) { return b.power_w; },
     [](const BudgetActuals& a) { return a.power_w; }},
    // The actual needs the price: judge_budgets fills it in.
    {"cost_per_1000", [](const B& b) { return b.cost_per_1000; },
     [](const BudgetActuals&) { return Opt(); }},
}};

std::string latency_note(const Summary& s, std::string_view check, const Thresholds& t) {
    std::string note;
    auto add = [&](const std::string& n) { note += (note.empty() ? "" : "; ") + n; };
    if (s.count < 2) {
        add("one run: no distribution to judge");
        // With fewer than 100 samples p99 interpolates between the largest ones (type 7).
    } else if (check == "latency_p99_s" && s.count < 100) {
        add("p99 of " + std::to_string(s.count) + " samples, interpolated between the largest");
    }
    if (unstable(s, t.unstable_spread)) add("unstable: relative spread " + percent(s.rel_spread));
    return note;
}

}  // namespace

bool RegionBudget::empty() const {
    for (const auto& f : region_fields)
        if (this->*f.member) return false;
    return true;
}

bool Budgets::empty() const {
    for (const auto& f : fields)
        if (this->*f.member) return false;
    for (const auto& r : regions)
        if (!r.empty()) return false;
    return true;
}

std::span<const BudgetField> budget_fields() { return fields; }

void set_budget(Budgets& b, std::string_view name, std::string_view value) {
    const BudgetField& f = field(name, true);
    try {
        b.*f.member = parse_quantity(value, f.kind);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("budget " + std::string(f.name) + ": " + e.what());
    }
}

void set_region_budget(Budgets& b, std::string_view spec) {
    const auto colon = spec.rfind(':', spec.find('='));
    const auto eq = spec.find('=');
    if (colon == std::string_view::npos || eq == std::string_view::npos || colon == 0 || eq < colon)
        throw std::invalid_argument("'" + std::string(spec) +
                                    "' is not REGION:BUDGET=VALUE (e.g. model:latency-p99=15ms)");
    const std::string region(spec.substr(0, colon));
    const RegionField& f = region_field(region, spec.substr(colon + 1, eq - colon - 1));
    const BudgetField& bf = field(f.name, false);
    try {
        region_entry(b, region).*f.member = parse_quantity(spec.substr(eq + 1), bf.kind);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("budget of region '" + region + "' " + std::string(f.name) +
                                    ": " + e.what());
    }
}

Budgets parse_budgets(const std::string& json_text) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(json_text);
    } catch (const nlohmann::json::exception& e) {  // also out_of_range: a number beyond double
        throw std::invalid_argument(std::string("not valid JSON: ") + e.what());
    }
    return j.get<Budgets>();
}

std::vector<BudgetCheck> judge_budgets(const Budgets& b, const BudgetActuals& a,
                                       const Thresholds& t) {
    std::vector<BudgetCheck> out;
    for (const auto& rule : checks) {
        const Opt budget = rule.budget(b);
        if (!budget) continue;
        BudgetCheck c;
        c.name = std::string(rule.name);
        c.budget = *budget;
        c.actual = rule.actual(a);
        const bool cost = c.name == "cost_per_1000";
        if (cost && b.price_per_hour && a.seconds_per_item)
            c.actual = cost_per_1000(*b.price_per_hour, *a.seconds_per_item);
        if (cost && !b.price_per_hour) {
            c.note = "no price per hour (--price-per-hour, or price_per_hour in the budget file)";
        } else if (c.actual) {
            c.outcome = *c.actual <= c.budget ? BudgetOutcome::pass : BudgetOutcome::fail;
            if (c.budget > 0) c.margin = (c.budget - *c.actual) / c.budget;
        } else {
            c.note = "not measured";
        }
        if (a.latency_s && c.name.starts_with("latency")) {
            const auto n = latency_note(*a.latency_s, c.name, t);
            if (!n.empty()) c.note = n;
        }
        out.push_back(std::move(c));
    }
    return out;
}

std::vector<BudgetCheck> judge_region_budget(const RegionBudget& rb,
                                             std::optional<double> price_per_hour,
                                             const BudgetActuals& a, const Thresholds& t) {
    Budgets b;
    b.latency_s = rb.latency_s;
    b.latency_p50_s = rb.latency_p50_s;
    b.latency_p99_s = rb.latency_p99_s;
    b.cost_per_1000 = rb.cost_per_1000;
    b.price_per_hour = price_per_hour;
    auto out = judge_budgets(b, a, t);
    for (auto& c : out) c.region = rb.region;
    return out;
}

std::optional<bool> budgets_met(std::span<const BudgetCheck> checks) {
    bool unknown = checks.empty();
    for (const auto& c : checks) {
        if (c.outcome == BudgetOutcome::fail) return false;
        unknown = unknown || c.outcome == BudgetOutcome::unknown;
    }
    if (unknown) return std::nullopt;
    return true;
}

void to_json(nlohmann::json& j, const Budgets& b) {
    j = nlohmann::json::object();
    for (const auto& f : fields)
        if (b.*f.member) j[std::string(f.name)] = *(b.*f.member);
    if (b.price_per_hour) j["price_per_hour"] = *b.price_per_hour;
    if (!b.regions.empty()) {
        auto& regions = j["regions"] = nlohmann::json::object();
        for (const auto& r : b.regions) {
            auto& o = regions[r.region] = nlohmann::json::object();
            for (const auto& f : region_fields)
                if (r.*f.member) o[std::string(f.name)] = *(r.*f.member);
        }
    }
    if (!b.because.empty()) j["because"] = b.because;
}
void from_json(const nlohmann::json& j, Budgets& b) {
    if (!j.is_object()) throw std::invalid_argument("budgets must be a JSON object");
    b = Budgets{};
    for (const auto& [key, value] : j.items()) {
        if (key == "because") {
            if (!value.is_string() || value.get<std::string>().empty())
                throw std::invalid_argument("budget because must be a sentence (a non-empty string)");
            b.because = value.get<std::string>();
            continue;
        }
        if (key == "price_per_hour") {
            if (!value.is_null()) b.price_per_hour = budget_value(key, value, QuantityKind::count);
            continue;
        }
        if (key == "regions") {
            if (!value.is_object())
                throw std::invalid_argument(
                    "budget regions must be an object of region -> budgets, e.g. "
                    "{\"model\": {\"latency_p99_s\": \"15ms\"}}");
            for (const auto& [region, limits] : value.items()) {
                if (region.empty()) throw std::invalid_argument("budget regions: a region needs a name");
                if (!limits.is_object())
                    throw std::invalid_argument("budget of region '" + region + "' must be an object");
                RegionBudget& rb = region_entry(b, region);
                for (const auto& [name, v] : limits.items()) {
                    const RegionField& f = region_field(region, name);
                    if (!v.is_null())
                        rb.*f.member = budget_value("of region '" + region + "' " + name, v,
                                                    field(f.name, false).kind);
                }
            }
            continue;
        }
        const BudgetField& f = field(key, false);
        if (!value.is_null()) b.*f.member = budget_value(key, value, f.kind);
    }
}

void to_json(nlohmann::json& j, BudgetOutcome o) {
    j = std::string(enum_name(o, budget_outcome_names));
}
void from_json(const nlohmann::json& j, BudgetOutcome& o) {
    o = enum_from_json<BudgetOutcome>(j, budget_outcome_names, "budget outcome");
}

void to_json(nlohmann::json& j, const BudgetCheck& c) {
    j = {{"name", c.name},       {"budget", c.budget}, {"actual", c.actual},
         {"outcome", c.outcome}, {"margin", c.margin}, {"note", c.note}};
    if (!c.region.empty()) j["region"] = c.region;
}
void from_json(const nlohmann::json& j, BudgetCheck& c) {
    get_field(j, "name", c.name);
    c.region = j.value("region", std::string());
    get_field(j, "budget", c.budget);
    get_optional(j, "actual", c.actual);
    get_field(j, "outcome", c.outcome);
    get_optional(j, "margin", c.margin);
    get_field(j, "note", c.note);
}

void to_json(nlohmann::json& j, const BudgetActuals& a) {
    j = {{"latency_s", a.latency_s},
         {"peak_memory_bytes", a.peak_memory_bytes},
         {"energy_j", a.energy_j},
         {"power_w", a.power_w},
         {"seconds_per_item", a.seconds_per_item}};
}
void from_json(const nlohmann::json& j, BudgetActuals& a) {
    get_optional(j, "latency_s", a.latency_s);
    get_optional(j, "peak_memory_bytes", a.peak_memory_bytes);
    get_optional(j, "energy_j", a.energy_j);
    get_optional(j, "power_w", a.power_w);
    get_optional(j, "seconds_per_item", a.seconds_per_item);
}

}  // namespace ceiling
