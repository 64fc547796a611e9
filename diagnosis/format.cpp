#include "diagnosis/format.hpp"

#include <array>
#include <cmath>
#include <cstdio>

namespace ceiling {

namespace {
// value with `decimals` decimals and a unit suffix; beyond the range a person reads
// digit by digit, in scientific notation (never a 60-digit number).
std::string with_unit(double v, int decimals, const char* unit) {
    char buf[64];
    if (std::fabs(v) >= 1e6)
        std::snprintf(buf, sizeof buf, "%.3g %s", v, unit);
    else
        std::snprintf(buf, sizeof buf, "%.*f %s", decimals, v, unit);
    return buf;
}
}  // namespace

std::string si(double value, const std::string& unit, int precision) {
    if (!std::isfinite(value)) return "-";
    constexpr std::array<const char*, 7> prefixes = {"", "K", "M", "G", "T", "P", "E"};
    std::size_t i = 0;
    double v = std::fabs(value);
    while (v >= 1000 && i + 1 < prefixes.size()) {
        v /= 1000;
        ++i;
    }
    char buf[64];
    // Past the largest prefix, or below one milli-unit: scientific, still with the unit.
    if (v >= 1000 || (v > 0 && v < 1e-3)) {
        std::snprintf(buf, sizeof buf, "%.*g %s", std::max(1, precision), value, unit.c_str());
        return buf;
    }
    const int decimals = v >= 100 ? std::max(0, precision - 3) : v >= 10 ? std::max(0, precision - 2)
                                                                         : std::max(0, precision - 1);
    std::snprintf(buf, sizeof buf, "%.*f %s%s", decimals, value < 0 ? -v : v, prefixes[i], unit.c_str());
    return buf;
}

std::string bytes(double b) {
    if (!std::isfinite(b)) return "-";
    constexpr std::array<const char*, 6> units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    std::size_t i = 0;
    while (b >= 1024 && i + 1 < units.size()) {
        b /= 1024;
        ++i;
    }
    if (i == 0 || std::fabs(b - std::round(b)) < 1e-9) return with_unit(b, 0, units[i]);
    return with_unit(b, b >= 100 ? 0 : b >= 10 ? 1 : 2, units[i]);
}

std::string duration(double s) {
    if (!std::isfinite(s)) return "-";
    const double a = std::fabs(s);
    if (a < 1e-6) return with_unit(s * 1e9, 1, "ns");
    if (a < 1e-3) return with_unit(s * 1e6, 1, "us");
    if (a < 1) return with_unit(s * 1e3, 1, "ms");
    return with_unit(s, 2, "s");
}

std::string percent(double fraction, int decimals) {
    if (!std::isfinite(fraction)) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f%%", decimals, fraction * 100);
    return buf;
}

std::string fixed(double v, int decimals) {
    if (!std::isfinite(v)) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string count_text(double v) { return fixed(v, v == std::floor(v) ? 0 : 1); }

std::string or_dash(const std::optional<std::string>& s) { return s ? *s : "-"; }

std::string g3(double v) {
    if (!std::isfinite(v)) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

}  // namespace ceiling
