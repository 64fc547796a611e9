// `ceiling run [options] -- PROGRAM [ARGS...]`: run a program under measurement (repeats,
// /proc sampling, NVTX regions through our injection library), keep a run record, judge it,
// print where the time went, and return the program's own exit status.
#include <unistd.h>

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
#include "agent/inject/nvtx_event_format.hpp"
#include "agent/measure/launch.hpp"
#include "agent/measure/launch_context.hpp"
#include "agent/measure/pmu_readings.hpp"
#include "agent/measure/region.hpp"
#include "agent/measure/region_diagnosis.hpp"
#include "agent/measure/sampler.hpp"
#include "agent/output/atomic_file.hpp"
#include "agent/output/chrome_trace.hpp"
#include "agent/output/run_summary.hpp"
#include "agent/store/profile_store.hpp"
#include "agent/store/run_store.hpp"
#include "collectors/perf_events.hpp"
#include "collectors/process_accounting.hpp"
#include "collectors/software_events.hpp"
#include "diagnosis/budget.hpp"
#include "diagnosis/units.hpp"

namespace ceiling::cli {

namespace fs = std::filesystem;

namespace {

struct RunArgs {
    int repeat = 1;
    int warmup = 0;
    std::string interval = "10ms";
    std::string latency_budget;
    std::string memory_budget;
    std::string budget_file;
    bool fail_on_budget = false;
    std::string model_regions;
    std::string output;
    std::string trace;
    std::string profile;
    std::vector<std::string> command;
};

// Keeps a record small for programs with millions of range instances; summaries still cover
// every instance.
constexpr std::size_t durations_kept = 10000;
constexpr std::size_t series_points_kept = 20000;

// Where the injection library lives: $CEILING_INJECT_NVTX, else beside the ceiling binary
// (build tree), else ../lib/ceiling/ (installed).
std::optional<fs::path> find_inject_library() {
    if (const char* e = std::getenv("CEILING_INJECT_NVTX"); e && *e) return fs::path(e);
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return std::nullopt;
    for (const fs::path& candidate : {exe.parent_path() / "libceiling_inject_nvtx.so",
                                      exe.parent_path() / "../lib/ceiling/libceiling_inject_nvtx.so"})
        if (fs::exists(candidate, ec)) return fs::canonical(candidate, ec);
    return std::nullopt;
}

// Captures go to tmpfs when there is one: the injected program writes ~6 MB/s at 100k
// ranges/s, which should not become disk I/O of the measured program.
fs::path make_capture_dir() {
    std::vector<fs::path> bases;
    if (const char* d = std::getenv("CEILING_TMPDIR"); d && *d) bases.emplace_back(d);
    bases.emplace_back("/dev/shm");
    if (const char* d = std::getenv("TMPDIR"); d && *d) bases.emplace_back(d);
    bases.emplace_back("/tmp");
    for (const auto& base : bases) {
        std::string tmpl = (base / "ceiling-nvtx-XXXXXX").string();
        if (::mkdtemp(tmpl.data())) return tmpl;
    }
    throw MeasurementError("cannot create a temporary directory for NVTX regions (tried /dev/shm, $TMPDIR, /tmp)");
}

struct ExecutionData {
    Execution execution;
    measure::NvtxCapture capture;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
};

Measurement whole_run(const std::vector<const ExecutionData*>& timed, const std::string& name) {
    Measurement m;
    m.name = name;
    std::vector<double> walls;
    std::map<std::string, CounterValue> totals;
    std::vector<std::string> order;
    for (const auto* x : timed) {
        walls.push_back(x->execution.wall_s);
        for (const auto& c : x->execution.counters) {
            auto [it, inserted] = totals.try_emplace(c.name, c);
            if (inserted) {
                order.push_back(c.name);
                continue;
            }
            const bool peak = c.name.rfind("max_", 0) == 0 || c.name.rfind("peak_", 0) == 0;
            it->second.value = peak ? std::max(it->second.value, c.value) : it->second.value + c.value;
        }
    }
    m.durations_s = walls;
    if (!walls.empty()) m.duration_s = summarize(walls);
    for (const auto& n : order) m.counters.push_back(totals.at(n));
    return m;
}

// The trace: one process per execution (its pid), one track per thread, NVTX ranges as
// complete events, sampled series as counter tracks, relative to the first launch.
output::ChromeTrace build_trace(const std::vector<ExecutionData>& runs, const std::string& program) {
    output::ChromeTrace trace(runs.empty() ? 0 : runs.front().start_ns);
    constexpr int lane_base = 1'000'000'000;  // synthetic tids for ranges that need own lanes
    int sort = 0;
    for (const auto& x : runs) {
        const int pid = x.execution.pid.value_or(0);
        const std::string label = (x.execution.warmup ? "warm-up " : "run ") + std::to_string(x.execution.index + 1);
        trace.process(pid, program + " (" + label + ")", sort++);
        trace.thread(pid, pid, "main");
        trace.complete(pid, pid, label, "execution", x.start_ns, x.end_ns,
                       {{"end", x.execution.end.message}});
        std::map<int, std::vector<std::int64_t>> lanes;  // pid -> last end of each lane
        for (const auto& r : x.capture.instances) {
            nlohmann::json args = {{"path", r.path}};
            if (r.work) args["declared_ops"] = r.work->ops, args["declared_bytes"] = r.work->compulsory_bytes;
            if (r.unclosed) args["unclosed"] = true;
            int tid = r.tid;
            // Start/end ranges and non-default domains need not nest with the thread's
            // push/pop ranges: each gets the first lane where it overlaps nothing.
            if (!r.push_pop || !r.domain.empty()) {
                auto& l = lanes[r.pid];
                std::size_t k = 0;
                while (k < l.size() && l[k] > r.start_ns) ++k;
                if (k == l.size()) l.push_back(0);
                l[k] = r.end_ns;
                tid = lane_base + static_cast<int>(k);
                trace.thread(r.pid, tid, "NVTX start/end ranges " + std::to_string(k + 1));
            } else if (r.pid != pid) {
                trace.process(r.pid, program + " child " + std::to_string(r.pid), sort++);
            }
            trace.complete(r.pid, tid, r.name, "nvtx", r.start_ns, r.end_ns, std::move(args));
        }
        for (const auto& m : x.capture.marks) trace.instant(m.pid, m.tid, m.name, m.t_ns);
        for (const auto& [key, name] : x.capture.thread_names) trace.thread(key.first, key.second, name);
        output::add_time_series(trace, pid, x.start_ns, x.execution.time_series);
    }
    return trace;
}

// Budgets: --budget FILE first, then the flags over it (the engine's names and units).
std::optional<Budgets> parse_run_budgets(const RunArgs& a) {
    Budgets b;
    if (!a.budget_file.empty()) {
        std::ifstream in(a.budget_file);
        if (!in) throw UsageError("--budget " + a.budget_file + ": no such file or not readable");
        std::ostringstream text;
        text << in.rdbuf();
        try {
            b = parse_budgets(text.str());
        } catch (const std::exception& e) {
            throw UsageError("--budget " + a.budget_file + ": " + e.what());
        }
    }
    const std::pair<const char*, const std::string*> flags[] = {{"latency", &a.latency_budget},
                                                                {"memory", &a.memory_budget}};
    for (const auto& [name, text] : flags) {
        if (text->empty()) continue;
        try {
            set_budget(b, name, *text);
        } catch (const std::exception& e) {
            throw UsageError(std::string("--") + name + "-budget: " + e.what());
        }
    }
    if (b.empty()) return std::nullopt;
    return b;
}

int run_command(const RunArgs& a, const GlobalOptions& global) {
    if (a.command.empty()) throw UsageError("run: no program given (ceiling run [options] -- PROGRAM [ARGS...])");
    std::optional<std::regex> model;
    if (!a.model_regions.empty()) {
        try {
            model.emplace(a.model_regions, std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
            throw UsageError("--model-regions '" + a.model_regions + "': " + e.what());
        }
    }
    double interval_s = 0;
    try {
        interval_s = parse_duration_s(a.interval);
    } catch (const std::exception& e) {
        throw UsageError(std::string("--interval: ") + e.what());
    }
    if (interval_s > 0 && interval_s < 0.001) throw UsageError("--interval below 1ms would measure the sampler");
    const std::optional<Budgets> budgets = parse_run_budgets(a);

    RunRecord record;
    record.kind = RecordKind::run;
    record.command = a.command;
    measure::fill_record_context(record);
    const std::string output =
        a.output.empty() ? measure::default_record_name("ceiling-run", record.rank)
                         : measure::with_rank(a.output, record.rank);
    const std::string trace_path = a.trace.empty() ? "" : measure::with_rank(a.trace, record.rank);
    // An unwritable output fails now, not after the program ran for an hour.
    for (const auto& p : {output, trace_path}) {
        if (p.empty()) continue;
        try {
            output::check_writable(p);
        } catch (const std::exception& e) {
            throw MeasurementError(e.what());
        }
    }

    const char* path_env = std::getenv("PATH");
    const auto program = measure::resolve_program(a.command[0], path_env ? path_env : "/usr/bin:/bin");
    if (program.status != 0) throw Failure(program.status, program.error);
    record.executable = fs::absolute(program.path).string();

    const fs::path profile_path = a.profile.empty() ? store::default_profile_path() : fs::path(a.profile);
    if (!a.profile.empty()) record.machine_profile = store::load_profile(profile_path);
    else record.machine_profile = store::load_profile_if_present(profile_path);
    if (record.machine_profile) record.machine_profile_path = fs::absolute(profile_path).string();
    else record.notes.push_back("no machine profile at " + profile_path.string() +
                                ": run `ceiling machine` so runs can be judged against the roofs");

    record.options.repeat = a.repeat;
    record.options.warmup = a.warmup;
    if (interval_s > 0) record.options.interval_s = interval_s;
    if (model) record.options.model_regions = a.model_regions;
    record.budgets = budgets;

    measure::LaunchSpec spec;
    spec.executable = program.path;
    spec.argv = a.command;
    const auto inject = find_inject_library();
    fs::path capture_base;
    if (inject) {
        capture_base = make_capture_dir();
        if (const char* existing = std::getenv("NVTX_INJECTION64_PATH"); existing && *existing)
            record.notes.push_back(std::string("NVTX_INJECTION64_PATH=") + existing +
                                   " was replaced by ceiling's for this run");
    } else {
        record.notes.push_back("NVTX regions not recorded: libceiling_inject_nvtx.so not found beside "
                               "the ceiling binary (set CEILING_INJECT_NVTX)");
    }
    if (!measure::become_subreaper())
        record.notes.push_back("descendants that outlive their parent are not counted (no subreaper)");

    std::vector<ExecutionData> runs;
    const int total = a.warmup + a.repeat;
    {
        measure::SignalForwarding forwarding;
        for (int i = 0; i < total && !forwarding.received(); ++i) {
            ExecutionData x;
            x.execution.index = i;
            x.execution.warmup = i < a.warmup;
            fs::path capture_dir;
            if (inject) {
                capture_dir = capture_base / ("exec-" + std::to_string(i));
                fs::create_directories(capture_dir);
                spec.set_env = {{"NVTX_INJECTION64_PATH", inject->string()},
                                {inject::nvtx_dir_env, capture_dir.string()}};
            }
            std::unique_ptr<measure::Sampler> sampler;
            std::vector<measure::TreeSample> samples;
            // perf_event software events on the child from its exec, inherited by every
            // thread and process it starts: exact CPU time where /proc counts ticks.
            std::optional<collectors::PerfEventSet> counters;
            spec.before_exec = [&](pid_t pid) {
                counters.emplace(collectors::PerfEventSet::open(collectors::CountTarget::exec_child(pid),
                                                                collectors::software_counter_specs()));
            };
            auto cpu_seconds = [&]() -> std::optional<double> {
                return counters ? counters->read().value("task_clock_s") : std::nullopt;
            };
            measure::ChildResult res;
            try {
                res = measure::run_child(
                    spec,
                    [&](pid_t pid) {
                        if (interval_s > 0) sampler = std::make_unique<measure::Sampler>(pid, interval_s, cpu_seconds);
                    },
                    [&] {
                        if (sampler) samples = sampler->stop();
                    });
            } catch (const measure::LaunchFailure& f) {
                if (!capture_base.empty()) fs::remove_all(capture_base);
                throw Failure(f.status, f.what());
            }
            x.start_ns = res.start_ns;
            x.end_ns = res.end_ns;
            x.execution.pid = res.pid;
            x.execution.wall_s = static_cast<double>(res.end_ns - res.start_ns) * 1e-9;
            x.execution.end = res.end;
            x.execution.counters =
                measure::to_counter_values(collectors::usage_readings(collectors::usage_from_rusage(res.usage)));
            if (counters) {
                const collectors::Readings readings = counters->read();
                const auto more = measure::to_counter_values(readings);
                x.execution.counters.insert(x.execution.counters.end(), more.begin(), more.end());
                for (const auto& w : readings.warnings)
                    if (std::find(record.notes.begin(), record.notes.end(), w) == record.notes.end())
                        record.notes.push_back(w);
            }
            if (sampler && sampler->peak_rss_bytes() > 0) {
                // Sampled peaks of the whole process tree (rusage only knows the largest
                // single process).
                CounterValue peak;
                peak.name = "peak_tree_rss_bytes";
                peak.value = sampler->peak_rss_bytes();
                peak.unit = "bytes";
                x.execution.counters.push_back(peak);
                peak.name = "peak_threads";
                peak.value = sampler->peak_threads();
                peak.unit = "count";
                x.execution.counters.push_back(peak);
            }
            if (res.orphans_running)
                record.notes.push_back("the program left processes running; their work after it ended is not counted");
            // perf's task-clock is exact; /proc's CPU ticks need a wider window to read as a rate.
            const bool exact_cpu = counters && counters->read().value("task_clock_s").has_value();
            x.execution.time_series = measure::series_from_samples(samples, res.start_ns, exact_cpu ? 0.0 : 0.05);
            measure::decimate(x.execution.time_series, series_points_kept);
            if (inject) {
                x.capture = measure::read_nvtx_capture(capture_dir, res.end_ns);
                fs::remove_all(capture_dir);
                for (const auto& w : x.capture.warnings)
                    if (std::find(record.notes.begin(), record.notes.end(), w) == record.notes.end())
                        record.notes.push_back(w);
            }
            const bool ok = x.execution.end.succeeded();
            runs.push_back(std::move(x));
            if (!ok) break;  // a failing program is not run again: its record says how it ended
        }
        if (const auto sig = forwarding.received()) {
            record.partial = true;
            record.partial_reason = "interrupted by " + measure::signal_name(*sig) + " after " +
                                    std::to_string(runs.size()) + " of " + std::to_string(total) + " executions";
        }
    }
    if (!capture_base.empty()) fs::remove_all(capture_base);
    if (!record.partial && static_cast<int>(runs.size()) < total) {
        record.partial = true;
        record.partial_reason = "stopped after execution " + std::to_string(runs.size()) + " of " +
                                std::to_string(total) + ": the program " + runs.back().execution.end.message;
    }

    record.end = runs.back().execution.end;
    std::vector<const ExecutionData*> timed;
    std::vector<const measure::NvtxCapture*> captures;
    for (const auto& x : runs) {
        record.executions.push_back(x.execution);
        if (x.execution.warmup) continue;
        timed.push_back(&x);
        captures.push_back(&x.capture);
    }
    record.whole = whole_run(timed, fs::path(a.command[0]).filename().string());
    record.regions = measure::aggregate_regions(captures, model, durations_kept);
    if (!record.regions.empty()) {
        for (const auto* c : captures) {
            record.region_time_s_per_execution.push_back(
                measure::covered_s(*c, [](const measure::RegionInstance&) { return true; }));
            if (model)
                record.model_time_s_per_execution.push_back(measure::covered_s(
                    *c, [&](const measure::RegionInstance& r) { return measure::is_model_region(*model, r.name, r.path); }));
        }
    }
    measure::judge_record(record);

    int status = record.end.shell_status();
    try {
        store::save_run_record(record, output);
        if (!trace_path.empty())
            output::write_file_atomically(trace_path,
                                          build_trace(runs, fs::path(a.command[0]).filename().string()).dump());
    } catch (const std::exception& e) {
        spdlog::error("{}", e.what());
        return status != 0 ? status : exit_failed;
    }
    if (!global.quiet) {
        std::cerr << "\n";
        output::render_run_summary(record, std::cerr);
        std::cerr << "record: " << output << (trace_path.empty() ? "" : "  trace: " + trace_path) << "\n";
    }
    if (status == 0 && a.fail_on_budget && measure::budgets_met(record) == false) return exit_budget_missed;
    return status;
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
    app->add_option("--repeat", args->repeat, "Timed executions (p50/p99 of wall time and of each region)")
        ->check(CLI::Range(1, 100000));
    app->add_option("--warmup", args->warmup, "Executions before the timed ones, not in the statistics")
        ->check(CLI::Range(0, 100000));
    app->add_option("--interval", args->interval, "Sampling interval (e.g. 10ms; 0 turns sampling off)")
        ->capture_default_str();
    app->add_option("--latency-budget", args->latency_budget, "Wall-time budget per execution, e.g. 12ms");
    app->add_option("--memory-budget", args->memory_budget, "Peak resident memory budget, e.g. 40MB");
    app->add_option("--budget", args->budget_file, "Budgets from a JSON file");
    app->add_flag("--fail-on-budget", args->fail_on_budget,
                  "Exit with status 3 when the program succeeded but a budget was missed (for CI)");
    app->add_option("--model-regions", args->model_regions,
                    "Regex for the NVTX regions that are the model (e.g. 'forward|backward')");
    app->add_option("--output,-o", args->output,
                    "Run record to write (default: ceiling-run-DATE-TIME.json; .rankN added under mpirun/srun)");
    app->add_option("--trace", args->trace, "Also write a Chrome/Perfetto trace to this file");
    app->add_option("--profile", args->profile, "Machine profile to judge against (default: the saved one)");
    app->add_option("command", args->command, "PROGRAM [ARGS...], best after --");
    // Everything from the program's name on is the program's, options included (CLI11's
    // prefix_command would still read options after it).
    app->positionals_at_end();
    return {app, [args, &global]() -> int { return run_command(*args, global); }};
}

}  // namespace ceiling::cli
