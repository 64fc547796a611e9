#include "agent/run/run_program.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <string_view>

#include "agent/inject/nvtx_event_format.hpp"
#include "agent/run/child_signals.hpp"
#include "agent/run/gpu_regions.hpp"
#include "agent/run/launch.hpp"
#include "agent/run/phase_timer.hpp"
#include "agent/machine/pmu_readings.hpp"
#include "agent/run/region_counters.hpp"
#include "agent/run/sampler.hpp"
#include "agent/store/profile_store.hpp"
#include "collectors/cupti/gpu_probe.hpp"
#include "collectors/perf_events.hpp"
#include "collectors/process_accounting.hpp"
#include "collectors/software_events.hpp"

namespace ceiling::measure {

namespace fs = std::filesystem;

namespace {

// Where the injection library lives: $CEILING_INJECT_NVTX, else beside the ceiling binary
// (build tree), else ../lib/ceiling/ (installed).
std::optional<fs::path> find_inject_library() {
    if (const char* e = std::getenv("CEILING_INJECT_NVTX"); e && *e) return fs::path(e);
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return std::nullopt;
    for (const fs::path& candidate :
         {exe.parent_path() / "libceiling_inject_nvtx.so",
          exe.parent_path() / "../lib/ceiling/libceiling_inject_nvtx.so"})
        if (fs::exists(candidate, ec)) return fs::canonical(candidate, ec);
    return std::nullopt;
}

constexpr std::string_view capture_prefix = "ceiling-run-";

// A capture directory is locked (flock) by the ceiling that uses it while it runs. One left
// unlocked was left by a ceiling killed with SIGKILL, whose cleanup never ran, and holds
// what its program wrote (on a 64 MiB /dev/shm, most of it): removed by the next run. Only
// our own, and a minute old: one just made is locked a moment after mkdtemp.
void remove_stale_capture_dirs(const fs::path& base) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(base, ec)) {
        const std::string name = e.path().filename().string();
        struct stat st {};
        if (!name.starts_with(capture_prefix) || name.size() != capture_prefix.size() + 6 ||
            ::lstat(e.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
            ::time(nullptr) - st.st_mtime < 60)
            continue;
        const int fd = ::open(e.path().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) continue;
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0) fs::remove_all(e.path(), ec);
        ::close(fd);
    }
}

// Removes the capture directory however the loop ends (a launch failure throws), and holds
// its lock until then.
struct CaptureDir {
    fs::path dir;
    int lock = -1;
    ~CaptureDir() {
        std::error_code ec;
        if (!dir.empty()) fs::remove_all(dir, ec);
        if (lock >= 0) ::close(lock);
    }
};

