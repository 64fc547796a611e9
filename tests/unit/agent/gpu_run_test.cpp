// The CUDA hand-off file (written by the injection library, read by `ceiling run`), what run
// makes of it (counters, the device wait and copy evidence the decision table reads, trace
// tracks), the GPU theoretical peaks and the GPU section of `ceiling machine`'s table.
// Recorded values, no GPU.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "agent/inject/cuda_activity_file.hpp"
#include "agent/machine/gpu_machine.hpp"
#include "diagnosis/peak_table.hpp"
#include "agent/run/gpu_run.hpp"
#include "agent/judge/judge_record.hpp"
#include "agent/output/gpu_machine_table.hpp"
#include "collectors/cupti/gpu_probe.hpp"

namespace ceiling {
namespace {

namespace fs = std::filesystem;
namespace g = collectors::gpu;

class TempDir {
public:
    TempDir() : path_(fs::temp_directory_path() / ("ceiling-gpu-run-" + std::to_string(::getpid()) + "-" + std::to_string(n_++))) {
        fs::create_directories(path_);
    }
    ~TempDir() { fs::remove_all(path_); }
    const fs::path& path() const { return path_; }

private:
    static inline int n_ = 0;
    fs::path path_;
};

g::ActivityLog recorded_log() {
    g::ActivityLog log;
    g::KernelActivity k;
    k.name = "_Z4gemvPKfS0_Pf";
    k.context = 1;
    k.stream = 7;
    k.grid = {2048, 1, 1};
    k.block = {256, 1, 1};
    k.start_ns = 2'000'000;
    k.end_ns = 2'100'000;
    log.kernels.push_back(k);
    k.start_ns = 3'000'000;
    k.end_ns = 3'120'000;
    log.kernels.push_back(k);
    g::CopyActivity c;
    c.kind = g::CopyKind::host_to_device;
    c.src = g::MemoryKind::pageable;
    c.dst = g::MemoryKind::device;
    c.bytes = 64 << 20;
    c.context = 1;
    c.stream = 7;
    c.start_ns = 1'000'000;
    c.end_ns = 1'900'000;
    log.copies.push_back(c);
    log.syncs.push_back({g::SyncKind::stream_synchronize, 1, 7, 9, 2'000'000, 3'200'000});
    log.memsets.push_back({4096, 0, 1, 7, 3, 900'000, 910'000});
    log.overheads.push_back({"cupti_buffer_flush", 100, 200});
    log.launches.push_back({3, 7, 8, 1'950'000, 1'960'000});  // the memset's call
    return log;
}

void write_file(const fs::path& path, const std::vector<std::string>& lines) {
    std::ofstream out(path);
    for (const auto& l : lines) out << l << "\n";
}

TEST(CudaActivityFile, RoundTripsEveryRecordKind) {
    TempDir dir;
    std::vector<std::string> lines = {inject::header_line(4242, 777, 130001u, true)};
    for (auto& l : inject::activity_lines(recorded_log())) lines.push_back(l);
    lines.push_back(inject::metrics_line(1, 0, "_Z4gemvPKfS0_Pf",
                                         {{"dram__bytes_read.sum", 536870912}, {"dram__bytes_write.sum", 65536},
                                          {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 0},
                                          {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 0},
                                          {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 134217728}}));
    lines.push_back(inject::error_line("kernel metrics", "counters refused", "run as root"));
    lines.push_back(inject::end_line(4'000'000));
    write_file(dir.path() / "4242-777.cuda.jsonl", lines);

    const auto f = inject::read_cuda_activity_file(dir.path() / "4242-777.cuda.jsonl");
    EXPECT_EQ(f.pid, 4242);
    EXPECT_EQ(f.load_ns, 777u);
    EXPECT_TRUE(f.metrics_requested);
    EXPECT_TRUE(f.complete);
    EXPECT_EQ(f.malformed_lines, 0u);
    ASSERT_EQ(f.log.kernels.size(), 2u);
    EXPECT_EQ(f.log.kernels[0].name, "_Z4gemvPKfS0_Pf");
    EXPECT_EQ(f.log.kernels[0].grid[0], 2048);
    ASSERT_EQ(f.log.copies.size(), 1u);
    EXPECT_EQ(f.log.copies[0].kind, g::CopyKind::host_to_device);
    EXPECT_EQ(f.log.copies[0].src, g::MemoryKind::pageable);
    EXPECT_EQ(f.log.copies[0].bytes, 64u << 20);
    ASSERT_EQ(f.log.syncs.size(), 1u);
    EXPECT_EQ(f.log.syncs[0].kind, g::SyncKind::stream_synchronize);
    EXPECT_EQ(f.log.memsets.size(), 1u);
    EXPECT_EQ(f.log.overheads.size(), 1u);
    ASSERT_EQ(f.log.launches.size(), 1u);
    EXPECT_EQ(f.log.launches[0].correlation, 3u);
    EXPECT_EQ(f.log.launches[0].process, 7u);
    EXPECT_EQ(f.log.launches[0].thread, 8u);
    EXPECT_EQ(f.log.launches[0].start_ns, 1'950'000);
    ASSERT_EQ(f.metrics.size(), 1u);
    EXPECT_EQ(f.metrics[0].values.at("dram__bytes_read.sum"), 536870912);
    ASSERT_EQ(f.errors.size(), 1u);
    EXPECT_EQ(f.errors[0], "kernel metrics: counters refused (fix: run as root)");
}

TEST(CudaActivityFile, ACrashLeavesAReadableFileWithoutItsEnd) {
    TempDir dir;
    std::vector<std::string> lines = {inject::header_line(1, 5, std::nullopt, false)};
    for (auto& l : inject::activity_lines(recorded_log())) lines.push_back(l);
    lines.push_back(R"({"type":"kernel","name":"cut of)");  // the last line, cut by a crash
    write_file(dir.path() / "1-5.cuda.jsonl", lines);
    const auto run = measure::read_gpu_run(dir.path());
    ASSERT_EQ(run.processes.size(), 1u);
    EXPECT_EQ(run.processes[0].pid, 1);
    EXPECT_EQ(run.processes[0].log.kernels.size(), 2u);
    ASSERT_FALSE(run.notes.empty());
    EXPECT_NE(run.notes.back().find("ended before"), std::string::npos);
}

TEST(CudaActivityFile, RefusesFilesWithoutHeaderOrOfAnotherVersion) {
    TempDir dir;
    write_file(dir.path() / "a.cuda.jsonl", {R"({"type":"end","t_ns":1})"});
    EXPECT_THROW(inject::read_cuda_activity_file(dir.path() / "a.cuda.jsonl"), std::invalid_argument);
    write_file(dir.path() / "b.cuda.jsonl", {R"({"type":"header","version":99,"pid":1,"load_ns":1})"});
    EXPECT_THROW(inject::read_cuda_activity_file(dir.path() / "b.cuda.jsonl"), std::invalid_argument);
}

std::optional<double> counter(const std::vector<CounterValue>& counters, const std::string& name) {
    for (const auto& c : counters)
        if (c.name == name) return c.value;
    return std::nullopt;
}

TEST(GpuRun, CountersCarryTheDeviceWaitAndCopyTime) {
    TempDir dir;
    std::vector<std::string> lines = {inject::header_line(7, 1, std::nullopt, false)};
    for (auto& l : inject::activity_lines(recorded_log())) lines.push_back(l);
    lines.push_back(inject::end_line(5'000'000));
    write_file(dir.path() / "7-1.cuda.jsonl", lines);
    // The execution ran from 0 to 5 ms; the GPU worked 0.9 + 0.01 + 0.1 + 0.12 ms of it.
    const auto run = measure::read_gpu_run(dir.path(), g::Interval{0, 5'000'000});
    ASSERT_EQ(run.timeline.devices.size(), 1u);
    EXPECT_NEAR(run.timeline.devices[0].busy_s, 1.13e-3, 1e-12);
    EXPECT_NEAR(run.timeline.devices[0].idle_s, 3.87e-3, 1e-12);

    const auto counters = measure::gpu_counters(run);
    EXPECT_NEAR(counter(counters, "host_sync_wait_s").value_or(-1), 1.2e-3, 1e-12);  // 2.0 -> 3.2 ms
    EXPECT_NEAR(counter(counters, "gpu_copy_s").value_or(-1), 0.9e-3, 1e-12);
    EXPECT_EQ(counter(counters, "h2d_bytes"), double(64 << 20));
    EXPECT_EQ(counter(counters, "pageable_copy_bytes"), double(64 << 20));
    EXPECT_FALSE(counter(counters, "d2h_bytes"));  // no copy that way: absent, not 0
    EXPECT_EQ(counter(counters, "gpu_kernels"), 2.0);
    for (const auto& c : counters) EXPECT_EQ(c.source, Source::cupti);

    EXPECT_TRUE(measure::gpu_counters(measure::GpuRun{}).empty());  // no GPU seen: unknown
}

// The counters of each execution reach the decision table's device rules through
// judge_record: 1.2 ms of 5 ms waiting (24 % >= 20 %), 0.9 ms copying (18 % >= 10 %).
TEST(GpuRun, DeviceWaitAndCopySharesReachTheDecisionTable) {
    measure::GpuRun gpu;
    gpu.processes.push_back({7, recorded_log(), {}});
    gpu.timeline = g::build_timeline(recorded_log(), {});
    RunRecord record;
    Execution e;
    e.wall_s = 5e-3;
    e.counters = measure::gpu_counters(gpu);
    record.executions = {e};
    record.whole.durations_s = {5e-3};
    record.whole.duration_s = summarize(record.whole.durations_s);
    judge::judge_record(record);
    ASSERT_TRUE(record.diagnosis);
    // The signal's value, or NaN when the rule is missing or its value unknown.
    auto share = [&](const std::string& name) -> std::optional<double> {
        for (const auto& s : record.diagnosis->system)
            if (s.name == name) return s.value;
        ADD_FAILURE() << "no rule " << name;
        return std::nullopt;
    };
    auto fired = [&](const std::string& name) {
        for (const auto& s : record.diagnosis->system)
            if (s.name == name) return s.fired;
        return false;
    };
    EXPECT_NEAR(share("device_wait_share").value_or(-1), 0.24, 1e-9);
    EXPECT_TRUE(fired("device_wait_share"));
    EXPECT_NEAR(share("device_copy_share").value_or(-1), 0.18, 1e-9);
    EXPECT_TRUE(fired("device_copy_share"));

    // Without GPU activity the shares are unknown, never 0.
    record.executions[0].counters.clear();
    judge::judge_record(record);
    EXPECT_FALSE(share("device_wait_share"));
    EXPECT_FALSE(share("device_copy_share"));
}

TEST(GpuRun, TraceHasAProcessPerDeviceATrackPerStreamAndHostWaits) {
    measure::GpuRun run;
    run.processes.push_back({7, recorded_log(), {}});
    measure::NvtxCapture capture;
    measure::RegionInstance range;
    range.name = range.path = "step";
    range.pid = 7;
    range.tid = 8;
    range.start_ns = 1'900'000;
    range.end_ns = 2'000'000;
    capture.instances.push_back(range);
    const auto ops = measure::place_gpu_operations(run, capture);
    store::ChromeTrace trace(1'000'000);
    int sort = 0;
    measure::add_gpu_tracks(trace, run, ops, capture, 5000, "run 1", 7, sort);
    const auto events = trace.to_json()["traceEvents"];
    int kernels = 0, copies = 0, waits = 0;
    std::set<std::string> processes, threads;
    for (const auto& e : events) {
        if (e["ph"] == "M" && e["name"] == "process_name") processes.insert(e["args"]["name"]);
        if (e["ph"] == "M" && e["name"] == "thread_name") threads.insert(e["args"]["name"]);
        if (e.value("cat", "") == "kernel") {
            ++kernels;
            EXPECT_EQ(e["pid"], 5000);
            EXPECT_EQ(e["tid"], 1);
            EXPECT_EQ(e["args"]["grid"][0], 2048);
        }
        if (e.value("cat", "") == "copy") {
            ++copies;
            EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 0.0);     // relative to the origin
            EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 900.0);  // microseconds
        }
        if (e.value("cat", "") == "sync") {
            ++waits;
            EXPECT_EQ(e["pid"], 7);  // on the program's own process
        }
        if (e.value("cat", "") == "memset") {
            // Launched at 1.95 ms on thread 8, inside "step": the trace says so.
            EXPECT_EQ(e["args"]["path"], "step");
        }
    }
    EXPECT_EQ(kernels, 2);
    EXPECT_EQ(copies, 1);
    EXPECT_EQ(waits, 1);
    EXPECT_TRUE(processes.count("GPU 0 (run 1)"));
    EXPECT_TRUE(threads.count("stream 7 (context 1)"));
    EXPECT_TRUE(threads.count("waits on the GPU"));
}

