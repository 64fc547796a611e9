// Real CUPTI activity records (the structures CUPTI 13 hands out) decoded without a GPU, the
// way kineto's tests feed its profiler: build the struct, pass its CUpti_Activity* through.

#include <gtest/gtest.h>

#ifdef CEILING_HAVE_CUPTI
#include <cupti_activity.h>

#include "collectors/cupti/activity_decode.hpp"

namespace ceiling::collectors::gpu {
namespace {

const CUpti_Activity* as_activity(const void* r) { return static_cast<const CUpti_Activity*>(r); }

TEST(CuptiDecode, ConcurrentKernelRecord) {
    CUpti_ActivityKernel10 r{};
    r.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    r.name = "_Z11gemm_tiledPKfS0_Pfiii";
    r.deviceId = 0;
    r.contextId = 1;
    r.streamId = 13;
    r.correlationId = 42;
    r.start = 1'000'000;
    r.end = 1'250'000;
    r.gridX = 64;
    r.gridY = 32;
    r.gridZ = 1;
    r.blockX = 16;
    r.blockY = 16;
    r.blockZ = 1;
    r.registersPerThread = 40;
    r.staticSharedMemory = 8192;
    r.dynamicSharedMemory = 1024;
    ActivityLog log;
    decode_activity(as_activity(&r), log);
    ASSERT_EQ(log.kernels.size(), 1u);
    const auto& k = log.kernels[0];
    EXPECT_EQ(k.name, "_Z11gemm_tiledPKfS0_Pfiii");
    EXPECT_EQ(k.stream, 13u);
    EXPECT_EQ(k.correlation, 42u);
    EXPECT_EQ(k.end_ns - k.start_ns, 250'000);
    EXPECT_EQ(k.grid[0], 64);
    EXPECT_EQ(k.grid[1], 32);
    EXPECT_EQ(k.block[0], 16);
    EXPECT_EQ(k.registers_per_thread, 40);
    EXPECT_EQ(k.shared_memory_bytes, 9216);
}

TEST(CuptiDecode, KernelWithoutANameIsKept) {
    CUpti_ActivityKernel10 r{};
    r.kind = CUPTI_ACTIVITY_KIND_KERNEL;
    r.start = 1;
    r.end = 2;
    ActivityLog log;
    decode_activity(as_activity(&r), log);
    ASSERT_EQ(log.kernels.size(), 1u);
    EXPECT_EQ(log.kernels[0].name, "(unnamed kernel)");
}

TEST(CuptiDecode, MemcpyRecordsCarryDirectionAndMemoryKinds) {
    CUpti_ActivityMemcpy6 h2d{};
    h2d.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    h2d.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    h2d.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    h2d.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    h2d.bytes = 64 << 20;
    h2d.start = 10;
    h2d.end = 5'010;
    h2d.streamId = 7;
    CUpti_ActivityMemcpy6 d2h = h2d;
    d2h.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    d2h.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    d2h.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    d2h.bytes = 4096;
    CUpti_ActivityMemcpy6 array{};
    array.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    array.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_ATOD;  // arrays are device memory
    array.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_ARRAY;
    array.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC;
    ActivityLog log;
    for (const auto* r : {&h2d, &d2h, &array}) decode_activity(as_activity(r), log);
    ASSERT_EQ(log.copies.size(), 3u);
    EXPECT_EQ(log.copies[0].kind, CopyKind::host_to_device);
    EXPECT_EQ(log.copies[0].src, MemoryKind::pageable);
    EXPECT_EQ(log.copies[0].dst, MemoryKind::device);
    EXPECT_EQ(log.copies[0].bytes, 64u << 20);
    EXPECT_EQ(log.copies[0].stream, 7u);
    EXPECT_EQ(log.copies[1].kind, CopyKind::device_to_host);
    EXPECT_EQ(log.copies[1].dst, MemoryKind::pinned);
    EXPECT_EQ(log.copies[2].kind, CopyKind::device_to_device);
    EXPECT_EQ(log.copies[2].src, MemoryKind::array);
    EXPECT_EQ(log.copies[2].dst, MemoryKind::device);
    // Fed through the timeline: bytes each way.
    const auto t = build_timeline(log);
    EXPECT_EQ(t.copies.at(CopyKind::host_to_device).bytes, 64u << 20);
    EXPECT_EQ(t.pageable_copies.count, 1u);
}

TEST(CuptiDecode, PeerCopyMemsetSyncAndOverhead) {
    CUpti_ActivityMemcpyPtoP4 p2p{};
    p2p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    p2p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    p2p.srcKind = p2p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    p2p.bytes = 1 << 20;
    p2p.deviceId = 1;
    CUpti_ActivityMemset4 ms{};
    ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    ms.bytes = 256;
    ms.start = 100;
    ms.end = 200;
    ms.streamId = 3;
    CUpti_ActivitySynchronization2 sync{};
    sync.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    sync.start = 300;
    sync.end = 900;
    sync.streamId = 3;
    CUpti_ActivityOverhead3 oh{};
    oh.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    oh.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
    oh.start = 1000;
    oh.end = 1100;
    ActivityLog log;
    for (const void* r : {static_cast<const void*>(&p2p), static_cast<const void*>(&ms),
                          static_cast<const void*>(&sync), static_cast<const void*>(&oh)})
        decode_activity(as_activity(r), log);
    ASSERT_EQ(log.copies.size(), 1u);
    EXPECT_EQ(log.copies[0].kind, CopyKind::peer_to_peer);
    EXPECT_EQ(log.copies[0].device, 1u);
    ASSERT_EQ(log.memsets.size(), 1u);
    EXPECT_EQ(log.memsets[0].bytes, 256u);
    ASSERT_EQ(log.syncs.size(), 1u);
    EXPECT_EQ(log.syncs[0].kind, SyncKind::stream_synchronize);
    ASSERT_EQ(log.overheads.size(), 1u);
    EXPECT_EQ(log.overheads[0].kind, "cupti_buffer_flush");
    EXPECT_NEAR(build_timeline(log).host_sync_wait_s, 600e-9, 1e-18);
}

TEST(CuptiDecode, OtherKindsAreCountedNotDropped) {
    CUpti_ActivityKernel10 r{};
    r.kind = CUPTI_ACTIVITY_KIND_MARKER;  // NVTX through CUPTI: ours come from the NVTX library
    ActivityLog log;
    decode_activity(as_activity(&r), log);
    EXPECT_TRUE(log.empty());
    EXPECT_EQ(log.ignored_kinds.size(), 1u);
}

// Runtime and driver API records are the launch sites: which thread enqueued the work of
// the same correlation id, and when.
TEST(CuptiDecode, ApiRecordsBecomeLaunchCalls) {
    for (const auto kind : {CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER}) {
        CUpti_ActivityAPI r{};
        r.kind = kind;
        r.correlationId = 42;
        r.processId = 1234;
        r.threadId = 1240;
        r.start = 5'000;
        r.end = 9'000;
        ActivityLog log;
        decode_activity(as_activity(&r), log);
        ASSERT_EQ(log.launches.size(), 1u);
        EXPECT_EQ(log.launches[0].correlation, 42u);
        EXPECT_EQ(log.launches[0].process, 1234u);
        EXPECT_EQ(log.launches[0].thread, 1240u);
        EXPECT_EQ(log.launches[0].start_ns, 5'000);
        EXPECT_EQ(log.launches[0].end_ns, 9'000);
        EXPECT_TRUE(log.empty());  // a launch call alone is no GPU activity
        EXPECT_TRUE(log.ignored_kinds.empty());
    }
}

}  // namespace
}  // namespace ceiling::collectors::gpu
#else
TEST(CuptiDecode, SkippedWithoutCupti) { GTEST_SKIP() << "not built with CUPTI: record decoding is not compiled"; }
#endif