// Captures (NVTX and CUDA) go to tmpfs when there is one: the injected program writes
// ~6 MB/s at 100k ranges/s, which should not become disk I/O of the measured program.
void make_capture_dir(CaptureDir& made) {
    std::vector<fs::path> bases;
    if (const char* d = std::getenv("CEILING_TMPDIR"); d && *d) bases.emplace_back(d);
    bases.emplace_back("/dev/shm");
    if (const char* d = std::getenv("TMPDIR"); d && *d) bases.emplace_back(d);
    bases.emplace_back("/tmp");
    for (const auto& base : bases) {
        remove_stale_capture_dirs(base);
        std::string tmpl = (base / (std::string(capture_prefix) + "XXXXXX")).string();
        if (!::mkdtemp(tmpl.data())) continue;
        made.dir = tmpl;
        made.lock = ::open(tmpl.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (made.lock >= 0) ::flock(made.lock, LOCK_EX | LOCK_NB);
        return;
    }
    throw std::runtime_error(
        "cannot create a temporary directory for NVTX and CUDA captures (tried /dev/shm, $TMPDIR, "
        "/tmp)");
}

void add_note_once(std::vector<std::string>& notes, const std::string& note) {
    if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
}

// Why a program under the CUDA injection library left no activity file, from the driver's
// /proc entries (gpu_presence: initialising CUDA to ask would cost a CPU-only program's run
// 0.1-2 s on a GPU host). `ceiling doctor` has the full probe.
std::string no_gpu_activity_reason() {
    const auto gpus = collectors::gpu::gpu_presence();
    const std::string prefix = "GPU activity: none recorded: ";
    if (!gpus.kernel_module)
        return std::string(no_cuda_driver_note) + " (no NVIDIA kernel module: /proc/driver/nvidia/version absent)";
    if (gpus.gpus == 0) return prefix + "the NVIDIA driver lists no GPU (/proc/driver/nvidia/gpus is empty)";
    return prefix + "the program did not initialise CUDA (`ceiling doctor` checks the driver)";
}

// What the CUDA side of one execution left: its counters, notes, and operations placed
// under the execution's NVTX ranges.
// `absent`: why no activity was seen, asked of the driver once per run.
void read_gpu_side(ExecutionData& x, const fs::path& cuda_dir, ProgramRun& run,
                   std::optional<std::string>& absent) {
    x.gpu = read_gpu_run(cuda_dir, collectors::gpu::Interval{x.start_ns, x.end_ns});
    for (const auto& n : x.gpu.notes) add_note_once(run.notes, n);
    if (x.gpu.processes.empty()) {
        if (!absent) absent = no_gpu_activity_reason();
        add_note_once(run.notes, *absent);
    }
    const auto counters = gpu_counters(x.gpu);
    x.execution.counters.insert(x.execution.counters.end(), counters.begin(), counters.end());
    x.gpu_ops = place_gpu_operations(x.gpu, x.capture);
    const bool unplaced = std::any_of(x.gpu_ops.begin(), x.gpu_ops.end(),
                                      [](const GpuOperation& op) { return !op.launched_by; });
    if (unplaced && !x.capture.instances.empty())
        add_note_once(run.notes,
                      "some GPU operations are not nested under NVTX ranges: the API call that "
                      "launched them was not recorded");
}

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
            it->second.value =
                peak ? std::max(it->second.value, c.value) : it->second.value + c.value;
        }
    }
    m.durations_s = walls;
    if (!walls.empty()) m.duration_s = summarize(walls);
    for (const auto& n : order) m.counters.push_back(totals.at(n));
    return m;
}

// What every execution of one run shares.
struct RunContext {
    const RunPlan& plan;
    LaunchSpec& spec;
    const std::optional<fs::path>& inject;
    const fs::path& capture_base;
    const RegionCounting& counting;
    ProgramRun& run;
    std::optional<std::string>& gpu_absent;  // why no GPU activity, asked once per run
};

// One execution's capture directories (empty where that capture is off).
struct CaptureDirs {
    fs::path capture_dir, cuda_dir;
};

// Makes execution `index`'s capture directories and points the injected libraries at them.
CaptureDirs point_captures(const RunContext& c, int index, bool cuda, bool gpu_count) {
    CaptureDirs dirs;
    c.spec.set_env.clear();
    if (c.inject) {
        dirs.capture_dir = c.capture_base / ("exec-" + std::to_string(index));
        fs::create_directories(dirs.capture_dir);
        c.spec.set_env = {{"NVTX_INJECTION64_PATH", c.inject->string()},
                          {inject::nvtx_dir_env, dirs.capture_dir.string()}};
    }
    if (cuda) {
        dirs.cuda_dir = c.capture_base / ("cuda-" + std::to_string(index));
        fs::create_directories(dirs.cuda_dir);
        for (const auto& kv : cuda_injection_environment(dirs.cuda_dir, gpu_count).variables)
            c.spec.set_env.push_back(kv);
    }
    return dirs;
}

// What watches one execution. It stays where it was made: the launch's callbacks and the
// sampler's CPU reader refer to its members.
struct Observers {
    std::unique_ptr<Sampler> sampler;
    std::vector<TreeSample> samples;
    // perf_event software events on the child from its exec, inherited by every thread and
    // process it starts: exact CPU time where /proc counts ticks.
    std::optional<collectors::PerfEventSet> counters;
    std::optional<RegionCounterSampler>
        region_counts;  // PMU counts for regions (region_counters.hpp)
};

