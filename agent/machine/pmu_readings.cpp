#include "agent/machine/pmu_readings.hpp"

namespace ceiling::measure {

Source to_source(collectors::ReadingSource s) {
    switch (s) {
        case collectors::ReadingSource::timing:
            return Source::timing;
        case collectors::ReadingSource::software:
            return Source::software;
        case collectors::ReadingSource::pmu:
            return Source::pmu;
    }
    return Source::software;
}

CounterValue to_counter_value(const collectors::Reading& r) {
    CounterValue c;
    c.name = r.name;
    c.value = r.value;
    c.unit = r.unit;
    c.source = to_source(r.source);
    c.running_fraction = r.running_fraction;
    // An estimate (bytes from cache misses) is as unsure as a thinly multiplexed count.
    c.low_confidence = r.low_confidence || r.estimate;
    return c;
}

std::vector<CounterValue> to_counter_values(const collectors::Readings& r) {
    std::vector<CounterValue> out;
    out.reserve(r.values.size());
    for (const auto& v : r.values) out.push_back(to_counter_value(v));
    return out;
}

}  // namespace ceiling::measure
