// An optional double in 8 bytes, for the many optional figures of each region instance (a
// capture holds hundreds of thousands, and every pass over them reads their bytes):
// std::optional<double> takes 16. Absent is a NaN, so a NaN assigned reads as absent: no
// measurement is NaN, and none is ever shown as one. The interface is std::optional's.
#pragma once

#include <cmath>
#include <limits>
#include <optional>

namespace ceiling::measure {

class OptionalDouble {
  public:
    constexpr OptionalDouble() = default;
    constexpr OptionalDouble(std::nullopt_t) {}
    constexpr OptionalDouble(double v) : v_(v) {}
    constexpr OptionalDouble(const std::optional<double>& o) : v_(o ? *o : absent) {}

    bool has_value() const { return !std::isnan(v_); }
    explicit operator bool() const { return has_value(); }
    double& operator*() { return v_; }
    double operator*() const { return v_; }
    double value_or(double fallback) const { return has_value() ? v_ : fallback; }
    void reset() { v_ = absent; }
    operator std::optional<double>() const {
        return has_value() ? std::optional<double>(v_) : std::nullopt;
    }

  private:
    static constexpr double absent = std::numeric_limits<double>::quiet_NaN();
    double v_ = absent;
};

}  // namespace ceiling::measure
