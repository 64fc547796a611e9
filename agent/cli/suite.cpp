// `ceiling suite`: the reference kernels on this machine, each placed on the roofline.
#include "agent/suite/suite.hpp"

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include <spdlog/spdlog.h>

#include "agent/cli/command.hpp"
#include "agent/cli/shared_options.hpp"
#include "agent/machine/launch_context.hpp"
#include "agent/judge/judge_record.hpp"
#include "agent/suite/suite_record.hpp"
#include "agent/store/atomic_file.hpp"
#include "agent/output/progress.hpp"
#include "agent/output/roofline_svg.hpp"
#include "agent/output/suite_table.hpp"
#include "agent/output/summary_json.hpp"
#include "agent/store/run_store.hpp"
#include "kernels/parallel.hpp"

namespace ceiling::cli {

namespace {
struct SuiteArgs {
    std::vector<std::string> kernels;
    std::vector<std::string> variants;
    int threads = 0;
    std::string device = "all";
    bool quick = false;
    bool full = false;
    std::string profile;
    ThresholdArgs thresholds;
    std::string output;
    std::string svg;
    std::string trace;
    std::string csv;
    bool json = false;
    bool no_roof_check = false;
};

// FILE.json -> FILE.svg / FILE.trace.json, so one --output names all three.
std::string sibling(const std::string& record, const std::string& suffix) {
    std::filesystem::path p(record);
    return (p.parent_path() / (p.stem().string() + suffix)).string();
}
}  // namespace

Command add_suite(CLI::App& root, const GlobalOptions& global) {
    auto args = std::make_shared<SuiteArgs>();
    auto* app = root.add_subcommand(
        "suite",
        "Run the reference kernels (GEMM, GEMV decode, depthwise convolution, NMS, resize; naive,\n"
        "optimized and library variants) on known work: check each against a reference, time it,\n"
        "place it on the roofline and say what bounds it. A few minutes; --quick under a minute.");
    app->add_option("--kernels", args->kernels, "Kernels to run, comma-separated (default: all)")
        ->delimiter(',');
    app->add_option("--variants", args->variants,
                    "Variants: naive, optimized, library (default: all)")
        ->delimiter(',');
    app->add_option("--threads", args->threads,
                    "Threads for multi-threaded variants (default: every CPU this process may use)")
        ->check(CLI::Range(1, 4096));
    app->add_option("--device", args->device,
                    "cpu, gpu or all: all runs the GPU cases too when a GPU is usable (device 0, "
                    "timed with CUDA events, judged against the profile's GPU roofs)")
        ->check(CLI::IsMember({"all", "cpu", "gpu"}))
        ->default_str("all");
    auto* quick = app->add_flag("--quick", args->quick, "Fewer and smaller cases, fewer repeats");
    app->add_flag("--full", args->full,
                  "Every case, also those run only on request (naive GEMM 1024, OpenBLAS GEMM "
                  "4096: seconds each, more with a library's fallback kernels)")
        ->excludes(quick);
    add_profile_option(app, args->profile);
    add_threshold_options(app, args->thresholds);
    app->add_option(
        "--output,-o", args->output,
        "Run record to write (default: ceiling-suite-YYYYmmdd-HHMMSS.json); `ceiling report` "
        "and `ceiling diff` read it");
    app->add_option("--svg", args->svg,
                    "Roofline SVG to write (default: the record's name with .svg)");
    app->add_option(
        "--trace", args->trace,
        "Chrome trace to write, one event per timed repetition (default: the record's name "
        "with .trace.json; opens in Perfetto UI and chrome://tracing)");

    app->add_flag(
        "--no-roof-check", args->no_roof_check,
        "Skip measuring the DRAM and compute roofs each shape's cases are judged against\n"
        "in turns with them (a look of a few tens of milliseconds before and after each\n"
        "round), and judge every case against the profile's roofs instead");
    app->add_flag("--json", args->json,
                  "Print a JSON summary on stdout instead of the table (units in the field names,\n"
                  "null for what was not measured)");
    app->add_option("--csv", args->csv, "Also write the kernel table as CSV to this file");

    return {app, [args, &global]() -> int {
                std::vector<kernels::KernelCase> cases;
                try {
                    cases = measure::select_cases(args->kernels, args->variants,
                                                  args->quick  ? measure::CaseSet::quick
                                                  : args->full ? measure::CaseSet::full
                                                               : measure::CaseSet::standard);
                    if (args->device == "gpu") cases.clear();
                } catch (const std::invalid_argument& e) {
                    throw UsageError(e.what());
                }
                if (args->threads > kernels::available_cpus())
                    throw UsageError("--threads " + std::to_string(args->threads) +
                                     " exceeds the " + std::to_string(kernels::available_cpus()) +
                                     " CPUs this process may use");
                const Thresholds thresholds = thresholds_of(args->thresholds);
                const std::string record_path =
                    args->output.empty()
                        ? measure::unused_record_name("ceiling-suite", std::nullopt)
                        : args->output;
                const std::string svg_path =
                    args->svg.empty() ? sibling(record_path, ".svg") : args->svg;
                const std::string trace_path =
                    args->trace.empty() ? sibling(record_path, ".trace.json") : args->trace;
                // Fail before minutes of measuring, not after.
                check_output_paths({record_path, svg_path, trace_path, args->csv});
                const LoadedProfile loaded = obtain_profile(args->profile, global, "ceiling suite");

                measure::SuiteOptions opts;
                opts.quick = args->quick;
                opts.threads = args->threads;
                opts.devices = args->device == "gpu"   ? measure::SuiteDevices::gpu
                               : args->device == "cpu" ? measure::SuiteDevices::cpu
                                                       : measure::SuiteDevices::all;
                opts.kernel_names = args->kernels;
                opts.variant_names = args->variants;
                opts.roof_checks = !args->no_roof_check;
                opts.roof_check_from = thresholds.far;
                if (args->quick) {
                    opts.min_time_s = 0.1;
                    opts.min_repeats = 3;
                }
                std::optional<output::Progress> progress;
                progress.emplace("ceiling suite", static_cast<int>(cases.size()),
                                 output::progress_wanted(global.quiet));
                opts.on_step = [&](const std::string& what) { progress->step(what); };
                opts.add_steps = [&](int n) { progress->add_total(n); };
                measure::SuiteResult result;
                try {
                    result = measure::run_suite(cases, loaded.profile, opts);
                } catch (const std::runtime_error& e) {
                    throw MeasurementError(e.what());
                }
                progress.reset();

                // Judged and saved before anything is printed: the terminal shows the record
                // exactly as `ceiling report` will re-render it.
                RunRecord record =
                    measure::suite_record(result, loaded.profile, loaded.path.string(), thresholds);
                judge::judge_record(record);
                store::save_run_record(record, record_path);
                if (args->json)
                    std::cout << output::summary_json(record, record_path).dump(1) << "\n";
                else
                    output::render_suite(record, std::cout);
                const int threads = args->threads > 0 ? args->threads : kernels::available_cpus();
                try {
                    store::write_file_atomically(svg_path,
                                                  output::suite_roofline_svg(record, threads));
                    store::write_file_atomically(
                        trace_path, measure::suite_trace(result));
                    if (!args->csv.empty())
                        store::write_file_atomically(args->csv, output::regions_csv(record));
                } catch (const std::exception& e) {
                    throw MeasurementError(e.what());
                }
                if (!args->json)
                    std::cout << "\nRun record " << record_path << ", roofline " << svg_path
                              << ", trace " << trace_path
                              << (args->csv.empty() ? "" : ", CSV " + args->csv) << "\n";

                int status = exit_ok;
                for (const auto& c : result.cases)
                    if (c.status == measure::CaseStatus::check_failed ||
                        c.status == measure::CaseStatus::failed)
                        status = exit_failed;
                return status;
            }};
}

}  // namespace ceiling::cli
