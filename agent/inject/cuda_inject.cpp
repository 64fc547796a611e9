// libceiling_inject_cuda.so: loaded by the CUDA driver into a program through
// CUDA_INJECTION64_PATH, it traces the program's GPU activity (kernels, copies, memsets,
// synchronisation, and the API call that launched each of them) and, when
// CEILING_CUDA_METRICS=1 and the counters are permitted, counts each kernel's FLOPs and DRAM
// bytes with the range profiler. Everything goes to
// $CEILING_CUDA_DIR/<pid>-<load ns>.cuda.jsonl (cuda_activity_file.hpp) for `ceiling run`.
// No recompilation, no change to the program's behaviour beyond CUPTI's overhead; a failure
// here is written to the file as an error line and never stops the program.

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "agent/inject/cuda_activity_file.hpp"
#include "collectors/cupti/cupti_runtime.hpp"
#include "collectors/cupti/gpu_probe.hpp"

namespace {

namespace g = ceiling::collectors::gpu;
namespace inject = ceiling::inject;

std::int64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct MetricsContext {
    std::unique_ptr<g::KernelMetricsSession> session;
    std::uint32_t id = 0;
    std::size_t launches = 0;  // since the batch started
    std::size_t written = 0;   // kernels written so far
    std::vector<std::string>
        launched;  // the batch's kernels and memsets ("" for a graph), in order
};

struct State {
    std::mutex mutex;
    int fd = -1;
    bool metrics = false;
    std::map<void*, MetricsContext> contexts;
    bool finished = false;
};
State& state() {
    static State* s = new State;  // never destroyed: CUPTI may call back during exit
    return *s;
}

void write_line_locked(State& s, const std::string& line) {
    if (s.fd < 0) return;
    std::string l = line + "\n";
    const char* p = l.data();
    std::size_t left = l.size();
    while (left > 0) {
        const ssize_t n = ::write(s.fd, p, left);
        if (n <= 0) return;  // nothing sensible to do inside someone else's program
        p += n;
        left -= static_cast<std::size_t>(n);
    }
}

void write_error_locked(State& s, const std::string& what, const ceiling::collectors::Capability& c) {
    write_line_locked(s, inject::error_line(what, c.reason, c.fix));
}

void drain_locked(State& s, MetricsContext& c) {
    if (!c.session || !c.session->running()) return;
    try {
        const auto ranges = c.session->stop();
        // One range per kernel launch, in launch order (auto range), and for a memset only
        // sometimes: named after the calls when their count is the ranges' with every memset
        // or with none; a graph's kernels, or any other count, keep the index.
        std::vector<std::string> kernels;
        for (auto& n : c.launched)
            if (!n.starts_with("[memset]")) kernels.push_back(n);
        if (ranges.size() != c.launched.size() && ranges.size() == kernels.size())
            c.launched.swap(kernels);
        const bool named = ranges.size() == c.launched.size();
        if (!named)
            write_line_locked(s, inject::error_line("kernel metrics",
                                                    std::to_string(ranges.size()) + " ranges for " +
                                                        std::to_string(c.launched.size()) +
                                                        " launches seen: ranges named by index",
                                                    ""));
        for (std::size_t i = 0; i < ranges.size(); ++i) {
            const auto& r = ranges[i];
            const std::string& name = named && !c.launched[i].empty() ? c.launched[i] : r.name;
            write_line_locked(s, inject::metrics_line(c.id, c.written++, name, r.values));
        }
    } catch (const ceiling::collectors::CollectorError& e) {
        write_error_locked(s, "kernel metrics", e.capability);
    }
    c.launches = 0;
    c.launched.clear();
}

void on_context_created(void* context, std::uint32_t) {
    auto& s = state();
    std::lock_guard lock(s.mutex);
    if (!s.metrics || s.finished) return;
    auto& c = s.contexts[context];
    c.id = static_cast<std::uint32_t>(s.contexts.size());
    try {
        c.session = std::make_unique<g::KernelMetricsSession>(g::MetricsPlan{}, context);
        for (const auto& m : c.session->unsupported())
            write_line_locked(s, inject::error_line("kernel metrics", "metric " + m + " is not offered on this GPU", ""));
        c.session->start();
    } catch (const ceiling::collectors::CollectorError& e) {
        write_error_locked(s, "kernel metrics", e.capability);
        c.session.reset();
        s.metrics = false;  // refused once (permissions, another profiler): do not retry per context
    }
}

void before_launch(void* context, const char* symbol, const char* api) {
    auto& s = state();
    std::lock_guard lock(s.mutex);
    const auto it = s.contexts.find(context);
    if (it == s.contexts.end() || !it->second.session) return;
    auto& c = it->second;
    // A full counter-data image drops ranges: decode and start a new batch first.
    if (++c.launches >= c.session->max_ranges()) {
        drain_locked(s, c);
        try {
            c.session->start();
            c.launches = 1;
        } catch (const ceiling::collectors::CollectorError& e) {
            write_error_locked(s, "kernel metrics", e.capability);
            c.session.reset();
            return;
        }
    }
    const std::string call = api ? api : "";
    c.launched.push_back(symbol                         ? inject::demangled(symbol)
                         : call.starts_with("cuMemset") ? "[memset] " + call
                                                        : "");
}

void on_context_destroying(void* context) {
    auto& s = state();
    std::lock_guard lock(s.mutex);
    const auto it = s.contexts.find(context);
    if (it == s.contexts.end()) return;
    drain_locked(s, it->second);
    s.contexts.erase(it);
}

void finish() {
    auto& s = state();
    {
        std::lock_guard lock(s.mutex);
        if (s.finished) return;
        for (auto& [ctx, c] : s.contexts) drain_locked(s, c);
    }
    g::flush_activity();
    g::stop_activity_tracing();  // the sink has written everything
    std::lock_guard lock(s.mutex);
    s.finished = true;
    write_line_locked(s, inject::end_line(monotonic_ns()));
    ::close(s.fd);
    s.fd = -1;
}

}  // namespace

