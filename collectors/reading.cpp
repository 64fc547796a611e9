#include "collectors/reading.hpp"

#include <algorithm>
#include <array>
#include <iterator>

namespace ceiling::collectors {

std::string_view to_string(ReadingSource s) {
    static constexpr std::array<std::string_view, 3> names = {"timing", "software", "pmu"};
    return names.at(static_cast<std::size_t>(s));
}

const Reading* Readings::find(std::string_view name) const {
    for (const auto& r : values)
        if (r.name == name) return &r;
    return nullptr;
}

std::optional<double> Readings::value(std::string_view name) const {
    if (const Reading* r = find(name)) return r->value;
    return std::nullopt;
}

void Readings::append(Readings other) {
    values.insert(values.end(), std::make_move_iterator(other.values.begin()),
                  std::make_move_iterator(other.values.end()));
    warnings.insert(warnings.end(), std::make_move_iterator(other.warnings.begin()),
                    std::make_move_iterator(other.warnings.end()));
}

Readings combine_readings(const Readings& a, const Readings& b) {
    constexpr std::string_view ipc = "instructions_per_cycle";
    Readings out;
    for (const Reading& x : a.values) {
        const Reading* y = b.find(x.name);
        if (!y || x.unit == "ratio") continue;
        Reading m = x;
        m.value = x.name == "max_rss_bytes" ? std::max(x.value, y->value) : x.value + y->value;
        if (y->running_fraction)
            m.running_fraction = std::min(x.running_fraction.value_or(1.0), *y->running_fraction);
        m.low_confidence = x.low_confidence || y->low_confidence;
        m.estimate = x.estimate || y->estimate;
        if (m.note.empty()) m.note = y->note;
        out.values.push_back(std::move(m));
    }
    const auto instructions = out.value("instructions"), cycles = out.value("cycles");
    if (a.find(ipc) && b.find(ipc) && instructions && cycles && *cycles > 0) {
        Reading r = *a.find(ipc);
        r.value = *instructions / *cycles;
        out.values.push_back(std::move(r));
    }
    out.warnings = a.warnings;
    for (const auto& w : b.warnings)
        if (std::find(out.warnings.begin(), out.warnings.end(), w) == out.warnings.end())
            out.warnings.push_back(w);
    return out;
}

}  // namespace ceiling::collectors
