#pragma once
// Collector readings -> diagnosis CounterValues. Collectors never include diagnosis/, so
// the measuring loops convert here, in one place.

#include <vector>

#include "collectors/reading.hpp"
#include "diagnosis/measurement.hpp"

namespace ceiling::measure {

Source to_source(collectors::ReadingSource s);
CounterValue to_counter_value(const collectors::Reading& r);
std::vector<CounterValue> to_counter_values(const collectors::Readings& r);

}  // namespace ceiling::measure