// Launches the program with its observers: the counters opened on the child before its exec,
// the samplers started once it runs and the /proc sampler stopped when it ends.
ChildResult launch_observed(Observers& o, const RunPlan& plan, LaunchSpec& spec,
                            const RegionCounting& counting) {
    std::optional<double> tasks_before;
    spec.before_exec = [&](pid_t pid) {
        // Before the program is released: the threads it starts at once count too.
        tasks_before = Sampler::host_tasks_started_now();
        o.counters.emplace(collectors::PerfEventSet::open(collectors::CountTarget::exec_child(pid),
                                                          collectors::software_counter_specs()));
        if (counting.any())
            o.region_counts.emplace(pid, plan.interval_s > 0 ? plan.interval_s : 0.01);
    };
    auto cpu_seconds = [&]() -> std::optional<double> {
        return o.counters ? o.counters->read_value("task_clock_s") : std::nullopt;
    };
    return run_child(
        spec,
        [&](pid_t pid) {
            if (o.region_counts) o.region_counts->start();
            if (plan.interval_s > 0) {
                o.sampler = std::make_unique<Sampler>(pid, plan.interval_s, cpu_seconds);
                o.sampler->count_tasks_from(tasks_before);
            }
        },
        [&] {
            if (o.sampler) o.samples = o.sampler->stop();
        });
}

// Which of its processes did the work, where it ran more than one.
void add_process_uses(ExecutionData& x) {
    if (x.processes.size() <= 1) return;
    for (const auto& p : x.processes)
        x.execution.processes.push_back(
            {p.pid, p.name, p.cpu_s, static_cast<double>(p.last_ns - p.first_ns) * 1e-9});
    std::stable_sort(x.execution.processes.begin(), x.execution.processes.end(),
                     [](const ProcessUse& a, const ProcessUse& b) { return a.cpu_s > b.cpu_s; });
    if (x.execution.processes.size() > max_process_uses)
        x.execution.processes.resize(max_process_uses);
}

void add_software_counters(ExecutionData& x, collectors::PerfEventSet& counters,
                           std::vector<std::string>& notes) {
    const collectors::Readings readings = counters.read();
    const auto more = to_counter_values(readings);
    x.execution.counters.insert(x.execution.counters.end(), more.begin(), more.end());
    for (const auto& w : readings.warnings) add_note_once(notes, w);
}

// A launcher that starts the work in the background and returns (`cmd &` in a
// script, a daemon) ends before it: name what still runs, and the way to measure it.
std::string orphans_note(const ChildResult& res) {
    std::string named;
    for (std::size_t i = 0; i < res.orphans_named.size() && i < 3; ++i)
        named += (i ? ", " : ": ") + res.orphans_named[i];
    if (res.orphans_named.size() > 3)
        named += " and " + std::to_string(res.orphans_named.size() - 3) + " more";
    return "the program left processes running" + named +
           "; their work after it ended is not counted: have it wait for them "
           "(`wait` in a script, exec the worker) or run ceiling on the worker";
}

// ceiling's own share of the program's time, said beside it (run_summary.cpp).
void add_nvtx_cost_counters(ExecutionData& x) {
    if (x.capture.recorded_events == 0) return;
    x.execution.counters.push_back({"nvtx_events", static_cast<double>(x.capture.recorded_events),
                                    "count", Source::software, std::nullopt, false});
    if (x.capture.recording_s)
        x.execution.counters.push_back(
            {"nvtx_recording_s", *x.capture.recording_s, "s", Source::timing, std::nullopt, false});
    if (x.capture.peak_rss_bytes)
        x.execution.counters.push_back({"peak_rss_at_exit_bytes", *x.capture.peak_rss_bytes,
                                        "bytes", Source::software, std::nullopt, false});
    if (x.capture.timing_cost_s)
        x.execution.counters.push_back({"nvtx_timing_cost_s", *x.capture.timing_cost_s, "s",
                                        Source::timing, std::nullopt, false});
    if (x.capture.range_cost_s)
        x.execution.counters.push_back({"nvtx_range_cost_s", *x.capture.range_cost_s, "s",
                                        Source::timing, std::nullopt, false});
}

