// The live CUPTI collector: activity buffers, the CUDA 13 range profiler (cupti_range_profiler.h
// with the host-side metric evaluation of cupti_profiler_host.h; the event/metric APIs and
// NVPW's metrics-context functions are gone in CUDA 13), and the callback subscription.
// Built only with CUPTI. Everything it observes leaves as plain data (gpu_activity.hpp,
// metric_table.hpp); the logic on that data is tested without a GPU.

#include "collectors/cupti/cupti_runtime.hpp"

#include <cuda.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <dlfcn.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string_view>
#include <utility>

#include "collectors/cupti/activity_decode.hpp"
#include "collectors/cupti/cupti_errors.hpp"
#include "collectors/cupti/gpu_probe.hpp"

namespace ceiling::collectors::gpu {

// The error table uses plain integers so it builds without CUPTI; keep them in step.
static_assert(cupti_insufficient_privileges == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
static_assert(cupti_multiple_subscribers == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
static_assert(cuda_error_no_device == CUDA_ERROR_NO_DEVICE);
static_assert(CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES == 40);
static_assert(CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED == 36);
static_assert(CUPTI_ERROR_HARDWARE_BUSY == 26);
static_assert(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER == 36 && CUDA_ERROR_STUB_LIBRARY == 34);
static_assert(CUDA_ERROR_DEVICE_UNAVAILABLE == 46 && CUDA_ERROR_SYSTEM_DRIVER_MISMATCH == 803);

bool built_with_cupti() { return true; }

std::optional<unsigned> cupti_api_version() {
    std::uint32_t v = 0;
    if (cuptiGetVersion(&v) != CUPTI_SUCCESS) return std::nullopt;
    return v;
}

namespace {

// CUPTI parameter blocks: zeroed, with the size of the version compiled against.
template <typename P>
P params(std::size_t struct_size) {
    P p{};
    p.structSize = struct_size;
    return p;
}

void check(CUptiResult rc, std::string_view what) {
    if (rc != CUPTI_SUCCESS) throw CollectorError(explain_cupti_error(static_cast<int>(rc), what));
}

// ---- activity -----------------------------------------------------------------------------

constexpr std::size_t buffer_bytes = 8u << 20;
constexpr std::size_t buffer_align = 8;

constexpr std::array<CUpti_ActivityKind, 6> traced_kinds = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,          CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_OVERHEAD,
};

// API calls that enqueue GPU work, by name prefix per callback domain: a table of names
// rather than callback ids, so versioned entry points (cuLaunchKernelEx, cudaMemcpyAsync_ptsz,
// ...) of any CUDA release are covered. Only these are recorded: tracing every API call
// would cost the program far more than its launches.
struct LaunchApis {
    CUpti_CallbackDomain domain;
    std::uint32_t cbid_end;
    CUptiResult (*enable)(CUpti_CallbackId, std::uint8_t);
    std::array<std::string_view, 4> prefixes;
};
constexpr std::array<LaunchApis, 2> launch_apis = {{
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, cuptiActivityEnableRuntimeApi,
     {"cudaLaunch", "cudaMemcpy", "cudaMemset", "cudaGraphLaunch"}},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, cuptiActivityEnableDriverApi,
     {"cuLaunch", "cuMemcpy", "cuMemset", "cuGraphLaunch"}},
}};

struct ActivityState {
    std::mutex mutex;
    ActivitySink sink;
    ActivityLog kept;
    bool running = false;
};
ActivityState& activity_state() {
    static ActivityState* s = new ActivityState;  // never destroyed: CUPTI may call back at exit
    return *s;
}

// Same clock as ceiling's own timing and the NVTX files, so GPU and CPU events line up.
std::uint64_t CUPTIAPI monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
    *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(buffer_align, buffer_bytes));
    *size = *buffer ? buffer_bytes : 0;
    *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer, std::size_t,
                               std::size_t valid) {
    ActivityLog log;
    CUpti_Activity* record = nullptr;
    while (buffer && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
        decode_activity(record, log);
    std::size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS) log.dropped_records += dropped;
    std::free(buffer);
    auto& s = activity_state();
    std::lock_guard lock(s.mutex);
    if (s.sink)
        s.sink(std::move(log));
    else
        s.kept.append(std::move(log));
}