// Called by the CUDA driver during cuInit when CUDA_INJECTION64_PATH names this library.
// Returns 1 (success) even when tracing cannot start: the program must run regardless.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
    static std::once_flag once;
    std::call_once(once, [] {
        auto& s = state();
        const char* dir = std::getenv(inject::cuda_dir_env);
        if (!dir || !*dir) return;
        const auto load_ns = monotonic_ns();
        const std::string path = std::string(dir) + "/" + std::to_string(::getpid()) + "-" + std::to_string(load_ns) +
                                 ".cuda.jsonl";
        s.fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (s.fd < 0) return;
        const char* metrics = std::getenv(inject::cuda_metrics_env);
        s.metrics = metrics && std::string(metrics) == "1";
        {
            std::lock_guard lock(s.mutex);
            write_line_locked(s, inject::header_line(::getpid(), static_cast<std::uint64_t>(load_ns),
                                                     g::cupti_api_version(), s.metrics));
        }
        try {
            g::start_activity_tracing([](g::ActivityLog&& log) {
                auto& st = state();
                std::lock_guard lock(st.mutex);
                for (const auto& line : inject::activity_lines(log)) write_line_locked(st, line);
            });
            // Which thread launched each kernel and copy, for nesting them under NVTX ranges.
            try {
                g::trace_launch_sites();
            } catch (const ceiling::collectors::CollectorError& e) {
                std::lock_guard lock(s.mutex);
                write_error_locked(s, "launch sites", e.capability);
            }
        } catch (const ceiling::collectors::CollectorError& e) {
            std::lock_guard lock(s.mutex);
            write_error_locked(s, "activity tracing", e.capability);
        }
        if (s.metrics) {
            try {
                g::install_process_hooks({on_context_created, on_context_destroying, before_launch});
            } catch (const ceiling::collectors::CollectorError& e) {
                std::lock_guard lock(s.mutex);
                write_error_locked(s, "kernel metrics", e.capability);
                s.metrics = false;
            }
        }
        std::atexit(finish);
    });
    return 1;
}
