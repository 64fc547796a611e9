#pragma once
// How the diagnosis writes numbers into its findings and moves: three significant digits,
// and fractions as whole percentages ("42%").

#include <cstdio>
#include <string>

namespace ceiling {

inline std::string g3(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

inline std::string percent(double fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f%%", fraction * 100);
    return buf;
}

}  // namespace ceiling
