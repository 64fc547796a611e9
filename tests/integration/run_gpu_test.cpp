// `ceiling run` on GPU activity without a GPU: a stand-in program writes the CUDA injection
// library's activity file (through the library's own writer) into the directory run gives
// it, so run's whole GPU path runs for real: reading the file, nesting kernels and copies
// under the NVTX ranges that launched them, judging the kernel against the profile's GPU
// roofs, device wait and copy shares in the decision table, GPU tracks in the trace.
#include <gtest/gtest.h>

#include <algorithm>

#include "agent/store/profile_store.hpp"
#include "tests/integration/run_support.hpp"

namespace ceiling::testing {
namespace {

const std::string synthetic = std::string(CEILING_TEST_DATA) + "/profile_synthetic.json";

std::optional<std::string> note_starting(const RunRecord& r, const std::string& prefix) {
    for (const auto& n : r.notes)
        if (n.rfind(prefix, 0) == 0) return n;
    return std::nullopt;
}

const SystemSignal* signal(const RunRecord& r, const std::string& name) {
    if (!r.diagnosis) return nullptr;
    for (const auto& s : r.diagnosis->system)
        if (s.name == name) return &s;
    return nullptr;
}

#ifdef CEILING_FAKE_CUDA_TARGET
TEST(RunGpu, RecordedActivityBecomesNestedJudgedRegionsSharesAndTracks) {
    TempDir dir;
    MachineProfile profile = store::load_profile(synthetic);
    GpuProfile gpu;
    gpu.name = "synthetic GPU";
    Summary s;
    s.median = 6.0e13;
    gpu.compute_roofs = {{"fp32_fma", Precision::fp32, Engine::vector, false, "ffma", s,
                          std::nullopt, "", false}};
    s.median = 4.0e12;
    gpu.bandwidth_roofs = {{"hbm_copy", "HBM", "copy", false, "kernel", 2u << 30, s,
                            std::nullopt, "", false}};
    profile.gpus = {gpu};
    store::save_profile(profile, dir.path() / "profile.json");

    const auto r = ceiling_run(dir.path() / "r.json",
                               {"-q", "--repeat", "2", "--profile", (dir.path() / "profile.json").string(),
                                "--trace", (dir.path() / "t.json").string()},
                               {CEILING_FAKE_CUDA_TARGET});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const RunRecord rec = read_record(dir.path() / "r.json");
    if (const auto why = note_starting(rec, "GPU activity not recorded")) GTEST_SKIP() << *why;
    EXPECT_FALSE(note_starting(rec, "GPU activity: none recorded"));

    // Kernels and copies nested under the range whose thread launched them.
    const std::string gemm = "step/gemm 1024/gemm(float const*, float const*, float*, int)";
    const RecordedRegion* k = rec.region(gemm);
    ASSERT_TRUE(k) << "no region " << gemm;
    EXPECT_EQ(k->kind, RegionKind::kernel);
    EXPECT_EQ(k->parent, "step/gemm 1024");
    EXPECT_EQ(k->instances, 2u);
    EXPECT_EQ(k->labels.at("device"), "gpu0");
    ASSERT_TRUE(k->measurement.work);  // the range's declared GPU work
    EXPECT_EQ(k->measurement.work->device, Device::gpu);
    ASSERT_TRUE(rec.region("step/upload/copy h2d"));
    EXPECT_EQ(rec.region("step/upload/copy h2d")->labels.at("operation"), "copy");
    ASSERT_TRUE(rec.region("step/reduce(float const*, float*)"));
    ASSERT_TRUE(rec.region("memset"));
    EXPECT_EQ(rec.region("memset")->parent, "");

    // Judged against the profile's GPU roofs.
    const auto v = std::find_if(rec.region_diagnoses.begin(), rec.region_diagnoses.end(),
                                [&](const RegionVerdict& x) { return x.path == gemm; });
    ASSERT_NE(v, rec.region_diagnoses.end());
    ASSERT_FALSE(v->diagnosis.roofs.empty());
    EXPECT_EQ(v->diagnosis.roofs[0].roof, "fp32_fma");
    ASSERT_TRUE(v->diagnosis.roofs[0].achieved_per_s);

    // 45 ms of a ~80 ms run waiting on the device, 30 ms copying: both rules fire.
    for (const char* name : {"device_wait_share", "device_copy_share"}) {
        const SystemSignal* sig = signal(rec, name);
        ASSERT_TRUE(sig && sig->value) << name;
        EXPECT_TRUE(sig->fired) << name << " " << *sig->value;
    }
    for (const Execution* e : rec.timed_executions()) {
        const auto c = std::find_if(e->counters.begin(), e->counters.end(),
                                    [](const CounterValue& x) { return x.name == "gpu_kernels"; });
        ASSERT_NE(c, e->counters.end());
        EXPECT_EQ(c->value, 2.0);
        EXPECT_EQ(c->source, Source::cupti);
    }

    // The trace: a GPU process per execution, kernels on their stream with the range's path.
    const auto trace = read_json(dir.path() / "t.json")["traceEvents"];
    bool gpu_process = false, kernel_with_path = false, waits = false;
    for (const auto& e : trace) {
        if (e["ph"] == "M" && e["name"] == "process_name")
            gpu_process = gpu_process || e["args"]["name"] == "GPU 0 (run 2)";
        if (e.value("cat", "") == "kernel" && e.contains("args") && e["args"].contains("path"))
            kernel_with_path = kernel_with_path || e["args"]["path"] == "step/gemm 1024";
        waits = waits || e.value("cat", "") == "sync";
    }
    EXPECT_TRUE(gpu_process);
    EXPECT_TRUE(kernel_with_path);
    EXPECT_TRUE(waits);
}

// --gpu-counters runs the program once more for the counters, kept out of the timing; the
// stand-in writes no metrics lines (no counters without a GPU), so no kernel is counted and
// the record says so rather than judging from zeros.
TEST(RunGpu, TheCountingExecutionIsExtraUntimedAndSaysWhatItCounted) {
    TempDir dir;
    const auto r = ceiling_run(dir.path() / "r.json", {"-q", "--repeat", "2", "--gpu-counters"},
                               {CEILING_FAKE_CUDA_TARGET});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const RunRecord rec = read_record(dir.path() / "r.json");
    if (const auto why = note_starting(rec, "GPU activity not recorded")) GTEST_SKIP() << *why;
    ASSERT_EQ(rec.executions.size(), 3u);
    EXPECT_TRUE(rec.executions.back().counting);
    EXPECT_EQ(rec.timed_executions().size(), 2u);
    const RecordedRegion* k =
        rec.region("step/gemm 1024/gemm(float const*, float const*, float*, int)");
    ASSERT_TRUE(k);
    EXPECT_EQ(k->instances, 2u);  // the timed executions' kernels only
    EXPECT_FALSE(k->measurement.measured_ops);
    EXPECT_TRUE(note_starting(rec, "--gpu-counters: no kernel was counted"));
}
#endif

TEST(RunGpu, GpuCountersOnAProgramWithoutKernelsRunItNoMoreThanAsked) {
    TempDir dir;
    const auto r =
        ceiling_run(dir.path() / "r.json", {"-q", "--gpu-counters"}, {run_target, "exit", "3"});
    ASSERT_EQ(r.exit_code, 3) << r.err;  // the program's status, as without the flag
    const RunRecord rec = read_record(dir.path() / "r.json");
    ASSERT_EQ(rec.executions.size(), 1u);
    EXPECT_FALSE(rec.executions[0].counting);
    EXPECT_TRUE(note_starting(rec, "--gpu-counters: no GPU kernel"));
}

TEST(RunGpu, AProgramWithoutGpuActivitySaysWhy) {
    TempDir dir;
    const auto r = ceiling_run(dir.path() / "r.json", {"-q"}, {run_target, "exit", "0"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const RunRecord rec = read_record(dir.path() / "r.json");
    // Either this ceiling cannot trace CUDA, or the program never initialised it (no
    // driver here, or a CPU program): said, and no GPU counter reads as 0.
    const auto why = note_starting(rec, "GPU activity");
    ASSERT_TRUE(why) << "no note on GPU activity";
    EXPECT_NE(why->find(": "), std::string::npos) << *why;
    for (const auto& c : rec.whole.counters) EXPECT_NE(c.source, Source::cupti) << c.name;
    const SystemSignal* wait = signal(rec, "device_wait_share");
    ASSERT_TRUE(wait);
    EXPECT_FALSE(wait->value);
}

}  // namespace
}  // namespace ceiling::testing