// What the /proc sampler saw, given to the range instances open when it saw it. `process_cpu`:
// the program's exact CPU time (one process: then it also tells how many cores each region
// held at once), or null.
void attribute_samples(NvtxCapture& capture, const Sampler& sampler,
                       const std::vector<TreeSample>& samples,
                       const std::vector<TimelinePoint>* process_cpu) {
    const double cpus = std::max(1u, std::thread::hardware_concurrency());
    std::vector<TimelinePoint> read, written, system, storage_wait;
    for (const auto& s : samples) {
        storage_wait.push_back({s.t_ns, storage_waited_s(s)});
        if (s.io.storage_read_bytes) read.push_back({s.t_ns, *s.io.storage_read_bytes});
        if (s.io.storage_write_bytes) written.push_back({s.t_ns, *s.io.storage_write_bytes});
        system.push_back({s.t_ns, s.system_s});
    }
    const auto below = sampler.descendant_cpu();
    const auto queued = sampler.process_queued();
    const auto host = sampler.host_cpu();
    const SamplePlacement placement({
        .thread_windows = &sampler.peaks().thread_windows,
        .sampled = {{&read, &RegionInstance::storage_read_bytes, std::nullopt},
                    {&written, &RegionInstance::storage_write_bytes, std::nullopt},
                    {&system, &RegionInstance::system_cpu_s, cpus},
                    {&storage_wait, &RegionInstance::storage_wait_s, std::nullopt}},
        .descendant_cpu = &below,
        .descendant_cores = cpus,
        // Its threads' queue time grows at most as fast as they are many.
        .queued = &queued,
        .queued_threads = std::max(cpus, sampler.peaks().threads.value_or(cpus)),
        .host_cpu = &host,
        .host_cores = cpus,
        .process_cpu = process_cpu,
    });
    place_samples(capture, placement);
}

// Reads the NVTX capture while the program runs, every 50 ms, on CPU time nothing else
// wants (SCHED_IDLE: every other runnable thread, the program's or anyone's, goes first), so
// that after it ends only its last moments' events are left: reading 200 000 ranges took
// ~45 ms after the program, a twentieth of a 2 s run. On a machine the program keeps busy
// the passes wait, and finish reads what they left.
class LiveReading {
  public:
    explicit LiveReading(NvtxCaptureReader* reader) {
        if (reader)
            thread_ = std::jthread([this, reader](std::stop_token stop) { loop(*reader, stop); });
    }
    // Stops the passes (one under way ends, at an ordinary priority: the host may have no
    // idle CPU); then rethrows what a pass threw, as reading after the program would have.
    void stop() {
        if (!thread_.joinable()) return;
        sched_param normal{};
        pthread_setschedparam(thread_.native_handle(), SCHED_OTHER, &normal);
        thread_.request_stop();
        thread_.join();
        if (error_) std::rethrow_exception(error_);
    }
    LiveReading(const LiveReading&) = delete;
    LiveReading& operator=(const LiveReading&) = delete;

  private:
    void loop(NvtxCaptureReader& reader, std::stop_token stop) {
        sched_param idle{};
        pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);  // else it reads at once
        own_helper_tid.store(::gettid(), std::memory_order_relaxed);
        struct Gone {
            ~Gone() { own_helper_tid.store(0, std::memory_order_relaxed); }
        } gone;
        std::mutex m;
        std::condition_variable_any wake;
        std::unique_lock lock(m);
        try {
            for (;;) {
                wake.wait_for(lock, stop, std::chrono::milliseconds(50), [] { return false; });
                if (stop.stop_requested()) return;
                reader.read_available();
            }
        } catch (...) {
            error_ = std::current_exception();
        }
    }

    std::exception_ptr error_;
    // Last: stopped and joined (std::jthread's destructor, where stop() was not reached)
    // before the members it uses go.
    std::jthread thread_;
};

