#include "collectors/counter_scaling.hpp"
#include "diagnosis/format.hpp"

#include <cmath>
#include <cstdio>

namespace ceiling::collectors {

ScaledCount scale_count(const RawCount& raw, double min_running_fraction) {
    return scale_and_sum(std::span<const RawCount>(&raw, 1), min_running_fraction);
}

ScaledCount scale_and_sum(std::span<const RawCount> raws, double min_running_fraction) {
    ScaledCount out;
    double total = 0, enabled = 0, running = 0;
    bool any = false;
    for (const RawCount& r : raws) {
        if (r.time_enabled == 0 || r.time_running == 0) {
            enabled += static_cast<double>(r.time_enabled);
            continue;
        }
        any = true;
        const double e = static_cast<double>(r.time_enabled),
                     t = static_cast<double>(r.time_running);
        total += static_cast<double>(r.value) * (t < e ? e / t : 1.0);
        enabled += e;
        running += std::min(t, e);
    }
    if (!any) {
        out.note = enabled > 0 ? "never scheduled on a counter (multiplexed out)"
                               : "never enabled (the counted code did not run)";
        return out;
    }
    out.value = total;
    if (running < enabled) {
        const double f = running / enabled;
        out.running_fraction = f;
        if (f < min_running_fraction) {
            out.low_confidence = true;
            out.note = "counted " + percent(f) + " of the time (multiplexed), scaled up";
        }
    }
    return out;
}

}  // namespace ceiling::collectors
