#include "agent/run/gpu_run.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "collectors/cupti/gpu_probe.hpp"
#include "collectors/cupti/metric_table.hpp"

namespace ceiling::measure {
namespace {

namespace fs = std::filesystem;
namespace g = collectors::gpu;

// Host waits get a track of their own in the execution's process; CUPTI's synchronisation
// records do not say which thread waited.
constexpr int host_wait_tid = 1'900'000'000;

// The push/pop ranges of each thread with each one's enclosing instance, so "the innermost
// range open on this thread at t" costs a binary search and a walk up the nesting (a range
// that ended before t encloses nothing open at t, but its ancestors may).
class RangeIndex {
  public:
    explicit RangeIndex(const NvtxCapture& capture) : capture_(capture) {
        std::map<std::pair<int, int>, std::vector<std::size_t>> open;
        for (std::size_t i = 0; i < capture.instances.size(); ++i) {
            const auto& r = capture.instances[i];
            if (!r.push_pop) continue;
            auto& t = threads_[{r.pid, r.tid}];
            auto& stack = open[{r.pid, r.tid}];
            // Instances come sorted by (pid, tid, start, longest first): a stack of the ones
            // still open at this start gives the enclosing one.
            while (!stack.empty() && end(t, stack.back()) <= r.start_ns) stack.pop_back();
            t.parent.push_back(stack.empty() ? none : stack.back());
            stack.push_back(t.order.size());
            t.order.push_back(i);
        }
    }

    std::optional<std::size_t> innermost(int pid, int tid, std::int64_t t_ns) const {
        const auto it = threads_.find({pid, tid});
        if (it == threads_.end()) return std::nullopt;
        const Thread& t = it->second;
        const auto after = std::upper_bound(
            t.order.begin(), t.order.end(), t_ns,
            [&](std::int64_t v, std::size_t i) { return v < capture_.instances[i].start_ns; });
        std::size_t k =
            after == t.order.begin() ? none : static_cast<std::size_t>(after - t.order.begin()) - 1;
        while (k != none && end(t, k) <= t_ns) k = t.parent[k];
        if (k == none) return std::nullopt;
        return t.order[k];
    }

