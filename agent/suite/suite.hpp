#pragma once
// `ceiling suite`: runs reference kernels on known work, checks each against its
// reference and times it. The run record built from the result (suite_record.hpp) is
// what the diagnosis engine judges and what every renderer reads.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "diagnosis/machine_profile.hpp"
#include "diagnosis/measurement.hpp"
#include "diagnosis/run_record.hpp"
#include "kernels/registry.hpp"

namespace ceiling::measure {

// Which devices' cases a suite runs. all: GPU cases too when a GPU is usable (a note says
// why not otherwise); gpu: only GPU cases, and no usable GPU is an error.
enum class SuiteDevices { all, cpu, gpu };

struct SuiteOptions {
    bool quick = false;
    SuiteDevices devices = SuiteDevices::all;
    // Applied to GPU cases (CPU cases come selected: select_cases).
    std::vector<std::string> kernel_names;
    std::vector<std::string> variant_names;
    int threads = 0;  // 0: every CPU this process may use
    // Per case: keep timing until both are reached (or max_repeats).
    double min_time_s = 0.5;
    int min_repeats = 5;
    int max_repeats = 200;
    // The roofs each shape's cases are judged against (compute, DRAM), where a case's first
    // run reached at least roof_check_from of them (the thresholds' `far`), measured in
    // turns with the cases (suite.cpp): SuiteResult::roof_checks.
    bool roof_checks = true;
    double roof_check_from = 0.10;
    std::function<void(const std::string&)> on_step;
    std::function<void(int)> add_steps;  // steps found on the way (the GPU cases)
};

// How one case went.
enum class CaseStatus { measured, unavailable, check_failed, failed };
inline constexpr std::array<std::string_view, 4> case_status_names = {"measured", "unavailable",
                                                                      "check_failed", "failed"};
inline std::string_view to_string(CaseStatus s) { return enum_name(s, case_status_names); }

struct CaseResult {
    kernels::KernelCase kernel_case;  // name, work, implementation, advice
    CaseStatus status = CaseStatus::measured;
    std::string message;  // why unavailable / failed; the check's detail
    std::optional<kernels::Verification> verification;
    std::string detail;       // what setup learnt (e.g. the oneDNN primitive)
    Measurement measurement;  // work, durations and counters (empty unless measured)
    // Each timed repetition's start and end on the monotonic clock (for the trace).
    std::vector<std::pair<std::int64_t, std::int64_t>> spans_ns;
};

struct SuiteResult {
    std::vector<CaseResult> cases;
    std::int64_t start_ns = 0;  // monotonic clock when the suite began
    double wall_s = 0;
    std::vector<std::string> notes;  // what could not be measured, and why
    std::vector<RoofCheck> roof_checks;  // per shape, naming its cases (RoofCheck::beside)
};

// Which standard cases a suite run takes: the quick set, the default set, or every case
// (the default set plus those run only on request, such as naive GEMM 1024).
enum class CaseSet { quick, standard, full };

// The cases a suite run covers: every standard case in `set` whose kernel and variant are
// selected (empty selection = all), the problems and variants of each shape adjacent (they
// run back to back, so their comparisons are not spread over minutes). Throws std::invalid_argument
// listing the valid names when a kernel or variant name is unknown.
std::vector<kernels::KernelCase> select_cases(const std::vector<std::string>& kernel_names,
                                              const std::vector<std::string>& variant_names,
                                              CaseSet set);

// GPU cases run on device 0, timed with CUDA events around each launch after a check
// against the CPU reference; their kernel family is prefixed "gpu-" ("gpu-gemm") so their
// names never collide with the CPU cases'. Throws std::runtime_error when devices == gpu
// and no GPU is usable.
void run_gpu_suite(const SuiteOptions& options, SuiteResult& result);

// The profile decides how many buffer sets DRAM-sized cases rotate through (its measured
// last cache level).
SuiteResult run_suite(const std::vector<kernels::KernelCase>& cases, const MachineProfile& profile,
                      const SuiteOptions& options);

// kernels-local work -> diagnosis Work (the enums share their spellings).
Work to_work(const kernels::KernelWork& w);

}  // namespace ceiling::measure
