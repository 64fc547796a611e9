// `ceiling doctor`: what this machine lets ceiling measure, and how to enable the rest.
#include <iostream>
#include <memory>

#include "agent/cli/command.hpp"
#include "agent/machine/pmu_survey.hpp"
#include "agent/output/doctor_report.hpp"

namespace ceiling::cli {

namespace {
struct DoctorArgs {
    bool json = false;
    bool no_self_test = false;
};
}  // namespace

Command add_doctor(CLI::App& root, const GlobalOptions&) {
    auto args = std::make_shared<DoctorArgs>();
    auto* app = root.add_subcommand(
        "doctor",
        "What this machine lets ceiling measure: CPU PMU (and why not: VM, perf_event_paranoid),\n"
        "PAPI and libpfm4, perf_event software events, memory-controller counters, RAPL energy,\n"
        "CUDA driver, GPUs, CUPTI and GPU counter permission, AMX; each with how to enable it.\n"
        "Where a PMU is usable it is checked against a kernel with known FLOPs and bytes.");
    app->add_flag("--json", args->json, "Print the report as JSON (schema_version 1) on stdout");
    app->add_flag("--no-self-test", args->no_self_test,
                  "Do not run the PMU self-validation kernels (saves about a second)");
    return {app, [args]() -> int {
                measure::SurveyOptions opts;
                opts.self_validation = !args->no_self_test;
                const DoctorReport report = measure::survey_measurement(opts);
                if (args->json)
                    std::cout << to_json(report).dump(2) << "\n";
                else
                    output::render_doctor_report(report, std::cout);
                return exit_ok;
            }};
}

}  // namespace ceiling::cli