// The NVTX side of one execution: its capture (read partly while it ran), ceiling's cost of
// recording it, and what the samples add to its ranges. `exact_cpu`: the samples' CPU time
// is perf's task-clock.
void read_nvtx_side(ExecutionData& x, const Observers& o, NvtxCaptureReader& reader,
                    const fs::path& capture_dir, bool exact_cpu, std::vector<std::string>& notes) {
    {
        const PhaseTimer t("reading the NVTX capture");
        const std::size_t before = reader.instances_read();
        x.capture = reader.finish(x.end_ns);
        spdlog::debug("{} of {} NVTX range instances were read while the program ran", before,
                      x.capture.instances.size());
    }
    add_nvtx_cost_counters(x);
    // Work a region's process handed to processes it started: their CPU time beside it.
    if (o.sampler) {
        const PhaseTimer t("placing the sampler's figures on the ranges");
        // The sampler's exact CPU time is the process's own only when the program is one
        // process: then it also tells how many cores each region held at once.
        std::vector<TimelinePoint> cpu;
        if (exact_cpu && x.processes.size() == 1)
            for (const auto& s : o.samples) cpu.push_back({s.t_ns, s.cpu_s});
        attribute_samples(x.capture, *o.sampler, o.samples, cpu.empty() ? nullptr : &cpu);
    }
    fs::remove_all(capture_dir);
    for (const auto& w : x.capture.warnings) add_note_once(notes, w);
}

// The counting execution's per-kernel counts, attached to its operations.
void attach_counts(ExecutionData& x, std::vector<std::string>& notes) {
    for (auto& n : attach_kernel_counts(x.gpu, x.gpu_ops)) add_note_once(notes, n);
    const bool none = std::none_of(x.gpu_ops.begin(), x.gpu_ops.end(),
                                   [](const GpuOperation& op) { return op.counted; });
    if (none && !x.gpu_ops.empty())
        add_note_once(notes, "--gpu-counters: no kernel was counted (the GPU notes above say why)");
}

// One execution: launch, count, sample, read the capture.
// gpu_count: the GPU counting execution (kernel replay, per-kernel counters; not timed).
ExecutionData run_once(const RunContext& c, int index, bool cuda, bool gpu_count = false) {
    ExecutionData x;
    x.execution.index = index;
    x.execution.warmup = index < c.plan.warmup;
    x.execution.counting = gpu_count;
    const CaptureDirs dirs = point_captures(c, index, cuda, gpu_count);
    Observers o;
    std::optional<NvtxCaptureReader> capture;
    if (c.inject) capture.emplace(dirs.capture_dir);
    LiveReading live(capture ? &*capture : nullptr);
    const ChildResult res = launch_observed(o, c.plan, c.spec, c.counting);
    live.stop();
    if (o.sampler) x.processes = o.sampler->processes();
    add_process_uses(x);
    x.start_ns = res.start_ns;
    x.end_ns = res.end_ns;
    x.execution.pid = res.pid;
    x.execution.wall_s = static_cast<double>(res.end_ns - res.start_ns) * 1e-9;
    x.execution.end = res.end;
    // rusage, final I/O, the program's own peak memory (never ceiling's) and the host's load.
    x.execution.counters =
        process_counters(res, o.sampler ? &o.sampler->peaks() : nullptr, c.run.notes);
    if (o.counters) add_software_counters(x, *o.counters, c.run.notes);
    if (res.orphans_running) add_note_once(c.run.notes, orphans_note(res));
    // perf's task-clock is exact; /proc's CPU ticks need a wider window to read as a rate.
    const bool exact_cpu = o.counters && o.counters->read().value("task_clock_s").has_value();
    x.execution.time_series = series_from_samples(o.samples, res.start_ns, exact_cpu ? 0.0 : 0.05);
    decimate(x.execution.time_series, c.plan.series_points_kept);
    if (capture) read_nvtx_side(x, o, *capture, dirs.capture_dir, exact_cpu, c.run.notes);
    if (o.region_counts) {
        finish_region_counting(*o.region_counts, c.counting, x.capture, x.execution.counters,
                               c.run.notes);
    }
    if (cuda) {
        read_gpu_side(x, dirs.cuda_dir, c.run, c.gpu_absent);
        fs::remove_all(dirs.cuda_dir);
        if (gpu_count) attach_counts(x, c.run.notes);
    }
    return x;
}

}  // namespace

