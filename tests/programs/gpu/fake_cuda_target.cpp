// Stands in for a CUDA program under libceiling_inject_cuda.so where there is no GPU: a CPU
// program with NVTX ranges that writes, into $CEILING_CUDA_DIR, the activity file the
// injection library would leave for a host-to-device copy, two kernels, a memset and a
// stream synchronisation it "launched" inside those ranges. Its own pid, thread id and
// CLOCK_MONOTONIC times, and the library's own writer functions (cuda_activity_file.cpp),
// so `ceiling run`'s reading path is exercised end to end. Without CEILING_CUDA_DIR (ceiling
// built without CUPTI does not set it) it writes nothing and says so.
//
//   fake_cuda_target   step{upload{copy 64 MiB}, gemm{kernel}, kernel, sync 45 ms}, memset
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "agent/inject/cuda_activity_file.hpp"

namespace {

namespace g = ceiling::collectors::gpu;
namespace inject = ceiling::inject;

std::int64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace

int main() {
    const std::int64_t load_ns = now_ns();
    const auto pid = static_cast<std::uint32_t>(::getpid());
    const auto tid = static_cast<std::uint32_t>(::gettid());
    g::ActivityLog log;
    std::uint32_t correlation = 0;
    // The API call that enqueues work, made now on this thread (a few microseconds long).
    auto launch = [&] {
        const std::int64_t t = now_ns();
        log.launches.push_back({++correlation, pid, tid, t, t + 5'000});
        return std::pair{correlation, t};
    };
    auto kernel = [&](std::string name, std::uint32_t corr, std::int64_t start,
                      std::int64_t end) {
        g::KernelActivity k;
        k.name = std::move(name);
        k.context = 1;
        k.stream = 7;
        k.correlation = corr;
        k.start_ns = start;
        k.end_ns = end;
        k.grid = {64, 64, 1};
        k.block = {16, 16, 1};
        log.kernels.push_back(k);
    };

    nvtxRangePushA("step");
    nvtxRangePushA("upload");
    const auto [copy_corr, copy_t] = launch();
    sleep_ms(30);  // a pageable copy: the host thread waits for it
    g::CopyActivity c;
    c.kind = g::CopyKind::host_to_device;
    c.src = g::MemoryKind::pageable;
    c.dst = g::MemoryKind::device;
    c.bytes = 64u << 20;
    c.context = 1;
    c.stream = 7;
    c.correlation = copy_corr;
    c.start_ns = copy_t + 10'000;
    c.end_ns = now_ns();
    log.copies.push_back(c);
    nvtxRangePop();
    nvtxRangePushA("gemm 1024 {ops=2.15G bytes=12.6M precision=fp32 engine=vector device=gpu}");
    const auto [gemm_corr, gemm_t] = launch();
    nvtxRangePop();
    const auto [reduce_corr, reduce_t] = launch();  // in "step" after its children closed
    const std::int64_t wait_start = now_ns();
    sleep_ms(45);  // cudaStreamSynchronize: the host waits for both kernels
    const std::int64_t wait_end = now_ns();
    kernel("_Z4gemmPKfS0_Pfi", gemm_corr, gemm_t + 20'000, wait_start + 20'000'000);
    kernel("_Z6reducePKfPf", reduce_corr, wait_start + 20'000'000, wait_end - 1'000'000);
    log.syncs.push_back({g::SyncKind::stream_synchronize, 1, 7, ++correlation, wait_start, wait_end});
    nvtxRangePop();
    const auto [memset_corr, memset_t] = launch();  // outside any range
    log.memsets.push_back({4096, 0, 1, 7, memset_corr, memset_t + 5'000, memset_t + 1'000'000});
    sleep_ms(2);

    const char* dir = std::getenv(inject::cuda_dir_env);
    if (!dir || !*dir) {
        std::puts("fake_cuda_target: no CEILING_CUDA_DIR: no activity written");
        return 0;
    }
    const std::string path = std::string(dir) + "/" + std::to_string(pid) + "-" +
                             std::to_string(load_ns) + ".cuda.jsonl";
    FILE* out = std::fopen(path.c_str(), "w");
    if (!out) {
        std::perror(path.c_str());
        return 1;
    }
    std::fprintf(out, "%s\n",
                 inject::header_line(static_cast<int>(pid), static_cast<std::uint64_t>(load_ns),
                                     std::nullopt, false)
                     .c_str());
    for (const auto& line : inject::activity_lines(log)) std::fprintf(out, "%s\n", line.c_str());
    std::fprintf(out, "%s\n", inject::end_line(now_ns()).c_str());
    return std::fclose(out) == 0 ? 0 : 1;
}
