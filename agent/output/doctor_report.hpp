#pragma once
// Terminal rendering of what `ceiling doctor` found (diagnosis/doctor_report.hpp): a table of
// what is available, why not, and how to enable it.

#include <ostream>

#include "diagnosis/doctor_report.hpp"

namespace ceiling::output {

void render_doctor_report(const DoctorReport& r, std::ostream& out);

}  // namespace ceiling::output
