#include "collectors/cupti/activity_decode.hpp"

#include <array>
#include <string>
#include <utility>

namespace ceiling::collectors::gpu {
namespace {

// CUpti_ActivityMemcpyKind -> direction (array memory is device memory).
constexpr std::array<std::pair<CUpti_ActivityMemcpyKind, CopyKind>, 10> copy_kinds = {{
    {CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CopyKind::host_to_device},
    {CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CopyKind::device_to_host},
    {CUPTI_ACTIVITY_MEMCPY_KIND_HTOA, CopyKind::host_to_device},
    {CUPTI_ACTIVITY_MEMCPY_KIND_ATOH, CopyKind::device_to_host},
    {CUPTI_ACTIVITY_MEMCPY_KIND_ATOA, CopyKind::device_to_device},
    {CUPTI_ACTIVITY_MEMCPY_KIND_ATOD, CopyKind::device_to_device},
    {CUPTI_ACTIVITY_MEMCPY_KIND_DTOA, CopyKind::device_to_device},
    {CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CopyKind::device_to_device},
    {CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, CopyKind::host_to_host},
    {CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, CopyKind::peer_to_peer},
}};

constexpr std::array<std::pair<CUpti_ActivityMemoryKind, MemoryKind>, 7> memory_kinds = {{
    {CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, MemoryKind::pageable},
    {CUPTI_ACTIVITY_MEMORY_KIND_PINNED, MemoryKind::pinned},
    {CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, MemoryKind::device},
    {CUPTI_ACTIVITY_MEMORY_KIND_ARRAY, MemoryKind::array},
    {CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, MemoryKind::managed},
    {CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC, MemoryKind::device},
    {CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC, MemoryKind::managed},
}};

constexpr std::array<std::pair<CUpti_ActivitySynchronizationType, SyncKind>, 4> sync_kinds = {{
    {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, SyncKind::event_synchronize},
    {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, SyncKind::stream_wait_event},
    {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, SyncKind::stream_synchronize},
    {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, SyncKind::context_synchronize},
}};

constexpr std::array<std::pair<CUpti_ActivityOverheadKind, std::string_view>, 9> overhead_kinds = {{
    {CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER, "driver_compiler"},
    {CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, "cupti_buffer_flush"},
    {CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION, "cupti_instrumentation"},
    {CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE, "cupti_resource"},
    {CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING, "module_loading"},
    {CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING, "lazy_function_loading"},
    {CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL, "command_buffer_full"},
    {CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST, "activity_buffer_request"},
    {CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT, "uvm_activity_init"},
}};

template <typename K, typename V, std::size_t N>
V lookup(const std::array<std::pair<K, V>, N>& table, K key, V otherwise) {
    for (const auto& [k, v] : table)
        if (k == key) return v;
    return otherwise;
}

std::int64_t ns(std::uint64_t t) { return static_cast<std::int64_t>(t); }

void decode_kernel(const CUpti_ActivityKernel10& r, ActivityLog& log) {
    KernelActivity k;
    k.name = r.name ? r.name : "(unnamed kernel)";
    k.device = r.deviceId;
    k.context = r.contextId;
    k.stream = r.streamId;
    k.correlation = r.correlationId;
    k.start_ns = ns(r.start);
    k.end_ns = ns(r.end);
    k.grid = {r.gridX, r.gridY, r.gridZ};
    k.block = {r.blockX, r.blockY, r.blockZ};
    k.registers_per_thread = r.registersPerThread;
    k.shared_memory_bytes = static_cast<std::int64_t>(r.staticSharedMemory) + r.dynamicSharedMemory;
    k.graph_id = r.graphId;
    log.kernels.push_back(std::move(k));
}

void decode_memcpy(const CUpti_ActivityMemcpy6& r, ActivityLog& log) {
    CopyActivity c;
    c.kind = lookup(copy_kinds, static_cast<CUpti_ActivityMemcpyKind>(r.copyKind), CopyKind::unknown);
    c.src = lookup(memory_kinds, static_cast<CUpti_ActivityMemoryKind>(r.srcKind), MemoryKind::unknown);
    c.dst = lookup(memory_kinds, static_cast<CUpti_ActivityMemoryKind>(r.dstKind), MemoryKind::unknown);
    c.bytes = r.bytes;
    c.device = r.deviceId;
    c.context = r.contextId;
    c.stream = r.streamId;
    c.correlation = r.correlationId;
    c.start_ns = ns(r.start);
    c.end_ns = ns(r.end);
    log.copies.push_back(c);
}

void decode_peer_copy(const CUpti_ActivityMemcpyPtoP4& r, ActivityLog& log) {
    CopyActivity c;
    c.kind = CopyKind::peer_to_peer;
    c.src = lookup(memory_kinds, static_cast<CUpti_ActivityMemoryKind>(r.srcKind), MemoryKind::unknown);
    c.dst = lookup(memory_kinds, static_cast<CUpti_ActivityMemoryKind>(r.dstKind), MemoryKind::unknown);
    c.bytes = r.bytes;
    c.device = r.deviceId;
    c.context = r.contextId;
    c.stream = r.streamId;
    c.correlation = r.correlationId;
    c.start_ns = ns(r.start);
    c.end_ns = ns(r.end);
    log.copies.push_back(c);
}

void decode_memset(const CUpti_ActivityMemset4& r, ActivityLog& log) {
    log.memsets.push_back(
        {r.bytes, r.deviceId, r.contextId, r.streamId, r.correlationId, ns(r.start), ns(r.end)});
}

void decode_sync(const CUpti_ActivitySynchronization2& r, ActivityLog& log) {
    log.syncs.push_back({lookup(sync_kinds, r.type, SyncKind::unknown), r.contextId, r.streamId, r.correlationId,
                         ns(r.start), ns(r.end)});
}

void decode_overhead(const CUpti_ActivityOverhead3& r, ActivityLog& log) {
    log.overheads.push_back(
        {std::string(lookup(overhead_kinds, r.overheadKind, std::string_view("unknown"))), ns(r.start), ns(r.end)});
}

// Runtime and driver API records: only the calls trace_launch_sites enables arrive here.
void decode_api(const CUpti_ActivityAPI& r, ActivityLog& log) {
    log.launches.push_back({r.correlationId, r.processId, r.threadId, ns(r.start), ns(r.end)});
}

// One decoder per record kind (the record layout the kind implies in this CUPTI version).
using Decoder = void (*)(const CUpti_Activity*, ActivityLog&);
template <typename Record, void (*decode)(const Record&, ActivityLog&)>
void as(const CUpti_Activity* a, ActivityLog& log) {
    decode(*reinterpret_cast<const Record*>(a), log);
}
constexpr std::array<std::pair<CUpti_ActivityKind, Decoder>, 9> decoders = {{
    {CUPTI_ACTIVITY_KIND_KERNEL, as<CUpti_ActivityKernel10, decode_kernel>},
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, as<CUpti_ActivityKernel10, decode_kernel>},
    {CUPTI_ACTIVITY_KIND_MEMCPY, as<CUpti_ActivityMemcpy6, decode_memcpy>},
    {CUPTI_ACTIVITY_KIND_MEMCPY2, as<CUpti_ActivityMemcpyPtoP4, decode_peer_copy>},
    {CUPTI_ACTIVITY_KIND_MEMSET, as<CUpti_ActivityMemset4, decode_memset>},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, as<CUpti_ActivitySynchronization2, decode_sync>},
    {CUPTI_ACTIVITY_KIND_OVERHEAD, as<CUpti_ActivityOverhead3, decode_overhead>},
    {CUPTI_ACTIVITY_KIND_RUNTIME, as<CUpti_ActivityAPI, decode_api>},
    {CUPTI_ACTIVITY_KIND_DRIVER, as<CUpti_ActivityAPI, decode_api>},
}};

}  // namespace

void decode_activity(const CUpti_Activity* record, ActivityLog& log) {
    for (const auto& [kind, decode] : decoders)
        if (kind == record->kind) return decode(record, log);
    ++log.ignored_kinds["kind " + std::to_string(static_cast<int>(record->kind))];
}

}  // namespace ceiling::collectors::gpu
