// `ceiling run [options] -- PROGRAM [ARGS...]`: parse, fill the record's header, hand the
// measuring to measure::run_program (repeats, /proc sampling, NVTX regions through our
// injection library), judge the record, save it, print where the time went, and return the
// program's own exit status.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>

#include <spdlog/spdlog.h>

#include "agent/cli/command.hpp"
#include "agent/cli/shared_options.hpp"
#include "agent/run/launch.hpp"
#include "agent/run/phase_timer.hpp"
#include "agent/machine/launch_context.hpp"
#include "agent/judge/judge_record.hpp"
#include "agent/machine/roof_check.hpp"
#include "agent/run/run_program.hpp"
#include "agent/run/run_trace.hpp"
#include "agent/run/torch_run.hpp"
#include "agent/store/atomic_file.hpp"
#include "agent/output/progress.hpp"
#include "agent/output/run_summary.hpp"
#include "agent/output/run_answer.hpp"
#include "agent/output/summary_json.hpp"
#include "agent/store/profile_store.hpp"
#include "agent/store/run_store.hpp"
#include "collectors/perf_events.hpp"
#include "diagnosis/budget.hpp"
#include "diagnosis/units.hpp"

namespace ceiling::cli {

namespace fs = std::filesystem;

namespace {

struct RunArgs {
    int repeat = 1;
    int warmup = 0;
    bool gpu_counters = false;
    std::string interval = "10ms";
    std::string latency_budget;
    std::string memory_budget;
    std::string cost_budget;
    std::string price_per_hour;
    std::vector<std::string> region_budgets;
    std::string budget_file;
    std::string because;
    bool fail_on_budget = false;
    std::string model_regions;
    bool torch = false;
    bool no_roof_check = false;
    std::string output;
    std::string trace;
    std::string csv;
    bool json = false;      // --json given: the JSON summary instead of the text
    std::string json_file;  // --json FILE: written there, the text still on stderr
    bool detail = false;
    std::string profile;
    ThresholdArgs thresholds;
    std::vector<std::string> command;
};

// Budgets: --budget FILE first, then the flags over it (the engine's names and units).
std::optional<Budgets> parse_run_budgets(const RunArgs& a) {
    Budgets b;
    if (!a.budget_file.empty()) b = read_budget_file(a.budget_file);
    const std::pair<const char*, const std::string*> flags[] = {
        {"latency", &a.latency_budget}, {"memory", &a.memory_budget}, {"cost", &a.cost_budget}};
    for (const auto& [name, text] : flags) {
        if (text->empty()) continue;
        try {
            set_budget(b, name, *text);
        } catch (const std::exception& e) {
            throw UsageError(std::string("--") + name + "-budget: " + e.what());
        }
    }
    for (const auto& spec : a.region_budgets) {
        try {
            set_region_budget(b, spec);
        } catch (const std::exception& e) {
            throw UsageError(std::string("--region-budget: ") + e.what());
        }
    }
    if (!a.price_per_hour.empty()) {
        try {
            b.price_per_hour = parse_count(a.price_per_hour);
        } catch (const std::exception& e) {
            throw UsageError(std::string("--price-per-hour: ") + e.what());
        }
    }
    if (!a.because.empty()) b.because = a.because;
    if (b.empty()) {
        if (!b.because.empty())
            throw UsageError("a 'because' needs a budget to explain (--latency-budget, "
                             "--memory-budget, --cost-budget, --region-budget or --budget FILE)");
        return std::nullopt;
    }
    return b;
}

// --model-regions compiled; none when not given.
std::optional<std::regex> parse_model_regions(const std::string& pattern) {
    std::optional<std::regex> model;
    if (!pattern.empty()) {
        try {
            model.emplace(pattern, std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
            throw UsageError("--model-regions '" + pattern + "': " + e.what());
        }
    }
    return model;
}

// --interval in seconds (0: no sampling).
double parse_interval_s(const std::string& text) {
    double interval_s = 0;
    try {
        interval_s = parse_duration_s(text);
    } catch (const std::exception& e) {
        throw UsageError(std::string("--interval: ") + e.what());
    }
    if (interval_s > 0 && interval_s < 0.001)
        throw UsageError("--interval below 1ms would measure the sampler");
    return interval_s;
}

// The record's header: what runs, the thresholds it is judged by, and where (rank, host).
RunRecord new_run_record(const RunArgs& a) {
    RunRecord record;
    record.kind = RecordKind::run;
    record.thresholds = thresholds_of(a.thresholds);
    record.command = a.command;
    measure::fill_record_context(record);
    return record;
}

// Where the run's record and trace go ("" for no trace).
struct RunPaths {
    std::string record;
    std::string trace;
};

RunPaths run_paths(const RunArgs& a, std::optional<int> rank) {
    // A default name is chosen when the record is written, never one that exists.
    RunPaths paths;
    paths.record = a.output.empty() ? measure::default_record_name("ceiling-run", rank)
                                    : measure::with_rank(a.output, rank);
    paths.trace = a.trace.empty() ? "" : measure::with_rank(a.trace, rank);
    // An unwritable output fails now, not after the program ran for an hour.
    // --json FILE takes a .json name: a program named after --json without -- in between
    // would otherwise be overwritten with JSON.
    if (!a.json_file.empty() && !a.json_file.ends_with(".json"))
        throw UsageError("--json FILE takes a file name ending in .json, got '" + a.json_file +
                         "' (the program goes after --: ceiling run --json -- PROGRAM)");
    check_output_paths({paths.record, paths.trace, a.csv, a.json_file});
    return paths;
}

// The program as sh finds it on PATH; sh's statuses (127, 126) when it cannot run.
measure::ResolvedProgram resolve_or_fail(const std::string& name) {
    const char* path_env = std::getenv("PATH");
    auto program = measure::resolve_program(name, path_env ? path_env : "/usr/bin:/bin");
    if (program.status != 0) throw Failure(program.status, program.error);
    return program;
}

// The machine profile the run is judged against (`chosen`: --profile, else the saved one),
// or a note saying why there is none.
void attach_profile(const std::string& chosen, RunRecord& record) {
    const fs::path profile_path = chosen.empty() ? store::default_profile_path() : fs::path(chosen);
    // Without the working-set sweep: judging never reads it, and the record's copy is smaller.
    if (!chosen.empty())
        record.machine_profile = store::load_profile(profile_path, ProfileParts::without_sweep);
    else
        record.machine_profile =
            store::load_profile_if_present(profile_path, ProfileParts::without_sweep);
    // A profile of another CPU: used when the user chose it (said in the record), never the
    // per-host cache file (a VM keeps its hostname when its instance type changes).
    if (record.machine_profile)
        if (const auto other =
                other_cpu_profile(*record.machine_profile, profile_path, !chosen.empty())) {
            if (other->chosen) {
                record.notes.push_back(other->said + ": judged against that machine's roofs");
            } else {
                record.machine_profile.reset();
                record.notes.push_back(
                    other->said + ": not judged against it; run `ceiling machine` on this host");
            }
            spdlog::warn("{}", record.notes.back());
        }
    if (record.machine_profile)
        record.machine_profile_path = fs::absolute(profile_path).string();
    else if (!fs::exists(profile_path))
        record.notes.push_back("no machine profile at " + profile_path.string() +
                               ": run `ceiling machine` so runs can be judged against the roofs");
}

// What measure::run_program is to do; with --torch, the Python environment set for it.
measure::RunPlan make_run_plan(const RunArgs& a, const fs::path& executable, double interval_s,
                               const std::optional<std::regex>& model, RunRecord& record) {
    measure::RunPlan plan;
    plan.command = a.command;
    plan.executable = executable;
    plan.repeat = a.repeat;
    plan.warmup = a.warmup;
    plan.gpu_counters = a.gpu_counters;
    plan.interval_s = interval_s;
    plan.model = model;
    if (a.torch) {
        try {
            measure::prepare_torch_run(plan, record);
        } catch (const std::runtime_error& e) {
            throw MeasurementError(e.what());
        }
    }
    return plan;
}

// Progress between executions when there are several (the program's own output is its
// own business; one line, rewritten in place, on a terminal only). `progress` outlives the
// run: the plan's callback steps it.
void show_progress(const RunArgs& a, const GlobalOptions& global,
                   std::optional<output::Progress>& progress, measure::RunPlan& plan) {
    const int executions = a.warmup + a.repeat + (a.gpu_counters ? 1 : 0);
    if (executions > 1 && output::progress_wanted(global.quiet)) {
        progress.emplace("ceiling run", executions, true);
        plan.on_execution = [&progress, warmup = a.warmup, repeat = a.repeat](int i) {
            progress->step(i <= warmup            ? "warm-up"
                           : i <= warmup + repeat ? "execution " + std::to_string(i - warmup)
                                                  : "GPU counting");
        };
    }
}

// The program's executions, a failure to launch or measure it as ceiling's exit status.
measure::ProgramRun run_or_fail(const measure::RunPlan& plan) {
    measure::ProgramRun run;
    try {
        run = measure::run_program(plan);
    } catch (const measure::LaunchFailure& f) {
        throw Failure(f.status, f.what());
    } catch (const std::runtime_error& e) {
        throw MeasurementError(e.what());
    }
    return run;
}

// The verdicts, and with the roofs looked at again, the verdicts judged once more.
void judge_run(const RunArgs& a, const measure::ProgramRun& run, RunRecord& record) {
    judge::judge_record(record);
    // Not after Ctrl-C: the user asked to stop, not for another measurement.
    if (!a.no_roof_check && !run.interrupted_by) {
        measure::check_roofs(record);
        // Again with the checks: a verdict the host's share moved across says so.
        if (!record.roof_checks.empty()) judge::judge_record(record);
    }
}

// The program's exit status as a shell reports it.
int program_status(const RunRecord& record, const measure::ProgramRun& run) {
    int status = record.end.shell_status();
    // Interrupted: 128+signal, as a shell reports it, even when the execution the signal
    // reached ended well; a failing program's own status is kept.
    if (run.interrupted_by && (status == 0 || record.end.kind == EndKind::not_started))
        status = 128 + *run.interrupted_by;
    return status;
}

// What save_run_files could not write: `lost` says why (empty: everything was written);
// the record itself may have been saved though a trace or CSV was not.
struct SaveOutcome {
    bool record_saved = false;
    std::string lost;
};

// The record, the trace and the CSV written. `paths.record` becomes the name a default
// record was written under.
SaveOutcome save_run_files(const RunArgs& a, const measure::ProgramRun& run,
                           const measure::RunPlan& plan, const RunRecord& record, RunPaths& paths) {
    SaveOutcome saved;
    try {
        if (a.output.empty()) {
            // Named when written: the first candidate of this second that names nothing.
            for (int n = 1;; ++n) {
                paths.record = measure::default_record_name("ceiling-run", record.rank, n);
                if (store::save_new_run_record(record, paths.record)) break;
            }
        } else {
            store::save_run_record(record, paths.record);
        }
        saved.record_saved = true;
        if (!paths.trace.empty())
            store::write_file_atomically(
                paths.trace, measure::run_trace(run, measure::program_name(plan)).dump());
        if (!a.csv.empty()) store::write_file_atomically(a.csv, output::regions_csv(record));
    } catch (const std::exception& e) {
        saved.lost = e.what();
    }
    return saved;
}

// After the record is safe: the op observer for a torch that had none, for the next runs
// (a minute or so, once per torch version; the run itself used the dispatch mode). Silent
// with -q or --json (stderr is then the summary's alone): a failed build leaves its reason
// in the cache, and the next run's notes say it.
void build_torch_observers(const measure::ProgramRun& run, bool quiet) {
    for (const auto& python : measure::observers_to_build(run)) {
        if (!quiet)
            std::cerr << "ceiling: building the PyTorch op observer for " << python
                      << "'s torch (once per torch version, about a minute; this run's ops went "
                         "through the dispatch mode, which costs each op more)\n";
        const auto b = measure::build_torch_observer(python);
        if (!b.built && !quiet)
            spdlog::warn("the PyTorch op observer was not built ({}): runs of this torch keep the dispatch mode",
                         b.message);
        else if (b.built && !quiet)
            std::cerr << "ceiling: built, in " << b.message << "\n";
    }
}

// The summary on stderr (JSON or text), and the record's name where the user needs it; the
// JSON written to --json FILE. False when that file could not be written.
bool print_run_summary(const RunArgs& a, const GlobalOptions& global, const RunRecord& record,
                       const RunPaths& paths, const SaveOutcome& saved) {
    const auto json = [&] {
        return output::summary_json(record, saved.record_saved ? paths.record : std::string()).dump(1) + "\n";
    };
    bool written = true;
    if (!a.json_file.empty()) {
        try {
            store::write_file_atomically(a.json_file, json());
        } catch (const std::exception& e) {
            spdlog::error("{}", e.what());
            written = false;
        }
    } else if (a.json) {
        // On stderr, as the text summary: stdout is the program's (perf stat -j does the same).
        std::cerr << json();
        return true;
    }
    if (!global.quiet) {
        std::cerr << "\n";
        // Names the program chose are shown escaped; the record keeps them exact.
        std::optional<RunRecord> escaped;
        const RunRecord& shown = shown_as_text(record, escaped);
        if (a.detail)
            output::render_run_summary(shown, std::cerr);
        else
            output::render_run_answer(shown, std::cerr);
        if (saved.lost.empty())
            std::cerr << "record: " << paths.record
                      << (paths.trace.empty() ? "" : "  trace: " + paths.trace) << "\n";
        else if (saved.record_saved)
            std::cerr << "record: " << paths.record << "\n";
    } else if (saved.record_saved && a.output.empty()) {
        // Quiet, but a name ceiling chose is the one thing the user cannot know otherwise.
        std::cerr << "record: " << paths.record << "\n";
    }
    return written;
}

int run_command(const RunArgs& a, const GlobalOptions& global) {
    if (a.command.empty())
        throw UsageError("run: no program given (ceiling run [options] -- PROGRAM [ARGS...])");
    // The kernel's perf hooks are switched on beside ceiling's own start-up (options, the
    // profile, the program's path), not while the program waits for its counters
    // (perf_events.hpp); that start-up is now ~1-2 ms of the hooks' 5-20 ms in a VM.
    const collectors::PerfHooksWarmup perf_hooks;
    const std::optional<std::regex> model = parse_model_regions(a.model_regions);
    const double interval_s = parse_interval_s(a.interval);
    const std::optional<Budgets> budgets = parse_run_budgets(a);

    RunRecord record = new_run_record(a);
    RunPaths paths = run_paths(a, record.rank);
    const auto program = resolve_or_fail(a.command[0]);
    record.executable = fs::absolute(program.path).string();
    const std::vector<NamedPath> outputs = {{paths.record, "the run record (-o)"},
                                            {paths.trace, "--trace"},
                                            {a.csv, "--csv"},
                                            {a.json_file, "--json"}};
    check_outputs_apart(outputs, {{a.profile, "the machine profile in use"},
                                  {a.budget_file, "--budget"},
                                  {a.thresholds.file, "--thresholds"},
                                  {program.path, "the program being run"}});
    attach_profile(a.profile, record);
    // The saved profile, where none was named: known once it was found.
    if (a.profile.empty())
        check_outputs_apart(outputs, {{record.machine_profile_path, "the machine profile in use"}});

    record.options.repeat = a.repeat;
    record.options.warmup = a.warmup;
    if (interval_s > 0) record.options.interval_s = interval_s;
    if (model) record.options.model_regions = a.model_regions;
    record.budgets = budgets;

    measure::RunPlan plan = make_run_plan(a, program.path, interval_s, model, record);
    std::optional<output::Progress> progress;
    show_progress(a, global, progress, plan);
    const measure::ProgramRun run = run_or_fail(plan);
    progress.reset();
    {
        const measure::PhaseTimer t("aggregating the regions");
        measure::add_to_record(run, plan, record);
        if (a.torch) measure::add_torch_to_record(run, record);
    }
    {
        const measure::PhaseTimer t(a.no_roof_check ? "judging" : "judging, with the roof check");
        judge_run(a, run, record);
    }

    const int status = program_status(record, run);
    // The measurement is shown even when the record cannot be written.
    const SaveOutcome saved = [&] {
        const measure::PhaseTimer t("writing the record");
        return save_run_files(a, run, plan, record, paths);
    }();
    const bool json_written = print_run_summary(a, global, record, paths, saved);
    if (a.torch) build_torch_observers(run, global.quiet || a.json);
    if (!saved.lost.empty()) {
        // Only where the record is lost is the summary all that is kept.
        spdlog::error("{}{}", saved.lost,
                      saved.record_saved ? " (the record was saved: " + paths.record + ")"
                      : global.quiet     ? std::string()
                                         : std::string(" (the summary above is all that is kept of this run)"));
        return status != 0 ? status : exit_failed;
    }
    if (status == 0 && a.fail_on_budget && judge::budgets_met(record) == false)
        return exit_budget_missed;
    return status == 0 && !json_written ? exit_failed : status;
}

}  // namespace

Command add_run(CLI::App& root, const GlobalOptions& global) {
    auto args = std::make_shared<RunArgs>();
    auto* app = root.add_subcommand(
        "run",
        "Run a program under measurement: wall time over repeats, CPU and memory of it and every\n"
        "thread and process it starts, NVTX regions (no recompiling), a run record, a diagnosis\n"
        "and budgets. Exits with the program's status (128+signal if it was killed).\n"
        "ceiling run [options] -- PROGRAM [ARGS...]");
    app->add_option("-r,--repeat", args->repeat, "Timed executions (p50/p99 of wall time and of each region)")
        ->check(CLI::Range(1, 100000));
    app->add_option("--warmup", args->warmup, "Executions before the timed ones, not in the statistics")
        ->check(CLI::Range(0, 100000));
    app->add_option("--interval", args->interval, "Sampling interval (e.g. 10ms; 0 turns sampling off)")
        ->capture_default_str();
    app->add_option("--latency-budget", args->latency_budget, "Wall-time budget per execution, e.g. 12ms")
        ->check(non_empty);
    app->add_option("--memory-budget", args->memory_budget, "Peak resident memory budget, e.g. 40MB")
        ->check(non_empty);
    app->add_option("--cost-budget", args->cost_budget,
                    "Cost budget per 1000 executions at --price-per-hour, e.g. 0.02")
        ->check(non_empty);
    app->add_option("--price-per-hour", args->price_per_hour,
                    "The machine's price per hour (any currency): turns throughput into cost")
        ->check(non_empty);
    app->add_option("--region-budget", args->region_budgets,
                    "A budget for one region's instances, REGION:BUDGET=VALUE, judged at p50 and p99\n"
                    "over every instance (e.g. model:latency=12ms, model:latency-p99=15ms,\n"
                    "decode:cost=0.01); REGION is a path, a name, or 'model' (repeatable)");
    app->add_option("--budget", args->budget_file,
                    "Budgets from a JSON file (every budget, region budgets, price_per_hour, because)")
        ->check(non_empty);
    app->add_option("--because", args->because,
                    "Why missing the budgets breaks the product (\"... because the frame is 33 ms\");\n"
                    "without it they are shown as a preference");
    app->add_flag("--fail-on-budget", args->fail_on_budget,
                  "Exit with status 3 when the program succeeded but a budget was missed (for CI)");
    app->add_option("--model-regions", args->model_regions,
                    "Regex for the NVTX regions that are the model (e.g. 'forward|backward')");
    app->add_flag("--torch", args->torch,
                  "A Python program using PyTorch: every ATen op a region with its declared work,\n"
                  "nested under its nn.Module; the outermost module calls are the model. The first\n"
                  "run of a torch version builds ceiling's op observer for it afterwards (about a\n"
                  "minute, once; CEILING_TORCH_OPS=mode keeps the slower dispatch mode)");
    app->add_flag("--gpu-counters", args->gpu_counters,
                  "One more execution after the timed ones with per-kernel GPU counters (CUPTI "
                  "kernel replay: slow, its times unused): kernels without declared work are "
                  "judged from their counted operations and DRAM bytes");
    app->add_flag(
        "--no-roof-check", args->no_roof_check,
        "Skip measuring again, after a run, the DRAM and compute roofs its verdicts depend on\n"
        "(a fraction of a second each; on a shared host it says how far those may be off,\n"
        "judges work that ran above the profile's roof against them, and names a verdict\n"
        "they would change)");
    auto* json = app->add_option("--json", args->json_file,
                                 "The summary as JSON: on stderr instead of the text (stdout is the\n"
                                 "program's), or with FILE (a .json name) written there, the text\n"
                                 "still on stderr")
                     ->expected(0, 1);
    app->add_flag("--detail", args->detail,
                  "Print the whole summary: every region, finding and note, the system's evidence\n"
                  "(the default is the answer in at most 30 lines; the record keeps everything)");
    app->add_option("--csv", args->csv, "Also write the region table as CSV to this file");
    app->add_option("--output,-o", args->output,
                    "Run record to write (default: ceiling-run-DATE-TIME.json; .rankN added under mpirun/srun)");
    app->add_option("--trace", args->trace, "Also write a Chrome/Perfetto trace to this file");
    app->add_option("--profile", args->profile, "Machine profile to judge against (default: the saved one)");
    add_threshold_options(app, args->thresholds);
    app->add_option("command", args->command, "PROGRAM [ARGS...], best after --");
    // Everything from the program's name on is the program's, options included (CLI11's
    // prefix_command would still read options after it).
    app->positionals_at_end();
    return {app, [args, json, &global]() -> int {
                args->json = json->count() > 0;
                return run_command(*args, global);
            }};
}

}  // namespace ceiling::cli
