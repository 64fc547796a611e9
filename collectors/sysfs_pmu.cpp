#include "collectors/sysfs_pmu.hpp"

#include <algorithm>
#include <cctype>

namespace ceiling::collectors {

namespace {

constexpr std::string_view devices = "/sys/bus/event_source/devices/";

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    while (true) {
        const auto p = s.find(sep);
        out.push_back(s.substr(0, p));
        if (p == std::string_view::npos) break;
        s.remove_prefix(p + 1);
    }
    return out;
}

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::uint64_t* word_of(EventEncoding& e, std::string_view word) {
    if (word == "config") return &e.config;
    if (word == "config1") return &e.config1;
    if (word == "config2") return &e.config2;
    return nullptr;
}

// Spreads `value` over the field's bit ranges, lowest value bits into the first range.
bool place(EventEncoding& e, const FormatField& f, std::uint64_t value) {
    std::uint64_t* word = word_of(e, f.word);
    if (!word) return false;
    int used = 0;
    for (const auto& [lo, hi] : f.bit_ranges) {
        const int width = hi - lo + 1;
        const std::uint64_t mask = width >= 64 ? ~0ULL : ((1ULL << width) - 1);
        *word |= ((value >> used) & mask) << lo;
        used += width;
    }
    return used >= 64 || (value >> used) == 0;  // the value must fit the field
}

}  // namespace

std::optional<FormatField> parse_format_field(std::string_view text) {
    text = trim(text);
    const auto colon = text.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    FormatField f;
    f.word = std::string(text.substr(0, colon));
    if (f.word != "config" && f.word != "config1" && f.word != "config2") return std::nullopt;
    for (std::string_view range : split(text.substr(colon + 1), ',')) {
        const auto dash = range.find('-');
        auto lo = parse_int(range.substr(0, dash));
        auto hi = dash == std::string_view::npos ? lo : parse_int(range.substr(dash + 1));
        if (!lo || !hi || *lo < 0 || *hi > 63 || *hi < *lo) return std::nullopt;
        f.bit_ranges.emplace_back(static_cast<int>(*lo), static_cast<int>(*hi));
    }
    return f;
}

SysfsLookup resolve_sysfs_event(const FsRoot& root, std::string_view pmu, std::string_view event) {
    const std::string dir = std::string(devices) + std::string(pmu);
    SysfsLookup out;
    const auto type = root.read_int(dir + "/type");
    if (!type) {
        out.error = "no " + std::string(pmu) + " PMU (" + dir + " absent)";
        return out;
    }
    const auto spec = root.read_line(dir + "/events/" + std::string(event));
    if (!spec) {
        out.error = "the " + std::string(pmu) + " PMU has no event " + std::string(event);
        return out;
    }
    SysfsEvent e;
    e.pmu = std::string(pmu);
    e.event = std::string(event);
    e.encoding.type = static_cast<std::uint32_t>(*type);
    e.encoding.config = 0;
    for (std::string_view term : split(*spec, ',')) {
        term = trim(term);
        if (term.empty()) continue;
        const auto eq = term.find('=');
        const std::string key(term.substr(0, eq));
        std::uint64_t value = 1;  // a bare term ("edge") sets its field to 1
        if (eq != std::string_view::npos) {
            auto v = parse_int(term.substr(eq + 1));
            if (!v) {
                out.error = "cannot parse '" + std::string(term) + "' in " + dir + "/events/" +
                            std::string(event);
                return out;
            }
            value = static_cast<std::uint64_t>(*v);
        }
        if (std::uint64_t* word = word_of(e.encoding, key)) {
            *word |= value;
            continue;
        }
        const auto format = root.read_line(dir + "/format/" + key);
        const auto field = format ? parse_format_field(*format) : std::nullopt;
        if (!field || !place(e.encoding, *field, value)) {
            out.error =
                "the " + std::string(pmu) + " PMU's format has no usable field '" + key + "'";
            return out;
        }
    }
    if (auto s = root.read_line(dir + "/events/" + std::string(event) + ".scale"))
        if (auto v = parse_double(*s)) e.scale = *v;
    e.unit = root.read_line(dir + "/events/" + std::string(event) + ".unit").value_or("");
    if (auto mask = root.read_line(dir + "/cpumask"))
        if (auto cpus = parse_cpu_list(*mask)) e.cpus = *cpus;
    out.event = std::move(e);
    return out;
}

std::vector<std::string> sysfs_pmus(const FsRoot& root, std::string_view prefix) {
    std::vector<std::string> out;
    for (const auto& name : root.list(devices)) {
        if (name == prefix) {
            out.push_back(name);
            continue;
        }
        if (name.size() <= prefix.size() + 1 || name.compare(0, prefix.size(), prefix) != 0 ||
            name[prefix.size()] != '_')
            continue;
        const std::string_view rest = std::string_view(name).substr(prefix.size() + 1);
        if (std::all_of(rest.begin(), rest.end(),
                        [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
            out.push_back(name);
    }
    return out;
}

std::vector<std::string> sysfs_event_names(const FsRoot& root, std::string_view pmu) {
    std::vector<std::string> out;
    for (const auto& name : root.list(std::string(devices) + std::string(pmu) + "/events"))
        if (!ends_with(name, ".scale") && !ends_with(name, ".unit") &&
            !ends_with(name, ".snapshot") && !ends_with(name, ".per-pkg"))
            out.push_back(name);
    return out;
}

}  // namespace ceiling::collectors
