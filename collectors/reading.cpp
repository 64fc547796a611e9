#include "collectors/reading.hpp"

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

}  // namespace ceiling::collectors
