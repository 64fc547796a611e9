#pragma once
// `ceiling doctor`'s survey: asks every collector what it can measure here (CPU PMU,
// paranoid, PAPI, libpfm4, software events, uncore, RAPL, CUDA/CUPTI, AMX) and runs the
// PMU self-validation, into one DoctorReport.

#include "diagnosis/doctor_report.hpp"

namespace ceiling::measure {

struct SurveyOptions {
    bool self_validation = true;  // run known work under the PMU (when one is usable)
    bool energy_check = true;     // spin 50 ms to see whether RAPL advances
};

DoctorReport survey_measurement(const SurveyOptions& options = {});

// CPUID hypervisor signature ("KVMKVMKVM") -> a name people know ("KVM"); the signature
// itself when unknown.
std::string hypervisor_name(std::string_view cpuid_signature);

}  // namespace ceiling::measure