// ---- driver entry points resolved at run time (no link-time dependency on libcuda) ----------

struct ContextApi {
    CUresult (*get_current)(CUcontext*) = nullptr;
};
const ContextApi& context_api() {
    static const ContextApi api = [] {
        ContextApi a;
        if (void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL))
            a.get_current = reinterpret_cast<CUresult (*)(CUcontext*)>(dlsym(lib, "cuCtxGetCurrent"));
        return a;
    }();
    return api;
}

std::once_flag profiler_initialised;

}  // namespace

void start_activity_tracing(ActivitySink sink) {
    auto& s = activity_state();
    {
        std::lock_guard lock(s.mutex);
        if (s.running) throw CollectorError(Capability::no("CUDA activity tracing is already running"));
        s.sink = std::move(sink);
        s.kept = {};
    }
    check(cuptiActivityRegisterTimestampCallback(monotonic_ns), "cuptiActivityRegisterTimestampCallback");
    check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks");
    for (auto kind : traced_kinds) {
        const CUptiResult rc = cuptiActivityEnable(kind);
        // Overhead and synchronisation records are extras: a CUPTI without them still traces.
        if (rc != CUPTI_SUCCESS && kind != CUPTI_ACTIVITY_KIND_OVERHEAD && kind != CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)
            check(rc, "cuptiActivityEnable");
    }
    std::lock_guard lock(s.mutex);
    s.running = true;
}

void trace_launch_sites() {
    // gettid(), as the NVTX files record threads (the default is pthread_self()).
    check(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), "cuptiSetThreadIdType");
    std::size_t enabled = 0;
    for (const auto& apis : launch_apis) {
        for (std::uint32_t cbid = 1; cbid < apis.cbid_end; ++cbid) {
            const char* name = nullptr;
            if (cuptiGetCallbackName(apis.domain, cbid, &name) != CUPTI_SUCCESS || !name) continue;
            const std::string_view n(name);
            const bool launches = std::any_of(apis.prefixes.begin(), apis.prefixes.end(),
                                              [&](std::string_view p) { return n.starts_with(p); });
            if (launches && apis.enable(cbid, 1) == CUPTI_SUCCESS) ++enabled;
        }
    }
    if (enabled == 0)
        throw CollectorError(Capability::no("CUPTI recorded no launching API call",
                                            "a CUPTI with cuptiActivityEnableRuntimeApi is needed"));
}

void flush_activity() { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); }

ActivityLog stop_activity_tracing() {
    auto& s = activity_state();
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (auto kind : traced_kinds) cuptiActivityDisable(kind);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
    std::lock_guard lock(s.mutex);
    s.running = false;
    s.sink = {};
    return std::exchange(s.kept, {});
}

// ---- range profiler --------------------------------------------------------------------------

struct KernelMetricsSession::Impl {
    MetricsPlan plan;
    CUcontext context = nullptr;
    std::string chip;
    std::vector<std::uint8_t> availability;
    CUpti_Profiler_Host_Object* host = nullptr;
    CUpti_RangeProfiler_Object* profiler = nullptr;
    std::vector<std::string> metrics;
    std::vector<std::string> unsupported;
    std::vector<const char*> names;  // into metrics
    std::vector<std::uint8_t> config;
    std::vector<std::uint8_t> counter_data;
    std::size_t passes = 0;
    bool running = false;

    void open(void* ctx);
    void choose_metrics();
    void configure();
    void close();
    std::vector<RangeMetrics> decode();
};