  private:
    static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
    struct Thread {
        std::vector<std::size_t> order;   // capture indices, by start
        std::vector<std::size_t> parent;  // position in order of the enclosing one, or none
    };
    std::int64_t end(const Thread& t, std::size_t k) const {
        return capture_.instances[t.order[k]].end_ns;
    }
    const NvtxCapture& capture_;
    std::map<std::pair<int, int>, Thread> threads_;
};

}  // namespace

std::optional<fs::path> find_cuda_inject_library() {
    if (const char* e = std::getenv("CEILING_INJECT_CUDA"); e && *e) return fs::path(e);
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return std::nullopt;
    for (const fs::path& candidate :
         {exe.parent_path() / "libceiling_inject_cuda.so",
          exe.parent_path() / "../lib/ceiling/libceiling_inject_cuda.so"})
        if (fs::exists(candidate, ec)) return fs::canonical(candidate, ec);
    return std::nullopt;
}

CudaInjection cuda_injection_environment(const fs::path& dir, bool metrics,
                                         std::optional<fs::path> library) {
    CudaInjection c;
    if (!g::built_with_cupti()) {
        c.unavailable =
            "GPU activity not recorded: this ceiling was built without CUPTI (build it where the "
            "CUDA toolkit with CUPTI is installed)";
        return c;
    }
    if (!library) library = find_cuda_inject_library();
    std::error_code ec;
    if (!library || !fs::exists(*library, ec)) {
        c.unavailable =
            "GPU activity not recorded: libceiling_inject_cuda.so not found " +
            (library ? "at " + library->string() : std::string("beside the ceiling binary")) +
            " (set CEILING_INJECT_CUDA)";
        return c;
    }
    c.variables[inject::cuda_inject_env] = library->string();
    c.variables[inject::cuda_dir_env] = dir.string();
    c.variables[inject::cuda_metrics_env] = metrics ? "1" : "0";
    return c;
}

bool GpuRun::empty() const {
    return std::all_of(processes.begin(), processes.end(),
                       [](const GpuProcess& p) { return p.log.empty(); });
}

GpuRun read_gpu_run(const fs::path& dir, std::optional<g::Interval> window) {
    GpuRun r;
    std::vector<inject::CudaActivityFile> files;
    try {
        files = inject::read_cuda_activity_dir(dir);
    } catch (const std::exception& e) {
        r.notes.push_back(std::string("GPU activity unreadable: ") + e.what());
    }
    g::ActivityLog all;
    for (auto& f : files) {
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
        g::ActivityLog copy = f.log;
        all.append(std::move(copy));
        r.processes.push_back({f.pid, std::move(f.log), std::move(f.metrics)});
    }
    g::TimelineOptions o;
    o.window = window;
    r.timeline = g::build_timeline(all, o);
    return r;
}

std::vector<CounterValue> gpu_counters(const GpuRun& gpu) {
    std::vector<CounterValue> out;
    if (gpu.empty()) return out;
    auto add = [&](std::string name, double v, std::string unit) {
        CounterValue c;
        c.name = std::move(name);
        c.value = v;
        c.unit = std::move(unit);
        c.source = Source::cupti;
        out.push_back(std::move(c));
    };
    double busy = 0, idle = 0, kernel = 0, copy = 0;
    for (const auto& d : gpu.timeline.devices) {
        busy += d.busy_s;
        idle += d.idle_s;
        kernel += d.kernel_s;
        copy += d.copy_s;
    }
    add("gpu_busy_s", busy, "s");
    add("gpu_idle_s", idle, "s");
    add("gpu_kernel_s", kernel, "s");
    add("gpu_copy_s", copy, "s");
    add("gpu_kernels", static_cast<double>(gpu.timeline.kernel_count), "count");
    add("host_sync_wait_s", gpu.timeline.host_sync_wait_s, "s");
    for (const auto& [kind, t] : gpu.timeline.copies)
        add(std::string(g::to_string(kind)) + "_bytes", static_cast<double>(t.bytes), "bytes");
    if (gpu.timeline.pageable_copies.count)
        add("pageable_copy_bytes", static_cast<double>(gpu.timeline.pageable_copies.bytes),
            "bytes");
    return out;
}

std::vector<GpuOperation> place_gpu_operations(const GpuRun& gpu, const NvtxCapture& capture) {
    // No GPU activity (every CPU program): nothing to place, so no index of the ranges either
    // (200 000 ranges took a visible share of an NVTX-heavy run's wrap-up).
    if (gpu.processes.empty()) return {};
    const RangeIndex ranges(capture);
    std::vector<GpuOperation> all;
    for (const auto& p : gpu.processes) {
        std::unordered_map<std::uint32_t, const g::LaunchCall*> calls;
        for (const auto& l : p.log.launches) calls.emplace(l.correlation, &l);
        std::vector<GpuOperation> ops;
        // One operation of any kind: what it is, where it ran, and who launched it.
        auto add = [&](GpuOpKind kind, std::string name, const auto& r, std::uint64_t bytes,
                       nlohmann::json args) {
            GpuOperation op;
            op.kind = kind;
            op.pid = p.pid;
            op.name = std::move(name);
            op.device = r.device;
            op.context = r.context;
            op.stream = r.stream;
            op.start_ns = r.start_ns;
            op.end_ns = r.end_ns;
            op.bytes = bytes;
            op.correlation = r.correlation;
            op.args = std::move(args);
            if (const auto it = calls.find(r.correlation); it != calls.end()) {
                const g::LaunchCall& call = *it->second;
                const int pid = static_cast<int>(call.process), tid = static_cast<int>(call.thread);
                op.launched_by = std::pair{pid, tid};
                op.range = ranges.innermost(pid, tid, call.start_ns);
            }
            ops.push_back(std::move(op));
        };
        for (const auto& k : p.log.kernels)
            add(GpuOpKind::kernel, inject::demangled(k.name), k, 0,
                {{"grid", k.grid},
                 {"block", k.block},
                 {"registers", k.registers_per_thread},
                 {"shared_bytes", k.shared_memory_bytes}});
        for (const auto& c : p.log.copies)
            add(GpuOpKind::copy, "copy " + std::string(g::to_string(c.kind)), c, c.bytes,
                {{"bytes", c.bytes},
                 {"src", std::string(g::to_string(c.src))},
                 {"dst", std::string(g::to_string(c.dst))}});
        for (const auto& m : p.log.memsets)
            add(GpuOpKind::memset, "memset", m, m.bytes, {{"bytes", m.bytes}});
        std::stable_sort(ops.begin(), ops.end(), [](const GpuOperation& a, const GpuOperation& b) {
            return a.start_ns < b.start_ns;
        });
        std::move(ops.begin(), ops.end(), std::back_inserter(all));
    }
    return all;
}

std::vector<std::string> attach_kernel_counts(const GpuRun& gpu, std::vector<GpuOperation>& ops) {
    std::vector<std::string> notes;
    for (const auto& p : gpu.processes) {
        if (p.metrics.empty()) continue;
        // The range profiler's ranges are the process's kernels in launch order per context:
        // its kernel records ordered by (context, correlation id), the metrics lines by
        // (context, index). Paired only when the counts agree and every name matches.
        std::vector<GpuOperation*> kernels;
        for (auto& op : ops)
            if (op.pid == p.pid && op.kind == GpuOpKind::kernel) kernels.push_back(&op);
        std::sort(kernels.begin(), kernels.end(), [](const GpuOperation* a, const GpuOperation* b) {
            return std::tie(a->context, a->correlation) < std::tie(b->context, b->correlation);
        });
        std::vector<const inject::KernelMetrics*> counts;
        for (const auto& m : p.metrics) counts.push_back(&m);
        std::sort(counts.begin(), counts.end(), [](const auto* a, const auto* b) {
            return std::tie(a->context, a->index) < std::tie(b->context, b->index);
        });
        const std::string who = "GPU counters (process " + std::to_string(p.pid) + "): ";
        if (counts.size() != kernels.size()) {
            notes.push_back(who + std::to_string(counts.size()) + " counted ranges for " +
                            std::to_string(kernels.size()) +
                            " kernels: not paired, the kernels' work stays uncounted");
            continue;
        }
        const auto mismatch =
            std::mismatch(kernels.begin(), kernels.end(), counts.begin(),
                          [](const GpuOperation* k, const inject::KernelMetrics* m) {
                              return k->name == m->name;
                          });
        if (mismatch.first != kernels.end()) {
            notes.push_back(who + "counted range " + std::to_string((*mismatch.second)->index) +
                            " is named '" + (*mismatch.second)->name + "', its kernel '" +
                            (*mismatch.first)->name +
                            "': not paired, the kernels' work stays uncounted");
            continue;
        }
        for (std::size_t i = 0; i < kernels.size(); ++i) {
            const auto derived = g::evaluate_all(counts[i]->values);
            KernelCount c;
            // The kind of the largest operation count names the roof (a GEMM's tensor
            // operations, not its epilogue's FFMA).
            double largest = 0;  // a kernel with no operation counted keeps fp32 vector
            for (const auto& m : g::derived_metrics()) {
                const auto it = derived.find(std::string(m.name));
                if (it == derived.end() || !g::is_operation_count(m)) continue;
                c.ops = c.ops.value_or(0) + it->second;
                if (it->second > largest) {
                    largest = it->second;
                    c.precision = parse_precision(m.precision).value_or(Precision::fp32);
                    c.engine = parse_engine(m.engine).value_or(Engine::vector);
                }
            }
            if (const auto it = derived.find("dram_bytes"); it != derived.end())
                c.dram_bytes = it->second;
            kernels[i]->counted = c;
        }
    }
    return notes;
}

void add_gpu_tracks(store::ChromeTrace& trace, const GpuRun& gpu,
                    const std::vector<GpuOperation>& ops, const NvtxCapture& capture, int pid_base,
                    const std::string& label, int host_pid, int& sort_index) {
    constexpr std::string_view category[] = {"kernel", "copy", "memset"};
    std::map<std::uint32_t, std::map<std::pair<std::uint32_t, std::uint32_t>, int>> tids;
    for (const auto& op : ops) {
        const int pid = pid_base + static_cast<int>(op.device);
        auto& streams = tids[op.device];
        if (streams.empty())
            trace.process(pid, "GPU " + std::to_string(op.device) + " (" + label + ")",
                          sort_index++);
        auto [it, added] =
            streams.try_emplace({op.context, op.stream}, static_cast<int>(streams.size()) + 1);
        if (added)
            trace.thread(pid, it->second,
                         "stream " + std::to_string(op.stream) + " (context " +
                             std::to_string(op.context) + ")");
        nlohmann::json args = op.args;
        if (op.range) args["path"] = capture.instances[*op.range].path;
        trace.complete(pid, it->second, op.name,
                       std::string(category[static_cast<std::size_t>(op.kind)]), op.start_ns,
                       op.end_ns, std::move(args));
    }
    bool waits = false;
    for (const auto& p : gpu.processes)
        for (const auto& s : p.log.syncs) {
            if (!g::sync_kind_blocks_host.at(static_cast<std::size_t>(s.kind))) continue;
            waits = true;
            trace.complete(host_pid, host_wait_tid, std::string(g::to_string(s.kind)), "sync",
                           s.start_ns, s.end_ns);
        }
    if (waits) trace.thread(host_pid, host_wait_tid, "waits on the GPU");
}

}  // namespace ceiling::measure