std::string program_name(const RunPlan& plan) {
    return plan.command.empty() ? std::string() : fs::path(plan.command[0]).filename().string();
}

ProgramRun run_program(const RunPlan& plan) {
    ProgramRun run;
    LaunchSpec spec;
    spec.executable = plan.executable;
    spec.argv = plan.command;
    const auto inject = find_inject_library();
    // GPU activity through the CUDA injection library, when this build has one; a program
    // that never initialises CUDA never loads it.
    const CudaInjection cuda = cuda_injection_environment("", false);
    CaptureDir capture_base;
    if (inject || cuda.unavailable.empty()) make_capture_dir(capture_base);
    if (inject) {
        if (const char* existing = std::getenv("NVTX_INJECTION64_PATH"); existing && *existing)
            run.notes.push_back(std::string("NVTX_INJECTION64_PATH=") + existing +
                                " was replaced by ceiling's for this run");
    } else {
        run.notes.push_back(
            "NVTX regions not recorded: libceiling_inject_nvtx.so not found beside "
            "the ceiling binary (set CEILING_INJECT_NVTX)");
    }
    if (!cuda.unavailable.empty()) {
        run.notes.push_back(cuda.unavailable);
    } else if (const char* existing = std::getenv(inject::cuda_inject_env); existing && *existing) {
        run.notes.push_back(std::string(inject::cuda_inject_env) + "=" + existing +
                            " was replaced by ceiling's for this run");
    }
    if (!become_subreaper())
        run.notes.push_back("descendants that outlive their parent are not counted (no subreaper)");

    const int total = plan.warmup + plan.repeat;
    std::optional<std::string> gpu_absent;
    PmuSelfValidationOptions validation;
    validation.cache = store::pmu_validation_cache_path();
    const RegionCounting counting = plan_region_counting({}, validation);
    if (!counting.why_not.empty()) run.notes.push_back(counting.why_not);
    const RunContext context{plan, spec, inject, capture_base.dir, counting, run, gpu_absent};
    {
        SignalForwarding forwarding;
        for (int i = 0; i < total && !forwarding.received(); ++i) {
            run.executions.push_back(run_once(context, i, cuda.unavailable.empty()));
            if (plan.on_execution) plan.on_execution(i + 1);
            // A failing program is not run again: its record says how it ended.
            if (!run.executions.back().execution.end.succeeded()) break;
        }
        // One more execution, after the timed ones, whose kernels the GPU counters count.
        const bool all_ran = static_cast<int>(run.executions.size()) == total &&
                             run.executions.back().execution.end.succeeded();
        const bool kernels_ran =
            std::any_of(run.executions.begin(), run.executions.end(), [](const ExecutionData& x) {
                return std::any_of(x.gpu_ops.begin(), x.gpu_ops.end(), [](const GpuOperation& op) {
                    return op.kind == GpuOpKind::kernel;
                });
            });
        if (plan.gpu_counters && !cuda.unavailable.empty()) {
            add_note_once(run.notes, "--gpu-counters: no GPU kernel counted: " + cuda.unavailable);
        } else if (plan.gpu_counters && !kernels_ran) {
            add_note_once(run.notes,
                          "--gpu-counters: no GPU kernel ran in the timed executions: "
                          "nothing to count, the program was not run again");
        } else if (plan.gpu_counters && all_ran && !forwarding.received()) {
            run.executions.push_back(run_once(context, total, true, true));
            if (plan.on_execution) plan.on_execution(total + 1);
        } else if (plan.gpu_counters && !all_ran) {
            add_note_once(run.notes,
                          "--gpu-counters: no GPU kernel counted: the timed executions "
                          "did not all complete, so the program was not run again");
        }
        if (const auto sig = forwarding.received()) {
            run.partial = true;
            run.interrupted_by = *sig;
            run.partial_reason = "interrupted by " + signal_name(*sig) + " after " +
                                 std::to_string(run.executions.size()) + " of " +
                                 std::to_string(total) + " executions";
        }
    }
    if (run.executions.empty()) {
        // Interrupted before the first launch: nothing ran, and the record says so.
        run.end.kind = EndKind::not_started;
        run.end.message = "not started: " + run.partial_reason;
        return run;
    }
    // How the program ended in its last timed execution (the counting one is not its run).
    const auto last = std::find_if(run.executions.rbegin(), run.executions.rend(),
                                   [](const ExecutionData& x) { return !x.execution.counting; });
    run.end = last->execution.end;
    if (run.executions.back().execution.counting &&
        !run.executions.back().execution.end.succeeded())
        add_note_once(run.notes, "--gpu-counters: the counting execution " +
                                     run.executions.back().execution.end.message +
                                     "; its counts are what it reached");
    if (!run.partial && static_cast<int>(run.executions.size()) < total) {
        run.partial = true;
        run.partial_reason = "stopped after execution " + std::to_string(run.executions.size()) +
                             " of " + std::to_string(total) + ": the program " + run.end.message;
    }
    return run;
}

