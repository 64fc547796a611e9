#pragma once
// Numbers written for people, the one place each unit is formatted: SI prefixes for rates,
// binary prefixes for sizes, adaptive units for durations, fractions as percentages, three
// significant digits for the figures findings quote. Renderers, findings and notes all use
// these, so "83%" or "1.40 GiB" reads the same everywhere; a non-finite value prints "-".
// Machine-readable output never uses these. (Parsing the same units: units.hpp.)

#include <optional>
#include <string>

namespace ceiling {

std::string si(double value, const std::string& unit, int precision = 3);  // 1.43e11 -> "143 G<unit>"
std::string bytes(double b);              // 4096 -> "4 KiB", 1.5e9 -> "1.40 GiB"
std::string duration(double seconds);     // 1.2e-8 -> "12.0 ns", 0.0123 -> "12.3 ms"
std::string percent(double fraction, int decimals = 0);  // 0.834 -> "83%"
std::string fixed(double v, int decimals);
// A count that may be a mean over runs: a whole number as one ("3", not "3.0"), else one decimal.
std::string count_text(double v);
std::string or_dash(const std::optional<std::string>& s);
std::string g3(double v);  // 0.01234 -> "0.0123", 1.5e9 -> "1.5e+09"

}  // namespace ceiling
