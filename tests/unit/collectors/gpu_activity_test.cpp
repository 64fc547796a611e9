// GPU timeline from recorded activity: busy and idle time per device, idle gaps, a track per
// stream, bytes copied each way, host synchronisation waits. Times in ns.

#include "collectors/cupti/gpu_activity.hpp"

#include <gtest/gtest.h>

namespace ceiling::collectors::gpu {
namespace {

KernelActivity kernel(std::uint32_t stream, std::int64_t start, std::int64_t end,
                      std::uint32_t device = 0) {
    KernelActivity k;
    k.name = "k" + std::to_string(start);
    k.device = device;
    k.context = 1;
    k.stream = stream;
    k.start_ns = start;
    k.end_ns = end;
    return k;
}

CopyActivity copy(CopyKind kind, MemoryKind host, std::uint64_t bytes, std::int64_t start,
                  std::int64_t end) {
    CopyActivity c;
    c.kind = kind;
    c.src = kind == CopyKind::host_to_device ? host : MemoryKind::device;
    c.dst = kind == CopyKind::host_to_device ? MemoryKind::device : host;
    c.bytes = bytes;
    c.context = 1;
    c.stream = 7;
    c.start_ns = start;
    c.end_ns = end;
    return c;
}

TEST(MergeIntervals, UnitesOverlapsAndDropsEmptyOnes) {
    const auto m = merge_intervals({{50, 60}, {0, 10}, {5, 20}, {20, 30}, {40, 40}, {45, 44}});
    ASSERT_EQ(m.size(), 2u);
    EXPECT_EQ(m[0].start_ns, 0);
    EXPECT_EQ(m[0].end_ns, 30);  // touching intervals join
    EXPECT_EQ(m[1].start_ns, 50);
    EXPECT_DOUBLE_EQ(total_seconds(m), 40e-9);
}

TEST(Timeline, BusyIdleAndGapsOfOneDevice) {
    ActivityLog log;
    // Two streams overlap for 0-100 us; then a 400 us hole; then 100 us on stream 2.
    log.kernels = {kernel(1, 0, 100'000), kernel(2, 50'000, 100'000), kernel(2, 500'000, 600'000)};
    const auto t = build_timeline(log);
    ASSERT_EQ(t.devices.size(), 1u);
    const auto& d = t.devices[0];
    EXPECT_EQ(d.window.start_ns, 0);
    EXPECT_EQ(d.window.end_ns, 600'000);
    EXPECT_NEAR(d.busy_s, 200e-6, 1e-12);  // 100 us + 100 us, overlap counted once
    EXPECT_NEAR(d.kernel_s, 200e-6, 1e-12);
    EXPECT_NEAR(d.idle_s, 400e-6, 1e-12);
    ASSERT_EQ(d.gaps.size(), 1u);
    EXPECT_EQ(d.gaps[0].start_ns, 100'000);
    EXPECT_EQ(d.gaps[0].end_ns, 500'000);
    ASSERT_EQ(t.streams.size(), 2u);  // a track per stream
    EXPECT_EQ(t.streams[0].stream, 1u);
    EXPECT_EQ(t.streams[0].kernels, 1u);
    EXPECT_EQ(t.streams[1].kernels, 2u);
    EXPECT_NEAR(t.streams[1].busy_s, 150e-6, 1e-12);
    EXPECT_EQ(t.kernel_count, 3u);
}

TEST(Timeline, ShortGapsCountAsIdleButAreNotListed) {
    ActivityLog log;
    // Back-to-back kernels 3 us apart: idle, but not a gap worth showing (min 10 us).
    log.kernels = {kernel(1, 0, 10'000), kernel(1, 13'000, 20'000), kernel(1, 40'000, 50'000)};
    const auto t = build_timeline(log);
    const auto& d = t.devices.at(0);
    EXPECT_NEAR(d.idle_s, 23e-6, 1e-12);
    ASSERT_EQ(d.gaps.size(), 1u);
    EXPECT_EQ(d.gaps[0].start_ns, 20'000);
    EXPECT_EQ(d.gaps[0].end_ns, 40'000);
}

TEST(Timeline, WindowCountsIdleTimeBeforeAndAfterTheGpuWork) {
    ActivityLog log;
    log.kernels = {kernel(1, 1'000'000, 2'000'000)};
    TimelineOptions o;
    o.window = Interval{0, 4'000'000};  // the process lived 4 ms; the GPU worked 1 ms
    const auto t = build_timeline(log, o);
    const auto& d = t.devices.at(0);
    EXPECT_NEAR(d.busy_s, 1e-3, 1e-12);
    EXPECT_NEAR(d.idle_s, 3e-3, 1e-12);
    ASSERT_EQ(d.gaps.size(), 2u);  // leading and trailing idle
    EXPECT_EQ(d.gaps[0].start_ns, 0);
    EXPECT_EQ(d.gaps[1].end_ns, 4'000'000);
}

TEST(Timeline, KernelsOutsideTheWindowAreClipped) {
    ActivityLog log;
    log.kernels = {kernel(1, 0, 2'000), kernel(1, 3'000, 10'000)};
    TimelineOptions o;
    o.window = Interval{1'000, 5'000};
    o.min_gap_ns = 0;
    const auto t = build_timeline(log, o);
    const auto& d = t.devices.at(0);
    EXPECT_NEAR(d.busy_s, 3e-6, 1e-15);  // 1-2 us and 3-5 us
    EXPECT_NEAR(d.idle_s, 1e-6, 1e-15);
}

TEST(Timeline, DevicesAreSeparate) {
    ActivityLog log;
    log.kernels = {kernel(1, 0, 1'000, 0), kernel(1, 0, 5'000, 1)};
    const auto t = build_timeline(log);
    ASSERT_EQ(t.devices.size(), 2u);
    EXPECT_EQ(t.devices[1].device, 1u);
    EXPECT_NEAR(t.devices[1].busy_s, 5e-6, 1e-15);
}

TEST(Timeline, BytesCopiedEachWayAndPageableCopies) {
    ActivityLog log;
    log.copies = {copy(CopyKind::host_to_device, MemoryKind::pinned, 1 << 20, 0, 40'000),
                  copy(CopyKind::host_to_device, MemoryKind::pageable, 2 << 20, 50'000, 250'000),
                  copy(CopyKind::device_to_host, MemoryKind::pinned, 4096, 300'000, 302'000)};
    const auto t = build_timeline(log);
    EXPECT_EQ(t.copies.at(CopyKind::host_to_device).bytes, 3u << 20);
    EXPECT_EQ(t.copies.at(CopyKind::host_to_device).count, 2u);
    EXPECT_NEAR(t.copies.at(CopyKind::host_to_device).seconds, 240e-6, 1e-12);
    EXPECT_EQ(t.copies.at(CopyKind::device_to_host).bytes, 4096u);
    EXPECT_EQ(t.copies.count(CopyKind::device_to_device), 0u);  // none: absent, not zero
    EXPECT_EQ(t.pageable_copies.bytes, 2u << 20);
    EXPECT_EQ(t.pageable_copies.count, 1u);
    const auto& d = t.devices.at(0);
    EXPECT_NEAR(d.copy_s, 242e-6, 1e-12);
    EXPECT_NEAR(d.kernel_s, 0, 1e-15);
    EXPECT_EQ(t.streams.at(0).copies, 3u);
}

TEST(Timeline, HostWaitsCountOnlyHostBlockingSynchronisation) {
    ActivityLog log;
    log.syncs = {
        {SyncKind::stream_synchronize, 1, 7, 1, 0, 100},
        {SyncKind::context_synchronize, 1, 0xffffffff, 2, 50, 150},  // overlaps: counted once
        {SyncKind::stream_wait_event, 1, 7, 3, 1000, 5000}};  // blocks a stream, not the host
    log.overheads = {{"cupti_buffer_flush", 0, 30}};
    const auto t = build_timeline(log);
    EXPECT_NEAR(t.host_sync_wait_s, 150e-9, 1e-18);
    EXPECT_NEAR(t.overhead_s, 30e-9, 1e-18);
    EXPECT_TRUE(t.devices.empty());  // no GPU operation: no device timeline
}

TEST(KernelDurations, GroupedByNameInLaunchOrder) {
    ActivityLog log;
    auto a = kernel(1, 5'000, 6'000);
    auto b = kernel(1, 0, 2'000);
    a.name = b.name = "gemm";
    log.kernels = {a, b, kernel(2, 100, 400)};
    const auto d = kernel_durations(log);
    ASSERT_EQ(d.at("gemm").size(), 2u);
    EXPECT_NEAR(d.at("gemm")[0], 2e-6, 1e-15);  // the earlier one first
    EXPECT_NEAR(d.at("gemm")[1], 1e-6, 1e-15);
}

TEST(ActivityLog, AppendKeepsEverythingAndSumsDrops) {
    ActivityLog a, b;
    a.kernels = {kernel(1, 0, 1)};
    a.dropped_records = 2;
    b.kernels = {kernel(1, 2, 3)};
    b.dropped_records = 3;
    b.ignored_kinds["kind 5"] = 4;
    a.append(std::move(b));
    EXPECT_EQ(a.kernels.size(), 2u);
    EXPECT_EQ(a.dropped_records, 5u);
    EXPECT_EQ(a.ignored_kinds.at("kind 5"), 4u);
    EXPECT_FALSE(a.empty());
    EXPECT_TRUE(ActivityLog{}.empty());
}

TEST(ActivityNames, RoundTrip) {
    for (std::size_t i = 0; i < copy_kind_names.size(); ++i)
        EXPECT_EQ(parse_copy_kind(to_string(static_cast<CopyKind>(i))), static_cast<CopyKind>(i));
    for (std::size_t i = 0; i < memory_kind_names.size(); ++i)
        EXPECT_EQ(parse_memory_kind(to_string(static_cast<MemoryKind>(i))),
                  static_cast<MemoryKind>(i));
    for (std::size_t i = 0; i < sync_kind_names.size(); ++i)
        EXPECT_EQ(parse_sync_kind(to_string(static_cast<SyncKind>(i))), static_cast<SyncKind>(i));
    EXPECT_FALSE(parse_copy_kind("sideways"));
}

}  // namespace
}  // namespace ceiling::collectors::gpu