TEST(GpuRun, InjectionEnvironment) {
    TempDir dir;
    const auto lib = dir.path() / "libceiling_inject_cuda.so";
    std::ofstream(lib) << "x";
    const auto env = measure::cuda_injection_environment(dir.path(), true, lib);
    if (!g::built_with_cupti()) {
        EXPECT_NE(env.unavailable.find("built without CUPTI"), std::string::npos);
        return;
    }
    EXPECT_TRUE(env.unavailable.empty());
    EXPECT_EQ(env.variables.at("CUDA_INJECTION64_PATH"), lib.string());
    EXPECT_EQ(env.variables.at("CEILING_CUDA_DIR"), dir.path().string());
    EXPECT_EQ(env.variables.at("CEILING_CUDA_METRICS"), "1");
    // Timed executions never replay kernels, whatever the user's environment says.
    EXPECT_EQ(measure::cuda_injection_environment(dir.path(), false, lib).variables.at("CEILING_CUDA_METRICS"),
              "0");
    const auto missing = measure::cuda_injection_environment(dir.path(), false, dir.path() / "nope.so");
    EXPECT_NE(missing.unavailable.find("not found"), std::string::npos);
    EXPECT_TRUE(missing.variables.empty());
}

TEST(GpuTheoretical, HopperPeaksFromProperties) {
    // H200 SXM: 132 SMs at 1980 MHz peak.
    const auto bf16 = gpu_theoretical_ops(9, 0, 132, 1.98e9, Precision::bf16, Engine::matrix);
    ASSERT_TRUE(bf16);
    EXPECT_DOUBLE_EQ(bf16->value, 132 * 1.98e9 * 4096);  // 1070 TFLOP/s dense
    EXPECT_NE(bf16->basis.find("132 SMs"), std::string::npos);
    EXPECT_DOUBLE_EQ(gpu_theoretical_ops(9, 0, 132, 1.98e9, Precision::fp32, Engine::vector)->value,
                     132 * 1.98e9 * 256);
    EXPECT_FALSE(gpu_theoretical_ops(7, 5, 40, 1.5e9, Precision::fp32, Engine::vector));  // not in the table
    EXPECT_FALSE(gpu_theoretical_ops(9, 0, 132, std::nullopt, Precision::fp32, Engine::vector));
    // HBM3e: 3201 MHz, 6144-bit bus -> 4.92 TB/s.
    EXPECT_DOUBLE_EQ(gpu_theoretical_dram(3.201e9, 6144)->value, 2 * 3.201e9 * 768);
    EXPECT_FALSE(gpu_theoretical_dram(std::nullopt, 6144));
    // PCIe 5.0 x16: 32 GT/s x 16 lanes x 128/130 / 8 = 63.0 GB/s.
    EXPECT_NEAR(pcie_theoretical("32.0 GT/s PCIe", "16")->value, 63.015e9, 1e7);
    EXPECT_NEAR(pcie_theoretical("2.5 GT/s PCIe", "16")->value, 4e9, 1);  // 8b/10b
    EXPECT_FALSE(pcie_theoretical("Unknown", "16"));
}

TEST(GpuMachineTable, ShowsMeasuredBesideTheoretical) {
    MachineProfile p;
    GpuProfile g;
    g.name = "NVIDIA H200";
    g.compute_capability_major = 9;
    g.multiprocessors = 132;
    Summary s;
    s.median = 7.8e14;
    g.compute_roofs.push_back({"bf16_cublas", Precision::bf16, Engine::matrix, true, "library roof: cuBLAS", s, 1.07e15, "", false});
    s.median = 4.3e12;
    g.bandwidth_roofs.push_back({"hbm_copy", "HBM", "copy", false, "our kernel", 2u << 30, s, 4.9e12, "", false});
    p.gpus.push_back(g);
    std::ostringstream out;
    output::render_gpu_profiles(p, out);
    const auto text = out.str();
    EXPECT_NE(text.find("NVIDIA H200"), std::string::npos);
    EXPECT_NE(text.find("bf16_cublas"), std::string::npos);
    EXPECT_NE(text.find("library roof"), std::string::npos);
    EXPECT_NE(text.find("73%"), std::string::npos);  // 780 / 1070
    EXPECT_NE(text.find("88%"), std::string::npos);  // 4.3 / 4.9
}

}  // namespace
}  // namespace ceiling
