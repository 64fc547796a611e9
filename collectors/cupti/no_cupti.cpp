// Builds without CUPTI: the same entry points, each saying why GPU collection is missing.
#include "collectors/cupti/cupti_runtime.hpp"
#include "collectors/cupti/gpu_probe.hpp"

namespace ceiling::collectors::gpu {
namespace {
[[noreturn]] void not_built() {
    throw CollectorError(Capability::no("not built with CUPTI",
                                        "rebuild ceiling where the CUDA toolkit (with CUPTI) is installed"));
}
}  // namespace

bool built_with_cupti() { return false; }
std::optional<unsigned> cupti_api_version() { return std::nullopt; }

void start_activity_tracing(ActivitySink) { not_built(); }
void trace_launch_sites() { not_built(); }
void flush_activity() {}
ActivityLog stop_activity_tracing() { return {}; }

struct KernelMetricsSession::Impl {};
KernelMetricsSession::KernelMetricsSession(const MetricsPlan&, void*) { not_built(); }
KernelMetricsSession::~KernelMetricsSession() = default;
void KernelMetricsSession::start() { not_built(); }
std::vector<RangeMetrics> KernelMetricsSession::stop() { not_built(); }
bool KernelMetricsSession::running() const { return false; }
const std::vector<std::string>& KernelMetricsSession::metrics() const { not_built(); }
const std::vector<std::string>& KernelMetricsSession::unsupported() const { not_built(); }
std::size_t KernelMetricsSession::passes() const { return 0; }
std::size_t KernelMetricsSession::max_ranges() const { return 0; }
std::string KernelMetricsSession::chip() const { return {}; }

void install_process_hooks(ProcessHooks) { not_built(); }
void remove_process_hooks() {}

}  // namespace ceiling::collectors::gpu
