#pragma once
// What CUDA activity tracing observed, free of CUPTI types: kernels, copies, memsets,
// host-side synchronisation waits and CUPTI's own overhead, and the GPU timeline built from
// them (a track per stream, busy and idle time per device, bytes copied each way).
//
// CUPTI records are decoded into these types by activity_decode.cpp (the one file that
// knows CUpti_Activity* layouts); everything here is plain data, so the timeline logic is
// tested on any machine. Times are nanoseconds of CLOCK_MONOTONIC (the collectors register
// that clock with CUPTI), the clock `ceiling run` and the NVTX files use.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ceiling::collectors::gpu {

// Direction of a copy. Array copies count as device memory.
enum class CopyKind { host_to_device, device_to_host, device_to_device, host_to_host, peer_to_peer, unknown };
inline constexpr std::array<std::string_view, 6> copy_kind_names = {"h2d", "d2h", "d2d", "h2h", "p2p", "unknown"};

// Where one side of a copy lives. Pageable host memory is staged through a pinned buffer by
// the driver (slower, and the host thread waits); pinned memory is copied by DMA directly.
enum class MemoryKind { unknown, pageable, pinned, device, array, managed };
inline constexpr std::array<std::string_view, 6> memory_kind_names = {"unknown", "pageable", "pinned",
                                                                      "device",  "array",    "managed"};

// A host thread blocked until the device caught up. stream_wait_event blocks a stream, not
// the host, and is kept for the trace but not counted as host wait.
enum class SyncKind { unknown, event_synchronize, stream_wait_event, stream_synchronize, context_synchronize };
inline constexpr std::array<std::string_view, 5> sync_kind_names = {
    "unknown", "event_synchronize", "stream_wait_event", "stream_synchronize", "context_synchronize"};
inline constexpr std::array<bool, 5> sync_kind_blocks_host = {true, true, false, true, true};

std::string_view to_string(CopyKind k);
std::string_view to_string(MemoryKind k);
std::string_view to_string(SyncKind k);
std::optional<CopyKind> parse_copy_kind(std::string_view s);
std::optional<MemoryKind> parse_memory_kind(std::string_view s);
std::optional<SyncKind> parse_sync_kind(std::string_view s);

struct KernelActivity {
    std::string name;  // as CUPTI reports it (mangled C++ names stay mangled)
    std::uint32_t device = 0;
    std::uint32_t context = 0;
    std::uint32_t stream = 0;
    std::uint32_t correlation = 0;  // links to the API call that launched it
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::array<std::int32_t, 3> grid{};
    std::array<std::int32_t, 3> block{};
    int registers_per_thread = 0;
    std::int64_t shared_memory_bytes = 0;  // static + dynamic, per block
    std::uint32_t graph_id = 0;            // 0 unless launched from a CUDA graph
};

struct CopyActivity {
    CopyKind kind = CopyKind::unknown;
    MemoryKind src = MemoryKind::unknown;
    MemoryKind dst = MemoryKind::unknown;
    std::uint64_t bytes = 0;
    std::uint32_t device = 0;
    std::uint32_t context = 0;
    std::uint32_t stream = 0;
    std::uint32_t correlation = 0;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
};

struct MemsetActivity {
    std::uint64_t bytes = 0;
    std::uint32_t device = 0;
    std::uint32_t context = 0;
    std::uint32_t stream = 0;
    std::uint32_t correlation = 0;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
};

// Host time spent waiting for the device (cudaStreamSynchronize, cudaEventSynchronize, ...).
struct SyncActivity {
    SyncKind kind = SyncKind::unknown;
    std::uint32_t context = 0;
    std::uint32_t stream = 0;  // 0xffffffff when not tied to a stream
    std::uint32_t correlation = 0;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
};

// Time CUPTI or the driver spent on its own work (buffer flushes, instrumentation, JIT).
struct OverheadActivity {
    std::string kind;  // "cupti_buffer_flush", "driver_compiler", ...
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
};

// The host side of a kernel launch, copy or memset: the runtime or driver API call that
// enqueued it (same correlation id), on which thread and when, so the operation can be placed
// under the NVTX range open on that thread at that time. thread is the kernel's thread id
// (gettid), as the NVTX files record it.
struct LaunchCall {
    std::uint32_t correlation = 0;
    std::uint32_t process = 0;
    std::uint32_t thread = 0;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
};

struct ActivityLog {
    std::vector<KernelActivity> kernels;
    std::vector<CopyActivity> copies;
    std::vector<MemsetActivity> memsets;
    std::vector<SyncActivity> syncs;
    std::vector<OverheadActivity> overheads;
    std::vector<LaunchCall> launches;  // API calls that enqueue work (trace_launch_sites)
    std::uint64_t dropped_records = 0;  // CUPTI ran out of buffer space: the log is incomplete
    std::map<std::string, std::uint64_t> ignored_kinds;  // record kinds seen but not decoded

    // No device activity and no host waits (launch calls alone are not GPU activity).
    bool empty() const;
    void append(ActivityLog&& other);
};

// ---- timeline -------------------------------------------------------------------------

struct Interval {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    double seconds() const { return static_cast<double>(end_ns - start_ns) * 1e-9; }
};

// Sorted, non-overlapping union of intervals (empty or reversed intervals dropped).
std::vector<Interval> merge_intervals(std::vector<Interval> v);
double total_seconds(const std::vector<Interval>& merged);

// One trace track: a stream of a context of a device.
struct StreamTrack {
    std::uint32_t device = 0;
    std::uint32_t context = 0;
    std::uint32_t stream = 0;
    std::size_t kernels = 0;
    std::size_t copies = 0;
    std::size_t memsets = 0;
    double busy_s = 0;  // union of its operations
};

struct CopyTotals {
    std::uint64_t bytes = 0;
    std::size_t count = 0;
    double seconds = 0;  // summed durations (copies on different engines may overlap)
};

struct DeviceTimeline {
    std::uint32_t device = 0;
    Interval window;           // the window the idle time is counted over
    double busy_s = 0;         // union of kernels, copies and memsets
    double kernel_s = 0;       // union of kernels alone
    double copy_s = 0;         // union of copies alone
    double idle_s = 0;         // window minus busy
    std::vector<Interval> gaps;  // idle stretches of at least TimelineOptions::min_gap_ns
};

struct TimelineOptions {
    // Idle stretches shorter than this are counted in idle_s but not listed (launch-to-launch
    // spacing of back-to-back kernels is a few microseconds even when nothing waits).
    std::int64_t min_gap_ns = 10'000;
    // The window over which idle time is counted, e.g. the wrapped process's lifetime, so that
    // time before the first and after the last kernel counts as idle. Default: first to last
    // GPU operation of each device.
    std::optional<Interval> window;
};

struct GpuTimeline {
    std::vector<DeviceTimeline> devices;  // by device id
    std::vector<StreamTrack> streams;     // by (device, context, stream)
    std::map<CopyKind, CopyTotals> copies;
    // Pageable-memory copies: slower than pinned, and they block the calling host thread.
    CopyTotals pageable_copies;
    double host_sync_wait_s = 0;  // union of host-blocking synchronisation intervals
    double overhead_s = 0;        // union of CUPTI/driver overhead intervals
    std::size_t kernel_count = 0;
};

GpuTimeline build_timeline(const ActivityLog& log, const TimelineOptions& options = {});

// Durations of each kernel (by name) in seconds, in launch order.
std::map<std::string, std::vector<double>> kernel_durations(const ActivityLog& log);

}  // namespace ceiling::collectors::gpu
