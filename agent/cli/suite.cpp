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
// The record's name with `suffix` for its stem's; where that is the record's own name (-o
// X.svg), the suffix is added to the whole name instead: a default never replaces the record.
std::string sibling(const std::string& record, const std::string& suffix) {
    std::filesystem::path p(record);
    const auto named = p.parent_path() / (p.stem().string() + suffix);
    return named == p ? record + suffix : named.string();
}

// The CPU cases --kernels, --variants and --quick / --full name (none with --device gpu).
std::vector<kernels::KernelCase> select_suite_cases(const SuiteArgs& a) {
    std::vector<kernels::KernelCase> cases;
    try {
        cases = measure::select_cases(a.kernels, a.variants,
                                      a.quick  ? measure::CaseSet::quick
                                      : a.full ? measure::CaseSet::full
                                               : measure::CaseSet::standard);
        if (a.device == "gpu") cases.clear();
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    return cases;
}

void check_threads(int threads) {
    if (threads > kernels::available_cpus())
        throw UsageError("--threads " + std::to_string(threads) + " exceeds the " +
                         std::to_string(kernels::available_cpus()) + " CPUs this process may use");
}

// Where the suite's record, roofline and trace go.
struct SuitePaths {
    std::string record;
    std::string svg;
    std::string trace;
};

SuitePaths suite_paths(const SuiteArgs& a) {
    SuitePaths paths;
    paths.record =
        a.output.empty() ? measure::unused_record_name("ceiling-suite", std::nullopt) : a.output;
    paths.svg = a.svg.empty() ? sibling(paths.record, ".svg") : a.svg;
    paths.trace = a.trace.empty() ? sibling(paths.record, ".trace.json") : a.trace;
    // Fail before minutes of measuring, not after.
    check_output_paths({paths.record, paths.svg, paths.trace, a.csv});
    check_outputs_apart({{paths.record, "the suite record (-o)"},
                         {paths.svg, "--svg"},
                         {paths.trace, "--trace"},
                         {a.csv, "--csv"}},
                        {{a.profile, "--profile"}, {a.thresholds.file, "--thresholds"}});
    return paths;
}

// How measure::run_suite is to run the cases (the progress callbacks aside).
measure::SuiteOptions suite_options(const SuiteArgs& a, const Thresholds& thresholds) {
    measure::SuiteOptions opts;
    opts.quick = a.quick;
    opts.threads = a.threads;
    opts.devices = a.device == "gpu"   ? measure::SuiteDevices::gpu
                   : a.device == "cpu" ? measure::SuiteDevices::cpu
                                       : measure::SuiteDevices::all;
    opts.kernel_names = a.kernels;
    opts.variant_names = a.variants;
    opts.roof_checks = !a.no_roof_check;
    opts.roof_check_from = thresholds.far;
    if (a.quick) {
        opts.min_time_s = 0.1;
        opts.min_repeats = 3;
    }
    return opts;
}

// measure::run_suite with a progress line, a failure to measure as ceiling's exit status.
measure::SuiteResult run_with_progress(const std::vector<kernels::KernelCase>& cases,
                                       const MachineProfile& profile, measure::SuiteOptions opts,
                                       const GlobalOptions& global) {
    std::optional<output::Progress> progress;
    progress.emplace("ceiling suite", static_cast<int>(cases.size()),
                     output::progress_wanted(global.quiet));
    opts.on_step = [&](const std::string& what) { progress->step(what); };
    opts.add_steps = [&](int n) { progress->add_total(n); };
    measure::SuiteResult result;
    try {
        result = measure::run_suite(cases, profile, opts);
    } catch (const std::runtime_error& e) {
        throw MeasurementError(e.what());
    }
    progress.reset();
    return result;
}

// The roofline SVG, the trace and the CSV beside the record.
void write_suite_files(const SuiteArgs& a, const RunRecord& record,
                       const measure::SuiteResult& result, const SuitePaths& paths) {
    const int threads = a.threads > 0 ? a.threads : kernels::available_cpus();
    try {
        store::write_file_atomically(paths.svg, output::suite_roofline_svg(record, threads));
        store::write_file_atomically(paths.trace, measure::suite_trace(result));
        if (!a.csv.empty()) store::write_file_atomically(a.csv, output::regions_csv(record));
    } catch (const std::exception& e) {
        throw MeasurementError(e.what());
    }
}

// Failed when a case failed or computed the wrong thing.
int suite_status(const measure::SuiteResult& result) {
    int status = exit_ok;
    for (const auto& c : result.cases)
        if (c.status == measure::CaseStatus::check_failed ||
            c.status == measure::CaseStatus::failed)
            status = exit_failed;
    return status;
}

int run_suite_command(const SuiteArgs& a, const GlobalOptions& global) {
    const std::vector<kernels::KernelCase> cases = select_suite_cases(a);
    check_threads(a.threads);
    const Thresholds thresholds = thresholds_of(a.thresholds);
    const SuitePaths paths = suite_paths(a);
    const LoadedProfile loaded = obtain_profile(a.profile, global, "ceiling suite");
    const measure::SuiteResult result =
        run_with_progress(cases, loaded.profile, suite_options(a, thresholds), global);

    // Judged and saved before anything is printed: the terminal shows the record
    // exactly as `ceiling report` will re-render it.
    RunRecord record =
        measure::suite_record(result, loaded.profile, loaded.path.string(), thresholds);
    judge::judge_record(record);
    store::save_run_record(record, paths.record);
    if (a.json)
        std::cout << output::summary_json(record, paths.record).dump(1) << "\n";
    else
        output::render_suite(record, std::cout);
    write_suite_files(a, record, result, paths);
    if (!a.json)
        std::cout << "\nRun record " << paths.record << ", roofline " << paths.svg << ", trace "
                  << paths.trace << (a.csv.empty() ? "" : ", CSV " + a.csv) << "\n";
    return suite_status(result);
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

    return {app, [args, &global]() -> int { return run_suite_command(*args, global); }};
}

}  // namespace ceiling::cli
