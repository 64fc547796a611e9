#pragma once
// The live side of the CUPTI collector: activity tracing, per-kernel metrics through the
// CUDA 13 range profiler, and the callbacks an injection library needs. No CUPTI type leaks
// out of here; in a build without CUPTI every entry point throws CollectorError("not built
// with CUPTI") (no_cupti.cpp), so callers need no #ifdef.
//
// CUPTI keeps one subscriber and one activity configuration per process, so these are
// process-wide functions, not objects that could be created twice.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collectors/capability.hpp"
#include "collectors/cupti/gpu_activity.hpp"
#include "collectors/cupti/metric_table.hpp"

namespace ceiling::collectors::gpu {

// ---- activity tracing ------------------------------------------------------------------

// Called on CUPTI's worker thread with the records of one completed buffer.
using ActivitySink = std::function<void(ActivityLog&&)>;

// Enables kernel (concurrent), memcpy, memset, synchronisation and overhead records, with
// CLOCK_MONOTONIC timestamps. Records go to `sink` as buffers complete, or are kept for
// stop_activity_tracing() when sink is empty. Throws CollectorError with the reason and fix.
void start_activity_tracing(ActivitySink sink = {});
// Also records the runtime and driver API calls that enqueue GPU work (launches, copies,
// memsets, graph launches: chosen by name, so new API versions are included) as
// ActivityLog::launches, with the calling thread's kernel thread id. Call after
// start_activity_tracing; throws CollectorError when CUPTI refuses.
void trace_launch_sites();
// Hands over every completed record now (forces partially filled buffers out).
void flush_activity();
// Flushes, disables the kinds and returns what was kept (empty when a sink was given).
ActivityLog stop_activity_tracing();

// ---- per-kernel metrics (range profiler, kernel replay, one range per kernel) ------------

struct RangeMetrics {
    std::string name;  // the range's name: the kernel's name in auto-range mode
    MetricValues values;
};

struct MetricsPlan {
    std::vector<std::string> metrics = raw_metric_names();
    std::size_t max_ranges = 64;  // kernels per start()/stop() batch
};

// Counts metrics for each kernel launched between start() and stop() on one CUDA context.
// Kernel replay: each kernel runs once per pass (the driver saves and restores memory), so
// its duration under profiling is not its real duration; time kernels in runs without this.
class KernelMetricsSession {
public:
    // context: a CUcontext; nullptr means the calling thread's current context. Metrics this
    // chip does not offer are left out (unsupported()); throws CollectorError when profiling
    // is refused (permissions, another profiler, no device).
    explicit KernelMetricsSession(const MetricsPlan& plan = {}, void* context = nullptr);
    ~KernelMetricsSession();
    KernelMetricsSession(const KernelMetricsSession&) = delete;
    KernelMetricsSession& operator=(const KernelMetricsSession&) = delete;

    void start();
    // Ends the batch and returns one entry per profiled kernel, in launch order.
    std::vector<RangeMetrics> stop();
    bool running() const;
    const std::vector<std::string>& metrics() const;      // the ones being collected
    const std::vector<std::string>& unsupported() const;  // asked for but not on this chip
    std::size_t passes() const;                           // replays per kernel
    std::size_t max_ranges() const;
    std::string chip() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// ---- hooks for an injection library ------------------------------------------------------

struct ProcessHooks {
    // A context was created (device ordinal) / is about to be destroyed.
    std::function<void(void* context, std::uint32_t device)> context_created;
    std::function<void(void* context)> context_destroying;
    // On entry to a driver call that runs work the range profiler counts as a range: a
    // kernel launch (symbol: the kernel's mangled name), a graph launch (symbol null) or a
    // memset (which runs as a kernel); api: the driver call's name. The range profiler names
    // its ranges by index only, so these calls name them, in order.
    std::function<void(void* context, const char* symbol, const char* api)> before_launch;
};

// Subscribes to CUPTI callbacks (one subscriber per process): context creation and
// destruction, kernel launches. Throws CollectorError, e.g. when another CUPTI client is
// already subscribed.
void install_process_hooks(ProcessHooks hooks);
void remove_process_hooks();

}  // namespace ceiling::collectors::gpu