void add_to_record(const ProgramRun& run, const RunPlan& plan, RunRecord& record) {
    record.notes.insert(record.notes.end(), run.notes.begin(), run.notes.end());
    record.partial = run.partial;
    record.partial_reason = run.partial_reason;
    record.end = run.end;
    std::vector<const ExecutionData*> timed;
    std::vector<const NvtxCapture*> captures;
    std::optional<GpuExecution> counted;
    for (const auto& x : run.executions) {
        record.executions.push_back(x.execution);
        if (x.execution.counting) counted = GpuExecution{&x.gpu_ops, &x.capture};
        if (x.execution.warmup || x.execution.counting) continue;
        timed.push_back(&x);
        captures.push_back(&x.capture);
    }
    record.whole = whole_run(timed, program_name(plan));
    record.regions = aggregate_regions(captures, plan.model, plan.durations_kept);
    std::set<std::string> range_paths;
    std::vector<GpuExecution> gpu;
    for (const auto& r : record.regions) range_paths.insert(r.path);
    for (const auto* x : timed) gpu.push_back({&x->gpu_ops, &x->capture});
    auto gpu_regions =
        aggregate_gpu_regions(gpu, plan.model, range_paths, plan.durations_kept, counted);
    for (auto& n : gpu_regions.notes) record.notes.push_back(std::move(n));
    if (!record.regions.empty()) {
        for (const auto* x : timed) {
            const NvtxCapture& c = x->capture;
            // An execution that opened no region spent all of it before one.
            std::pair ends{x->end_ns, x->end_ns};
            record.region_time_s_per_execution.push_back(
                covered_s(c, [](const RegionInstance&) { return true; }, &ends));
            record.before_regions_s_per_execution.push_back(
                static_cast<double>(std::max<std::int64_t>(0, ends.first - x->start_ns)) * 1e-9);
            record.after_regions_s_per_execution.push_back(
                static_cast<double>(std::max<std::int64_t>(0, x->end_ns - ends.second)) * 1e-9);
            if (plan.model)
                record.model_time_s_per_execution.push_back(
                    covered_s(c, [&](const RegionInstance& r) {
                        return is_model_region(*plan.model, r.name, r.path);
                    }));
        }
    }
    std::move(gpu_regions.regions.begin(), gpu_regions.regions.end(),
              std::back_inserter(record.regions));
}

}  // namespace ceiling::measure
