#pragma once
// Quantities written by people: "12ms", "40MB", "1.5GiB", "5J", "7B". Budgets, flags and
// config files share these parsers so "40MB" means the same everywhere. The suffixes are a
// table per kind. A bare number is taken in the kind's base unit for sizes and counts
// (bytes, ones); durations, energies and powers need their unit unless the number is 0.

#include <span>
#include <string>
#include <string_view>

namespace ceiling {

enum class QuantityKind { duration, bytes, energy, power, count };

struct UnitSuffix {
    std::string_view suffix;
    double scale;  // to the base unit
};

// The suffixes each kind accepts, for messages and documentation.
std::span<const UnitSuffix> unit_suffixes(QuantityKind kind);

// Parses a finite, non-negative number with an optional unit suffix of its kind (blanks
// between number and unit allowed). Bytes: kB/MB/GB/TB are powers of 1000, KiB/MiB/GiB/TiB
// powers of 1024. Counts: k, M, B (billion, as in "7B parameters"), T.
// Throws std::invalid_argument naming the text and the accepted units.
double parse_quantity(std::string_view text, QuantityKind kind);

inline double parse_duration_s(std::string_view t) {
    return parse_quantity(t, QuantityKind::duration);
}
inline double parse_bytes(std::string_view t) { return parse_quantity(t, QuantityKind::bytes); }
inline double parse_energy_j(std::string_view t) { return parse_quantity(t, QuantityKind::energy); }
inline double parse_power_w(std::string_view t) { return parse_quantity(t, QuantityKind::power); }
inline double parse_count(std::string_view t) { return parse_quantity(t, QuantityKind::count); }

}  // namespace ceiling
