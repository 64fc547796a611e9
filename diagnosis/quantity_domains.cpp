#include "diagnosis/quantity_domains.hpp"

#include <array>
#include <cmath>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ceiling {
namespace {

struct Domain {
    std::string_view name;  // a suffix ("_s") or, starting with '=', an exact key ("=count")
    double min, max;
    std::string_view what;  // "a duration": the message says "<what> cannot be ..."
};

constexpr double inf = HUGE_VAL;

// Checked in order; the first matching entry is the field's domain.
constexpr std::array<Domain, 16> domains = {{
    {"_share", 0, 1, "a share of time"},
    {"_per_s", 0, inf, "a rate"},
    {"_s", 0, inf, "a duration"},
    {"_bytes", 0, inf, "a byte count"},
    {"_hz", 0, inf, "a frequency"},
    {"_ops", 0, inf, "an operation count"},
    {"_flops", 0, inf, "an operation count"},
    {"=rel_spread", 0, inf, "a relative spread"},
    {"=count", 0, inf, "a count"},
    {"=instances", 0, inf, "a count"},
    {"=threads", 0, inf, "a thread count"},
    {"=processes", 0, inf, "a process count"},
    {"=cores", 0, inf, "a core count"},
    {"=cycles", 0, inf, "a cycle count"},
    {"=cpu_utilisation", 0, inf, "a CPU utilisation"},
    {"=busy_cores", 0, inf, "a core count"},
}};

const Domain* domain_of(std::string_view key) {
    for (const auto& d : domains) {
        if (d.name.front() == '=') {
            if (key == d.name.substr(1)) return &d;
        } else if (key.size() > d.name.size() && key.ends_with(d.name)) {
            return &d;
        }
    }
    return nullptr;
}

std::string number(double v) {
    nlohmann::json j = v;
    return j.dump();
}

std::optional<std::string> walk(const nlohmann::json& j, const std::string& path,
                                const Domain* governing) {
    if (j.is_object()) {
        for (const auto& [key, value] : j.items()) {
            const Domain* d = domain_of(key);
            if (auto bad = walk(value, path.empty() ? key : path + "." + key, d ? d : governing))
                return bad;
        }
    } else if (j.is_array()) {
        for (std::size_t i = 0; i < j.size(); ++i)
            if (auto bad = walk(j[i], path + "[" + std::to_string(i) + "]", governing)) return bad;
    } else if (j.is_number() && governing) {
        const double v = j.get<double>();
        // The value as written in the file (-1 stays -1, not -1.0).
        if (v < governing->min)
            return path + " = " + j.dump() + ": " + std::string(governing->what) +
                   " cannot be negative";
        if (v > governing->max)
            return path + " = " + j.dump() + ": " + std::string(governing->what) +
                   " cannot exceed " + number(governing->max);
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> find_out_of_domain(const nlohmann::json& j) {
    return walk(j, "", nullptr);
}

}  // namespace ceiling
