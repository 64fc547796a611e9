#include "collectors/event_names.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>

#include "collectors/software_events.hpp"
#include "collectors/sysfs_pmu.hpp"

namespace ceiling::collectors {

namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::string lowered(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = lower(c);
    return out;
}

// "pmu/event/" or "pmu/event" -> (pmu, event).
std::optional<std::pair<std::string, std::string>> split_sysfs(std::string_view name) {
    if (!name.empty() && name.back() == '/') name.remove_suffix(1);
    const auto slash = name.find('/');
    if (slash == std::string_view::npos || slash == 0 || slash + 1 >= name.size())
        return std::nullopt;
    if (name.find('/', slash + 1) != std::string_view::npos) return std::nullopt;
    return std::pair{std::string(name.substr(0, slash)), std::string(name.substr(slash + 1))};
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    std::iota(prev.begin(), prev.end(), std::size_t{0});
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t subst = prev[j - 1] + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::vector<std::string> close_matches(std::string_view wanted,
                                       const std::vector<std::string>& candidates,
                                       std::size_t max) {
    const std::size_t limit = std::max<std::size_t>(2, wanted.size() / 4);
    const std::string w = lowered(wanted);
    std::vector<std::pair<std::size_t, std::string>> scored;
    for (const auto& c : candidates) {
        std::size_t d = edit_distance(wanted, c);
        // A fragment ("FP_ARITH") matches every name that contains it, after the typos.
        if (d > limit && w.size() >= 4 && lowered(c).find(w) != std::string::npos)
            d = limit + 1;
        else if (d > limit)
            continue;
        scored.emplace_back(d, c);
    }
    std::sort(scored.begin(), scored.end());
    scored.erase(std::unique(scored.begin(), scored.end()), scored.end());
    std::vector<std::string> out;
    for (auto& [d, c] : scored) {
        if (out.size() >= max) break;
        out.push_back(std::move(c));
    }
    return out;
}

std::vector<std::string> known_event_names(const PfmApi& pfm, const FsRoot& root) {
    std::vector<std::string> names;
    for (const auto& e : software_events()) {
        names.emplace_back(e.perf_name);
        names.emplace_back(e.name);
    }
    for (const auto& pmu : root.list("/sys/bus/event_source/devices"))
        for (const auto& e : sysfs_event_names(root, pmu)) names.push_back(pmu + "/" + e + "/");
    if (auto host = pfm.host_pmu())
        for (auto& e : pfm.event_names(*host)) names.push_back(std::move(e));
    for (auto& e : pfm.event_names("perf")) names.push_back("perf::" + e);
    return names;
}

EventLookup resolve_event(std::string_view name, const PfmApi& pfm, const FsRoot& root) {
    EventLookup out;
    if (const SoftwareEvent* sw = find_software_event(name)) {
        out.spec = software_counter_spec(*sw);
        return out;
    }
    if (auto parts = split_sysfs(name)) {
        const SysfsLookup l = resolve_sysfs_event(root, parts->first, parts->second);
        if (l.event) {
            CounterSpec s;
            s.name = std::string(name);
            s.encoding = l.event->encoding;
            s.scale = l.event->scale;
            s.unit = l.event->unit.empty() ? "count" : l.event->unit;
            s.source = ReadingSource::pmu;
            s.scope = EventScope::system_wide;
            out.spec = std::move(s);
            return out;
        }
        out.error = "unknown event '" + std::string(name) + "': " + l.error;
    } else {
        const PfmResult r = pfm.encode(name);
        if (r.value) {
            CounterSpec s;
            s.name = std::string(name);
            s.encoding = r.value->encoding;
            s.source = r.value->encoding.type == PERF_TYPE_SOFTWARE ? ReadingSource::software
                                                                    : ReadingSource::pmu;
            s.scope = r.value->encoding.type == PERF_TYPE_SOFTWARE ? EventScope::software
                                                                   : EventScope::hardware;
            out.spec = std::move(s);
            return out;
        }
        out.error = "unknown event '" + std::string(name) + "'";
        if (!pfm.status().available)
            out.error += " (" + pfm.status().reason + ")";
        else if (!pfm.host_pmu())
            out.error +=
                " (libpfm4 knows no PMU model for this CPU: only software and generic "
                "perf:: events)";
    }
    out.suggestions = close_matches(name, known_event_names(pfm, root));
    if (!out.suggestions.empty()) {
        out.error += "; did you mean ";
        for (std::size_t i = 0; i < out.suggestions.size(); ++i)
            out.error += (i ? ", " : "") + out.suggestions[i];
        out.error += "?";
    }
    return out;
}

}  // namespace ceiling::collectors
