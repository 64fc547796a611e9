#include "agent/measure/gpu_run.hpp"

#include <algorithm>
#include <cstdlib>

#include <unistd.h>

#include "collectors/cupti/gpu_probe.hpp"

namespace ceiling::measure {
namespace {

namespace g = collectors::gpu;
using nlohmann::json;

constexpr int host_wait_pid = 1'000'000;  // a trace pid no real process uses

double us(std::int64_t ns, std::int64_t t0) { return static_cast<double>(ns - t0) * 1e-3; }

}  // namespace

std::filesystem::path default_cuda_inject_library() {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return (ec ? std::filesystem::path(".") : exe.parent_path()) / "libceiling_inject_cuda.so";
}

CudaInjection cuda_injection_environment(const std::filesystem::path& dir, bool metrics,
                                         std::optional<std::filesystem::path> library) {
    CudaInjection c;
    const auto lib = library.value_or(default_cuda_inject_library());
    if (!g::built_with_cupti()) {
        c.unavailable = "not built with CUPTI: GPU activity is not collected";
        return c;
    }
    if (!std::filesystem::exists(lib)) {
        c.unavailable = "CUDA injection library not found at " + lib.string();
        return c;
    }
    c.variables[inject::cuda_inject_env] = lib.string();
    c.variables[inject::cuda_dir_env] = dir.string();
    if (metrics) c.variables[inject::cuda_metrics_env] = "1";
    return c;
}

GpuRun read_gpu_run(const std::filesystem::path& dir, std::optional<g::Interval> window) {
    GpuRun r;
    for (auto& f : inject::read_cuda_activity_dir(dir)) {
        ++r.processes;
        const auto who = "process " + std::to_string(f.pid);
        for (const auto& e : f.errors) r.notes.push_back("GPU (" + who + "): " + e);
        if (f.log.dropped_records)
            r.notes.push_back("GPU (" + who + "): CUPTI dropped " +
                              std::to_string(f.log.dropped_records) +
                              " activity records; the GPU timeline is incomplete");
        if (!f.complete)
            r.notes.push_back("GPU (" + who +
                              "): the program ended before the CUDA library could flush; activity "
                              "after its last completed buffer is missing");
        r.log.append(std::move(f.log));
        r.metrics.insert(r.metrics.end(), f.metrics.begin(), f.metrics.end());
    }
    g::TimelineOptions o;
    o.window = window;
    r.timeline = g::build_timeline(r.log, o);
    return r;
}

void apply_gpu_accounting(const GpuRun& gpu, ProcessAccounting& a) {
    if (gpu.log.empty()) return;
    a.device_wait_s = gpu.timeline.host_sync_wait_s;
    double copy = 0;
    for (const auto& d : gpu.timeline.devices) copy += d.copy_s;
    a.device_copy_s = copy;
}

std::vector<CounterValue> gpu_counters(const GpuRun& gpu) {
    std::vector<CounterValue> out;
    if (gpu.log.empty()) return out;
    auto add = [&](std::string name, double v, std::string unit) {
        CounterValue c;
        c.name = std::move(name);
        c.value = v;
        c.unit = std::move(unit);
        c.source = Source::cupti;
        out.push_back(std::move(c));
    };
    double busy = 0, idle = 0, kernel = 0;
    for (const auto& d : gpu.timeline.devices) {
        busy += d.busy_s;
        idle += d.idle_s;
        kernel += d.kernel_s;
    }
    add("gpu_busy_s", busy, "s");
    add("gpu_idle_s", idle, "s");
    add("gpu_kernel_s", kernel, "s");
    add("gpu_kernels", static_cast<double>(gpu.timeline.kernel_count), "count");
    add("host_sync_wait_s", gpu.timeline.host_sync_wait_s, "s");
    for (const auto& [kind, t] : gpu.timeline.copies)
        add(std::string(g::to_string(kind)) + "_bytes", static_cast<double>(t.bytes), "bytes");
    if (gpu.timeline.pageable_copies.count)
        add("pageable_copy_bytes", static_cast<double>(gpu.timeline.pageable_copies.bytes),
            "bytes");
    return out;
}

std::vector<Measurement> gpu_kernel_measurements(const GpuRun& gpu) {
    std::map<std::string, std::vector<const inject::KernelMetrics*>> by_name;
    for (const auto& m : gpu.metrics) by_name[m.name].push_back(&m);
    std::vector<Measurement> out;
    for (auto& [name, durations] : g::kernel_durations(gpu.log)) {
        Measurement m;
        m.name = name;
        m.durations_s = durations;
        m.duration_s = summarize(durations);
        // Range names are kernel names (auto range); FLOPs and bytes per launch, averaged.
        if (const auto it = by_name.find(name); it != by_name.end()) {
            double ops = 0, bytes = 0;
            std::size_t n_ops = 0, n_bytes = 0;
            for (const auto* km : it->second) {
                if (auto v = g::total_operations(km->values)) {
                    ops += *v;
                    ++n_ops;
                }
                if (auto v = g::evaluate(*g::find_derived_metric("dram_bytes"), km->values)) {
                    bytes += *v;
                    ++n_bytes;
                }
            }
            if (n_ops) {
                m.measured_ops = ops / static_cast<double>(n_ops);
                m.measured_ops_source = Source::cupti;
            }
            if (n_bytes) {
                m.measured_bytes = bytes / static_cast<double>(n_bytes);
                m.measured_bytes_source = Source::cupti;
            }
        }
        out.push_back(std::move(m));
    }
    return out;
}

json gpu_trace_events(const GpuRun& gpu, std::int64_t t0_ns) {
    json events = json::array();
    std::map<std::uint32_t, bool> devices;
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, int> tids;
    auto tid = [&](std::uint32_t dev, std::uint32_t ctx, std::uint32_t stream) {
        devices[dev] = true;
        const auto key = std::make_tuple(dev, ctx, stream);
        auto it = tids.find(key);
        if (it == tids.end()) {
            it = tids.emplace(key, static_cast<int>(tids.size()) + 1).first;
            events.push_back({{"ph", "M"},
                              {"name", "thread_name"},
                              {"pid", static_cast<int>(dev)},
                              {"tid", it->second},
                              {"args",
                               {{"name", "stream " + std::to_string(stream) + " (context " +
                                             std::to_string(ctx) + ")"}}}});
        }
        return it->second;
    };
    for (const auto& k : gpu.log.kernels)
        events.push_back(
            {{"ph", "X"},
             {"cat", "kernel"},
             {"name", k.name},
             {"pid", static_cast<int>(k.device)},
             {"tid", tid(k.device, k.context, k.stream)},
             {"ts", us(k.start_ns, t0_ns)},
             {"dur", us(k.end_ns, k.start_ns)},
             {"args",
              {{"grid", k.grid}, {"block", k.block}, {"registers", k.registers_per_thread}}}});
    for (const auto& c : gpu.log.copies)
        events.push_back({{"ph", "X"},
                          {"cat", "copy"},
                          {"name", "copy " + std::string(g::to_string(c.kind)) + " (" +
                                       std::string(g::to_string(c.src)) + " -> " +
                                       std::string(g::to_string(c.dst)) + ")"},
                          {"pid", static_cast<int>(c.device)},
                          {"tid", tid(c.device, c.context, c.stream)},
                          {"ts", us(c.start_ns, t0_ns)},
                          {"dur", us(c.end_ns, c.start_ns)},
                          {"args", {{"bytes", c.bytes}}}});
    for (const auto& m : gpu.log.memsets)
        events.push_back({{"ph", "X"},
                          {"cat", "memset"},
                          {"name", "memset"},
                          {"pid", static_cast<int>(m.device)},
                          {"tid", tid(m.device, m.context, m.stream)},
                          {"ts", us(m.start_ns, t0_ns)},
                          {"dur", us(m.end_ns, m.start_ns)},
                          {"args", {{"bytes", m.bytes}}}});
    for (const auto& [dev, _] : devices)
        events.push_back({{"ph", "M"},
                          {"name", "process_name"},
                          {"pid", static_cast<int>(dev)},
                          {"args", {{"name", "GPU " + std::to_string(dev)}}}});
    bool waits = false;
    for (const auto& s : gpu.log.syncs) {
        if (!g::sync_kind_blocks_host.at(static_cast<std::size_t>(s.kind))) continue;
        waits = true;
        events.push_back({{"ph", "X"},
                          {"cat", "sync"},
                          {"name", std::string(g::to_string(s.kind))},
                          {"pid", host_wait_pid},
                          {"tid", 1},
                          {"ts", us(s.start_ns, t0_ns)},
                          {"dur", us(s.end_ns, s.start_ns)}});
    }
    if (waits)
        events.push_back({{"ph", "M"},
                          {"name", "process_name"},
                          {"pid", host_wait_pid},
                          {"args", {{"name", "host waits on GPU"}}}});
    return events;
}

}  // namespace ceiling::measure
