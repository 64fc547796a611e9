#include "diagnosis/units.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace ceiling {
namespace {

constexpr double kib = 1024.0;

constexpr std::array<UnitSuffix, 7> duration_suffixes = {{{"ns", 1e-9},
                                                          {"us", 1e-6},
                                                          {"\u00b5s", 1e-6},
                                                          {"ms", 1e-3},
                                                          {"s", 1},
                                                          {"min", 60},
                                                          {"h", 3600}}};
constexpr std::array<UnitSuffix, 10> byte_suffixes = {{{"B", 1},
                                                       {"kB", 1e3},
                                                       {"KB", 1e3},
                                                       {"MB", 1e6},
                                                       {"GB", 1e9},
                                                       {"TB", 1e12},
                                                       {"KiB", kib},
                                                       {"MiB", kib* kib},
                                                       {"GiB", kib* kib* kib},
                                                       {"TiB", kib* kib* kib* kib}}};
constexpr std::array<UnitSuffix, 5> energy_suffixes = {
    {{"mJ", 1e-3}, {"J", 1}, {"kJ", 1e3}, {"Wh", 3600}, {"kWh", 3.6e6}}};
constexpr std::array<UnitSuffix, 3> power_suffixes = {{{"mW", 1e-3}, {"W", 1}, {"kW", 1e3}}};
constexpr std::array<UnitSuffix, 5> count_suffixes = {
    {{"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"B", 1e9}, {"T", 1e12}}};

struct KindInfo {
    QuantityKind kind;
    std::string_view noun;
    std::span<const UnitSuffix> suffixes;
    // Largest value taken, in the base unit: far beyond anything real (a year, an exabyte,
    // 10^21 operations or parameters), and small enough that products of two such values
    // stay finite and print with units.
    double max;
    // Whether a bare number other than 0 is refused: "10" as an interval or a latency
    // could be seconds or milliseconds, so the unit is asked for rather than guessed.
    bool unit_required;
    std::string_view example_unit;  // for the message asking for one
};
// Indexed by QuantityKind.
const std::array<KindInfo, 5> kinds = {
    {{QuantityKind::duration, "a duration", duration_suffixes, 3.2e7, true, "ms"},
     {QuantityKind::bytes, "a size", byte_suffixes, 1e18, false, "MB"},
     {QuantityKind::energy, "an energy", energy_suffixes, 1e15, true, "J"},
     {QuantityKind::power, "a power", power_suffixes, 1e9, true, "W"},
     {QuantityKind::count, "a number", count_suffixes, 1e21, false, "M"}}};

std::string shortest(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

std::string accepted(const KindInfo& k) {
    std::string s;
    for (const auto& u : k.suffixes) {
        // ASCII in messages: "\u00b5s" is taken, "us" is listed.
        if (std::any_of(u.suffix.begin(), u.suffix.end(), [](char c) { return c & 0x80; })) continue;
        s += (s.empty() ? "" : ", ") + std::string(u.suffix);
    }
    return s;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

}  // namespace

std::span<const UnitSuffix> unit_suffixes(QuantityKind kind) {
    return kinds.at(static_cast<std::size_t>(kind)).suffixes;
}

double parse_quantity(std::string_view text, QuantityKind kind) {
    const KindInfo& info = kinds.at(static_cast<std::size_t>(kind));
    const std::string s(trim(text));
    auto fail = [&](const std::string& why) -> std::invalid_argument {
        return std::invalid_argument("'" + std::string(text) + "' is not " +
                                     std::string(info.noun) + ": " + why);
    };
    if (s.empty()) throw fail("empty");
    // strtod would also take "inf", "nan" and hex floats; only plain decimals are wanted.
    const char first = s.front();
    if (!(std::isdigit(static_cast<unsigned char>(first)) || first == '.' || first == '-' ||
          first == '+'))
        throw fail("expected a number");
    char* end = nullptr;
    const double number = std::strtod(s.c_str(), &end);
    if (end == s.c_str()) throw fail("expected a number");
    if (s.find_first_of("xXnNiI", 0) < static_cast<std::size_t>(end - s.c_str()))
        throw fail("expected a plain decimal number");
    if (!std::isfinite(number)) throw fail("not finite");
    // A well-formed number out of its domain: say so, without "is not a number".
    auto out_of_range = [&](const std::string& why) {
        return std::invalid_argument("'" + std::string(text) + "' " + why);
    };
    if (number < 0) throw out_of_range("must not be negative");
    const std::string_view unit = trim(std::string_view(end));
    double scale = 1;
    if (unit.empty() && number != 0 && info.unit_required)
        throw fail("a unit is needed (use " + accepted(info) + ", e.g. '" + std::string(s) +
                   std::string(info.example_unit) + "')");
    if (!unit.empty()) {
        const auto u = std::find_if(info.suffixes.begin(), info.suffixes.end(),
                                    [&](const UnitSuffix& x) { return x.suffix == unit; });
        if (u == info.suffixes.end())
            throw fail("unknown unit '" + std::string(unit) + "' (use " + accepted(info) + ")");
        scale = u->scale;
    }
    const double value = number * scale;
    if (value > info.max)
        throw out_of_range("is out of range: " + std::string(info.noun) + " of at most " +
                           shortest(info.max) + (kind == QuantityKind::count ? "" : " (base unit)") +
                           " is taken");
    return value;
}

}  // namespace ceiling