void KernelMetricsSession::Impl::open(void* ctx) {
    context = static_cast<CUcontext>(ctx);
    if (!context) {
        const auto& api = context_api();
        if (!api.get_current) throw CollectorError(Capability::no("no NVIDIA driver: libcuda.so.1 not found"));
        if (api.get_current(&context) != CUDA_SUCCESS || !context)
            throw CollectorError(Capability::no("no current CUDA context to profile (a ceiling bug)"));
    }
    std::optional<CollectorError> init_error;
    std::call_once(profiler_initialised, [&] {
        auto p = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
        if (const auto rc = cuptiProfilerInitialize(&p); rc != CUPTI_SUCCESS)
            init_error = CollectorError(explain_cupti_error(rc, "cuptiProfilerInitialize"));
    });
    if (init_error) throw *init_error;

    std::uint32_t device = 0;
    check(cuptiGetDeviceId(context, &device), "cuptiGetDeviceId");
    auto name = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    name.deviceIndex = device;
    check(cuptiDeviceGetChipName(&name), "cuptiDeviceGetChipName");
    chip = name.pChipName ? name.pChipName : "";

    auto avail = params<CUpti_Profiler_GetCounterAvailability_Params>(CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
    avail.ctx = context;
    check(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability");
    availability.resize(avail.counterAvailabilityImageSize);
    avail.pCounterAvailabilityImage = availability.data();
    check(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability");

    auto host_init = params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    host_init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    host_init.pChipName = chip.c_str();
    host_init.pCounterAvailabilityImage = availability.data();
    check(cuptiProfilerHostInitialize(&host_init), "cuptiProfilerHostInitialize");
    host = host_init.pHostObject;
}

// Keeps the metrics whose base name the chip offers ("dram__bytes_read.sum" -> base
// "dram__bytes_read"), so one unknown name does not fail the whole configuration.
void KernelMetricsSession::Impl::choose_metrics() {
    std::set<std::string, std::less<>> offered;
    for (auto type : {CUPTI_METRIC_TYPE_COUNTER, CUPTI_METRIC_TYPE_RATIO, CUPTI_METRIC_TYPE_THROUGHPUT}) {
        auto p = params<CUpti_Profiler_Host_GetBaseMetrics_Params>(CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE);
        p.pHostObject = host;
        p.metricType = type;
        if (cuptiProfilerHostGetBaseMetrics(&p) != CUPTI_SUCCESS) continue;
        for (std::size_t i = 0; i < p.numMetrics; ++i) offered.emplace(p.ppMetricNames[i]);
    }
    for (const auto& m : plan.metrics) {
        const auto base = std::string_view(m).substr(0, m.find('.'));
        if (offered.empty() || offered.count(base))
            metrics.push_back(m);
        else
            unsupported.push_back(m);
    }
    if (metrics.empty())
        throw CollectorError(Capability::no("none of ceiling's GPU metrics is offered on chip " + chip));
    for (const auto& m : metrics) names.push_back(m.c_str());
}

void KernelMetricsSession::Impl::configure() {
    auto add = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    add.pHostObject = host;
    add.ppMetricNames = names.data();
    add.numMetrics = names.size();
    check(cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics");
    auto size = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    size.pHostObject = host;
    check(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
    config.resize(size.configImageSize);
    auto image = params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    image.pHostObject = host;
    image.configImageSize = config.size();
    image.pConfigImage = config.data();
    check(cuptiProfilerHostGetConfigImage(&image), "cuptiProfilerHostGetConfigImage");
    auto np = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
    np.configImageSize = config.size();
    np.pConfigImage = config.data();
    check(cuptiProfilerHostGetNumOfPasses(&np), "cuptiProfilerHostGetNumOfPasses");
    passes = np.numOfPasses;

    auto enable = params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    enable.ctx = context;
    check(cuptiRangeProfilerEnable(&enable), "cuptiRangeProfilerEnable");
    profiler = enable.pRangeProfilerObject;

    auto ds = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    ds.pRangeProfilerObject = profiler;
    ds.pMetricNames = names.data();
    ds.numMetrics = names.size();
    ds.maxNumOfRanges = plan.max_ranges;
    ds.maxNumRangeTreeNodes = static_cast<std::uint32_t>(plan.max_ranges);
    check(cuptiRangeProfilerGetCounterDataSize(&ds), "cuptiRangeProfilerGetCounterDataSize");
    counter_data.assign(ds.counterDataSize, 0);
}

std::vector<RangeMetrics> KernelMetricsSession::Impl::decode() {
    auto dd = params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    dd.pRangeProfilerObject = profiler;
    check(cuptiRangeProfilerDecodeData(&dd), "cuptiRangeProfilerDecodeData");
    auto info = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
    info.pCounterDataImage = counter_data.data();
    info.counterDataImageSize = counter_data.size();
    check(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
    std::vector<RangeMetrics> out;
    std::vector<double> values(names.size());
    for (std::size_t r = 0; r < info.numTotalRanges; ++r) {
        auto ri = params<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params>(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE);
        ri.pCounterDataImage = counter_data.data();
        ri.counterDataImageSize = counter_data.size();
        ri.rangeIndex = r;
        ri.rangeDelimiter = "/";
        check(cuptiRangeProfilerCounterDataGetRangeInfo(&ri), "cuptiRangeProfilerCounterDataGetRangeInfo");
        auto ev = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
        ev.pHostObject = host;
        ev.pCounterDataImage = counter_data.data();
        ev.counterDataImageSize = counter_data.size();
        ev.rangeIndex = r;
        ev.ppMetricNames = names.data();
        ev.numMetrics = names.size();
        ev.pMetricValues = values.data();
        check(cuptiProfilerHostEvaluateToGpuValues(&ev), "cuptiProfilerHostEvaluateToGpuValues");
        RangeMetrics m;
        m.name = ri.rangeName ? ri.rangeName : "";
        for (std::size_t i = 0; i < names.size(); ++i) m.values.emplace(metrics[i], values[i]);
        out.push_back(std::move(m));
    }
    if (dd.numOfRangeDropped > 0) {
        RangeMetrics dropped;
        dropped.name = "(" + std::to_string(dd.numOfRangeDropped) + " ranges dropped: more kernels than max_ranges)";
        out.push_back(std::move(dropped));
    }
    return out;
}

void KernelMetricsSession::Impl::close() {
    if (profiler) {
        auto p = params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
        p.pRangeProfilerObject = profiler;
        cuptiRangeProfilerDisable(&p);
        profiler = nullptr;
    }
    if (host) {
        auto p = params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
        p.pHostObject = host;
        cuptiProfilerHostDeinitialize(&p);
        host = nullptr;
    }
}

KernelMetricsSession::KernelMetricsSession(const MetricsPlan& plan, void* context) : impl_(std::make_unique<Impl>()) {
    impl_->plan = plan;
    try {
        impl_->open(context);
        impl_->choose_metrics();
        impl_->configure();
    } catch (...) {
        impl_->close();
        throw;
    }
}

KernelMetricsSession::~KernelMetricsSession() {
    if (impl_->running) {
        try {
            stop();
        } catch (...) {  // a destructor does not throw; the data is lost either way
        }
    }
    impl_->close();
}

void KernelMetricsSession::start() {
    auto& s = *impl_;
    auto init = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    init.pRangeProfilerObject = s.profiler;
    init.counterDataSize = s.counter_data.size();
    init.pCounterData = s.counter_data.data();
    check(cuptiRangeProfilerCounterDataImageInitialize(&init), "cuptiRangeProfilerCounterDataImageInitialize");
    auto sc = params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    sc.pRangeProfilerObject = s.profiler;
    sc.configSize = s.config.size();
    sc.pConfig = s.config.data();
    sc.counterDataImageSize = s.counter_data.size();
    sc.pCounterDataImage = s.counter_data.data();
    sc.range = CUPTI_AutoRange;         // one range per kernel
    sc.replayMode = CUPTI_KernelReplay;  // the driver replays each kernel once per pass
    sc.maxRangesPerPass = s.plan.max_ranges;
    sc.numNestingLevels = 1;
    sc.minNestingLevel = 1;
    sc.passIndex = 0;
    sc.targetNestingLevel = 1;
    check(cuptiRangeProfilerSetConfig(&sc), "cuptiRangeProfilerSetConfig");
    auto st = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    st.pRangeProfilerObject = s.profiler;
    check(cuptiRangeProfilerStart(&st), "cuptiRangeProfilerStart");
    s.running = true;
}

std::vector<RangeMetrics> KernelMetricsSession::stop() {
    auto& s = *impl_;
    if (!s.running) return {};
    s.running = false;
    auto sp = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    sp.pRangeProfilerObject = s.profiler;
    check(cuptiRangeProfilerStop(&sp), "cuptiRangeProfilerStop");
    return s.decode();
}

bool KernelMetricsSession::running() const { return impl_->running; }
const std::vector<std::string>& KernelMetricsSession::metrics() const { return impl_->metrics; }
const std::vector<std::string>& KernelMetricsSession::unsupported() const { return impl_->unsupported; }
std::size_t KernelMetricsSession::passes() const { return impl_->passes; }
std::size_t KernelMetricsSession::max_ranges() const { return impl_->plan.max_ranges; }
std::string KernelMetricsSession::chip() const { return impl_->chip; }

// ---- callbacks ---------------------------------------------------------------------------

namespace {

struct HookState {
    CUpti_SubscriberHandle subscriber = nullptr;
    ProcessHooks hooks;
};
HookState& hook_state() {
    static HookState* s = new HookState;
    return *s;
}

// The driver calls whose work is a range of the range profiler (auto range, kernel replay):
// kernel and graph launches, and memsets, which run as kernels (seen on an H200, 2026-12-04:
// one range per cudaMemset that ncu does not list).
constexpr std::array<std::string_view, 4> range_call_prefixes = {
    "cuLaunchKernel", "cuLaunchCooperativeKernel", "cuGraphLaunch", "cuMemsetD"};

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) {
    auto& h = hook_state().hooks;
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
        const auto* r = static_cast<const CUpti_ResourceData*>(data);
        if (id == CUPTI_CBID_RESOURCE_CONTEXT_CREATED && h.context_created) {
            std::uint32_t device = 0;
            cuptiGetDeviceId(r->context, &device);
            h.context_created(r->context, device);
        } else if (id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING && h.context_destroying) {
            h.context_destroying(r->context);
        }
    } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
        const auto* c = static_cast<const CUpti_CallbackData*>(data);
        if (c->callbackSite == CUPTI_API_ENTER && h.before_launch)
            h.before_launch(c->context, c->symbolName, c->functionName);
    }
}

}  // namespace

void install_process_hooks(ProcessHooks hooks) {
    auto& s = hook_state();
    if (s.subscriber) throw CollectorError(Capability::no("CUPTI callbacks are already installed"));
    s.hooks = std::move(hooks);
    std::array<char, 256> other{};
    auto sub = params<CUpti_SubscriberParams>(CUpti_SubscriberParams_STRUCT_SIZE);
    sub.subscriberName = "ceiling";
    sub.oldSubscriberName = other.data();
    sub.oldSubscriberSize = other.size();
    const CUptiResult rc = cuptiSubscribe_v2(&s.subscriber, on_callback, nullptr, &sub);
    if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        auto cap = explain_cupti_error(rc, "cuptiSubscribe");
        if (other[0]) cap.reason += "; the one present: " + std::string(other.data());
        s.subscriber = nullptr;
        throw CollectorError(cap);
    }
    check(rc, "cuptiSubscribe");
    check(cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED),
          "cuptiEnableCallback");
    check(cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING),
          "cuptiEnableCallback");
    if (s.hooks.before_launch)
        for (std::uint32_t id = 1; id < CUPTI_DRIVER_TRACE_CBID_SIZE; ++id) {
            const char* name = nullptr;
            if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, id, &name) != CUPTI_SUCCESS ||
                !name)
                continue;
            if (std::any_of(
                    range_call_prefixes.begin(), range_call_prefixes.end(),
                    [&](std::string_view p) { return std::string_view(name).starts_with(p); }))
                cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
        }
}

void remove_process_hooks() {
    auto& s = hook_state();
    if (!s.subscriber) return;
    cuptiUnsubscribe(s.subscriber);
    s.subscriber = nullptr;
    s.hooks = {};
}

}  // namespace ceiling::collectors::gpu
