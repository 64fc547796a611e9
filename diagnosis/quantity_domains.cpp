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

// Fields read into integer types. nlohmann casts a floating-point number to an integer type
// without a range check (undefined beyond the type's range), so a float in such a field must
// lie within the narrowest type the name is read into; an integer in the file converts
// without undefined behaviour. Names as in `domains`.
struct IntegerField {
    std::string_view name;
    double min, max;
};

constexpr double int_min = -2147483648.0, int_max = 2147483647.0;
constexpr double uint64_max = 18446744073709549568.0;  // the largest double below 2^64

constexpr std::array<IntegerField, 30> integer_fields = {{
    {"_bytes", 0, uint64_max},  // sizes and working sets; other byte counts are doubles
    {"=count", 0, uint64_max},
    {"=instances", 0, int_max},  // int for cache instances, size_t for region instances
    {"=threads", int_min, int_max},
    {"=processes", int_min, int_max},
    {"=cores", int_min, int_max},
    {"=cores_used", int_min, int_max},  // int in the host, double in process accounting
    {"=index", int_min, int_max},
    {"=pid", int_min, int_max},
    {"=rank", int_min, int_max},
    {"=world_size", int_min, int_max},
    {"=exit_code", int_min, int_max},
    {"=signal", int_min, int_max},
    {"=level", int_min, int_max},
    {"=repeat", int_min, int_max},
    {"=warmup", int_min, int_max},
    {"=measured_threads", int_min, int_max},
    {"=threads_used", int_min, int_max},
    {"=physical_cores", int_min, int_max},
    {"=logical_cpus", int_min, int_max},
    {"=numa_nodes", int_min, int_max},
    {"=shared_by_cpus", int_min, int_max},
    {"=cpu_family", int_min, int_max},
    {"=cpu_model_number", int_min, int_max},
    {"=cpu_stepping", int_min, int_max},
    {"=clock_chain", int_min, int_max},
    {"=compute_capability_major", int_min, int_max},
    {"=compute_capability_minor", int_min, int_max},
    {"=multiprocessors", int_min, int_max},
    {"=memory_bus_bits", int_min, int_max},
}};

// Nothing ceiling writes nests deeper than a dozen levels; the walk below recurses per level,
// so a file of 20 000 nested brackets overflowed the stack.
constexpr int max_depth = 64;

template <typename Entry, std::size_t N>
const Entry* entry_of(const std::array<Entry, N>& table, std::string_view key) {
    for (const auto& d : table) {
        if (d.name.front() == '=') {
            if (key == d.name.substr(1)) return &d;
        } else if (key.size() > d.name.size() && key.ends_with(d.name)) {
            return &d;
        }
    }
    return nullptr;
}

const Domain* domain_of(std::string_view key) { return entry_of(domains, key); }

std::string number(double v) {
    nlohmann::json j = v;
    return j.dump();
}

std::optional<std::string> walk(const nlohmann::json& j, const std::string& path,
                                const Domain* governing, int depth) {
    if ((j.is_object() || j.is_array()) && depth > max_depth)
        return path + ": nested deeper than " + std::to_string(max_depth) + " levels";
    if (j.is_object()) {
        for (const auto& [key, value] : j.items()) {
            const std::string at = path.empty() ? key : path + "." + key;
            const IntegerField* i = value.is_number_float() ? entry_of(integer_fields, key) : nullptr;
            if (i && !(value.get<double>() >= i->min && value.get<double>() <= i->max))
                return at + " = " + value.dump() + ": read as an integer, it must lie in [" +
                       number(i->min) + ", " + number(i->max) + "]";
            const Domain* d = domain_of(key);
            if (auto bad = walk(value, at, d ? d : governing, depth + 1)) return bad;
        }
    } else if (j.is_array()) {
        for (std::size_t i = 0; i < j.size(); ++i)
            if (auto bad = walk(j[i], path + "[" + std::to_string(i) + "]", governing, depth + 1))
                return bad;
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
    return walk(j, "", nullptr, 0);
}

}  // namespace ceiling
