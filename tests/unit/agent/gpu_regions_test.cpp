// GPU operations in a run record: each kernel, copy and memset placed under the NVTX range
// whose thread launched it (CUPTI correlation -> launching call -> range open on that
// thread), aggregated into regions, given the launching range's declared GPU work when that
// is unambiguous, and judged against the GPU roofs. Recorded activity, no GPU.

#include "agent/run/gpu_regions.hpp"

#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "agent/run/gpu_run.hpp"
#include "agent/judge/judge_record.hpp"
#include "agent/output/run_summary.hpp"

namespace ceiling {
namespace {

namespace g = collectors::gpu;
using measure::GpuOperation;

constexpr std::int64_t ms = 1'000'000;

measure::RegionInstance range(std::string name, std::string parent, int pid, int tid,
                              std::int64_t start, std::int64_t end,
                              std::optional<Work> work = std::nullopt) {
    measure::RegionInstance r;
    r.name = name;
    r.path = parent.empty() ? name : parent + "/" + name;
    r.parent = parent;
    r.pid = pid;
    r.tid = tid;
    r.start_ns = start;
    r.end_ns = end;
    r.depth = parent.empty() ? 0 : 1;
    r.work = work;
    return r;
}

Work gpu_work(Device device = Device::gpu) {
    Work w;
    w.ops = 2.0e9;
    w.compulsory_bytes = 12e6;
    w.device = device;
    return w;
}

// Process 100: "step" on thread 100 holds "gemm" (declares GPU work) and "prep" (declares
// CPU work); thread 101 has "other". Sorted as read_nvtx_capture sorts them.
measure::NvtxCapture capture() {
    measure::NvtxCapture c;
    c.instances = {range("step", "", 100, 100, 0, 100 * ms),
                   range("gemm", "step", 100, 100, 10 * ms, 30 * ms, gpu_work()),
                   range("prep", "step", 100, 100, 40 * ms, 50 * ms, gpu_work(Device::cpu)),
                   range("other", "", 100, 101, 0, 100 * ms)};
    return c;
}

g::KernelActivity kernel(std::string name, std::uint32_t correlation, std::int64_t start,
                         std::uint32_t device = 0) {
    g::KernelActivity k;
    k.name = std::move(name);
    k.device = device;
    k.context = 1;
    k.stream = 7;
    k.correlation = correlation;
    k.start_ns = start;
    k.end_ns = start + 2 * ms;
    return k;
}

measure::GpuRun activity() {
    measure::GpuProcess p{100, {}, {}};
    p.log.launches = {{1, 100, 100, 15 * ms, 15 * ms + 5000},   // in gemm
                      {2, 100, 100, 45 * ms, 45 * ms + 5000},   // in prep
                      {3, 100, 100, 60 * ms, 60 * ms + 5000},   // in step, its children closed
                      {4, 100, 101, 20 * ms, 20 * ms + 5000},   // in other, another thread
                      {6, 100, 100, 120 * ms, 120 * ms + 5000}};  // after every range
    p.log.kernels = {kernel("_Z4gemmPKfS0_Pfi", 1, 16 * ms), kernel("prep_kernel", 2, 46 * ms),
                     kernel("_Z6reducePKfPf", 3, 61 * ms), kernel("other_kernel", 4, 21 * ms),
                     kernel("lost_kernel", 5, 70 * ms), kernel("late_kernel", 6, 121 * ms)};
    g::CopyActivity copy;
    copy.kind = g::CopyKind::host_to_device;
    copy.bytes = 1 << 20;
    copy.correlation = 3;  // launched with the reduce kernel's call: same range
    copy.start_ns = 59 * ms;
    copy.end_ns = 60 * ms;
    p.log.copies = {copy};
    // Another process's correlation ids count from 1 too: its call 1 is not process 100's.
    measure::GpuProcess q{200, {}, {}};
    q.log.launches = {{1, 200, 200, 15 * ms, 15 * ms + 5000}};
    q.log.kernels = {kernel("child_kernel", 1, 17 * ms)};
    measure::GpuRun run;
    run.processes = {p, q};
    return run;
}

const GpuOperation& op(const std::vector<GpuOperation>& ops, const std::string& name) {
    for (const auto& o : ops)
        if (o.name == name) return o;
    throw std::runtime_error("no operation " + name);
}

TEST(GpuPlacement, EachOperationGoesUnderTheRangeOpenOnItsLaunchingThread) {
    const auto c = capture();
    const auto ops = measure::place_gpu_operations(activity(), c);
    ASSERT_EQ(ops.size(), 8u);
    auto path = [&](const std::string& name) -> std::string {
        const auto& o = op(ops, name);
        return o.range ? c.instances[*o.range].path : "(none)";
    };
    EXPECT_EQ(path("gemm(float const*, float const*, float*, int)"), "step/gemm");  // demangled
    EXPECT_EQ(path("prep_kernel"), "step/prep");
    EXPECT_EQ(path("reduce(float const*, float*)"), "step");
    EXPECT_EQ(path("copy h2d"), "step");
    EXPECT_EQ(path("other_kernel"), "other");
    EXPECT_EQ(path("late_kernel"), "(none)");  // launched outside every range
    EXPECT_TRUE(op(ops, "late_kernel").launched_by);
    EXPECT_EQ(path("lost_kernel"), "(none)");  // its launch call was not recorded
    EXPECT_FALSE(op(ops, "lost_kernel").launched_by);
    EXPECT_EQ(path("child_kernel"), "(none)");  // process 200's call, not process 100's
    EXPECT_EQ(op(ops, "child_kernel").launched_by, (std::pair{200, 200}));
    EXPECT_EQ(op(ops, "child_kernel").pid, 200);
}

MachineProfile profile_with_gpu() {
    MachineProfile p;
    GpuProfile gpu;
    gpu.name = "synthetic GPU";
    gpu.l2_bytes = 50 << 20;
    Summary s;
    s.median = 6.0e13;
    gpu.compute_roofs = {{"fp32_fma", Precision::fp32, Engine::vector, false, "ffma", s,
                          std::nullopt, "", false}};
    s.median = 4.0e12;
    gpu.bandwidth_roofs = {{"hbm_copy", "HBM", "copy", false, "kernel", 2u << 30, s,
                            std::nullopt, "", false}};
    p.gpus = {gpu};
    p.host.logical_cpus = 2;
    return p;
}

const RecordedRegion* find(const std::vector<RecordedRegion>& regions, const std::string& path) {
    for (const auto& r : regions)
        if (r.path == path) return &r;
    return nullptr;
}

// A record of `regions` judged against profile_with_gpu().
RunRecord judged(const std::vector<RecordedRegion>& regions) {
    RunRecord record;
    record.regions = regions;
    record.machine_profile = profile_with_gpu();
    judge::judge_record(record);
    return record;
}

// The diagnosis judge_record gave the region at `path`; null when it judged none.
const Diagnosis* diagnosis_of(const RunRecord& record, const std::string& path) {
    for (const auto& v : record.region_diagnoses)
        if (v.path == path) return &v.diagnosis;
    return nullptr;
}

TEST(GpuRegions, KernelsTakeTheirRangesGpuWorkAndAreJudgedAgainstTheGpuRoofs) {
    const auto c = capture();
    const auto ops = measure::place_gpu_operations(activity(), c);
    // Two timed executions that did the same.
    const auto out = measure::aggregate_gpu_regions({{&ops, &c}, {&ops, &c}}, std::regex("gemm"),
                                                    {"step", "step/gemm", "step/prep", "other"});
    const auto* gemm = find(out.regions, "step/gemm/gemm(float const*, float const*, float*, int)");
    ASSERT_TRUE(gemm);
    EXPECT_EQ(gemm->kind, RegionKind::kernel);
    EXPECT_EQ(gemm->parent, "step/gemm");
    EXPECT_EQ(gemm->instances, 2u);
    EXPECT_EQ(gemm->total_s_per_execution, (std::vector<double>{2e-3, 2e-3}));
    EXPECT_EQ(gemm->labels.at("device"), "gpu0");
    EXPECT_EQ(gemm->labels.at("operation"), "kernel");
    EXPECT_TRUE(gemm->model);
    ASSERT_TRUE(gemm->measurement.work);
    EXPECT_EQ(gemm->measurement.work->device, Device::gpu);
    EXPECT_DOUBLE_EQ(gemm->measurement.work->ops, 2.0e9);
    EXPECT_NEAR(gemm->measurement.duration_s.median, 2e-3, 1e-12);

    // Declared CPU work is the range's own: its kernel is not given it, and a note says why.
    const auto* prep = find(out.regions, "step/prep/prep_kernel");
    ASSERT_TRUE(prep);
    EXPECT_FALSE(prep->measurement.work);
    EXPECT_FALSE(prep->model);
    ASSERT_EQ(out.notes.size(), 1u);
    EXPECT_NE(out.notes[0].find("'step/prep' declares CPU work"), std::string::npos) << out.notes[0];

    // Copies carry the bytes they moved, never as work to judge (no host<->device roof).
    const auto* copy = find(out.regions, "step/copy h2d");
    ASSERT_TRUE(copy);
    EXPECT_EQ(copy->labels.at("operation"), "copy");
    EXPECT_FALSE(copy->measurement.work);
    EXPECT_FALSE(copy->measurement.measured_bytes);
    ASSERT_EQ(copy->measurement.counters.size(), 1u);
    EXPECT_EQ(copy->measurement.counters[0].value, 2.0 * (1 << 20));
    EXPECT_EQ(copy->measurement.counters[0].source, Source::cupti);
    ASSERT_TRUE(find(out.regions, "late_kernel"));
    EXPECT_EQ(find(out.regions, "late_kernel")->parent, "");

    RunRecord record = judged(out.regions);
    const Diagnosis* d = diagnosis_of(record, gemm->path);
    ASSERT_TRUE(d);
    ASSERT_EQ(d->roofs.size(), 2u);
    EXPECT_EQ(d->roofs[0].roof, "fp32_fma");  // the GPU's, not the host's
    EXPECT_NEAR(*d->roofs[0].achieved_per_s, 1e12, 1);  // 2 GFLOP in 2 ms
    EXPECT_EQ(d->roofs[1].level, "HBM");
    for (const auto& v : record.region_diagnoses)
        EXPECT_NE(v.path, "step/prep/prep_kernel");  // no work: not placed on a roofline

    // A profile without a GPU: unknown, and the diagnosis says why.
    record.machine_profile->gpus.clear();
    judge::judge_record(record);
    d = diagnosis_of(record, gemm->path);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->verdict, Verdict::unknown);
    bool said = false;
    for (const auto& f : d->findings) said = said || f.detail.find("no GPU section") != std::string::npos;
    EXPECT_TRUE(said);
}

TEST(GpuRegions, ARangeThatLaunchedSeveralKernelsGivesNoneOfThemItsWork) {
    measure::NvtxCapture c;
    c.instances = {range("attention", "", 1, 1, 0, 10 * ms, gpu_work())};
    measure::GpuRun run;
    measure::GpuProcess p{1, {}, {}};
    p.log.launches = {{1, 1, 1, 1 * ms, 1 * ms + 100}, {2, 1, 1, 2 * ms, 2 * ms + 100}};
    p.log.kernels = {kernel("qk", 1, 1 * ms), kernel("softmax", 2, 3 * ms)};
    run.processes = {p};
    const auto ops = measure::place_gpu_operations(run, c);
    const auto out = measure::aggregate_gpu_regions({{&ops, &c}}, std::nullopt, {"attention"});
    ASSERT_EQ(out.regions.size(), 2u);
    for (const auto& r : out.regions) EXPECT_FALSE(r.measurement.work) << r.path;
    ASSERT_EQ(out.notes.size(), 1u);
    EXPECT_NE(out.notes[0].find("launched 2 kernels"), std::string::npos) << out.notes[0];
}

// `run --gpu-counters`: the counting execution's metrics lines (one per kernel, in launch
// order per context, named by the launch) are paired with its kernel records, and a kernel
// that declares no work is judged from its counts: its counted kind picks the GPU roof.
inject::KernelMetrics counted(std::size_t index, std::string name, double ffma, double tensor_bf16,
                              double dram) {
    inject::KernelMetrics m;
    m.context = 1;
    m.index = index;
    m.name = std::move(name);
    m.values = {{"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 0},
                {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 0},
                {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", ffma},
                {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", tensor_bf16},
                {"dram__bytes_read.sum", 0.75 * dram},
                {"dram__bytes_write.sum", 0.25 * dram}};
    return m;
}

TEST(GpuRegions, UndeclaredKernelsAreJudgedFromTheirCountsInTheCountingExecution) {
    measure::NvtxCapture c;
    c.instances = {range("step", "", 1, 1, 0, 100 * ms)};
    measure::GpuProcess p{1, {}, {}};
    p.log.launches = {{1, 1, 1, 1 * ms, 1 * ms + 100}, {2, 1, 1, 5 * ms, 5 * ms + 100}};
    p.log.kernels = {kernel("_Z4gemvPKfS0_Pfi", 1, 1 * ms), kernel("nvjet_bf16_gemm", 2, 5 * ms)};
    measure::GpuRun run;
    run.processes = {p};
    auto timed = measure::place_gpu_operations(run, c);
    // The counting execution: the same kernels, counted (a GEMV's FFMA, a GEMM's tensor ops
    // beside a small fp32 epilogue).
    run.processes[0].metrics = {
        counted(0, "gemv(float const*, float const*, float*, int)", 1e8, 0, 4e8),
        counted(1, "nvjet_bf16_gemm", 1e6, 1e12, 5e8)};
    auto counting = measure::place_gpu_operations(run, c);
    EXPECT_TRUE(measure::attach_kernel_counts(run, counting).empty());
    const auto out = measure::aggregate_gpu_regions({{&timed, &c}}, std::nullopt, {"step"}, 10000,
                                                    measure::GpuExecution{&counting, &c});
    const auto* gemv = find(out.regions, "step/gemv(float const*, float const*, float*, int)");
    const auto* gemm = find(out.regions, "step/nvjet_bf16_gemm");
    ASSERT_TRUE(gemv && gemm);
    EXPECT_FALSE(gemv->measurement.work);                    // counted, not declared
    EXPECT_DOUBLE_EQ(*gemv->measurement.measured_ops, 2e8);  // 2 x FFMA
    EXPECT_DOUBLE_EQ(*gemv->measurement.measured_bytes, 4e8);
    EXPECT_EQ(gemv->measurement.measured_ops_source, Source::cupti);
    ASSERT_TRUE(gemv->measurement.measured_kind);
    EXPECT_EQ(gemv->measurement.measured_kind->device, Device::gpu);
    EXPECT_EQ(gemv->measurement.measured_kind->precision, Precision::fp32);
    ASSERT_TRUE(gemm->measurement.measured_kind);
    EXPECT_EQ(gemm->measurement.measured_kind->precision, Precision::bf16);  // the largest count
    EXPECT_EQ(gemm->measurement.measured_kind->engine, Engine::matrix);
    EXPECT_DOUBLE_EQ(*gemm->measurement.measured_ops, 1e12 + 2e6);

    // Judged against the GPU's roofs: the GEMV's 2e8 operations and 4e8 bytes in 2 ms.
    const RunRecord record = judged(out.regions);
    const Diagnosis* d = diagnosis_of(record, gemv->path);
    ASSERT_TRUE(d);
    ASSERT_EQ(d->roofs.size(), 2u);
    EXPECT_EQ(d->roofs[0].roof, "fp32_fma");
    EXPECT_NEAR(*d->roofs[0].achieved_per_s, 1e11, 1);
    EXPECT_EQ(d->roofs[0].source, Source::cupti);
    EXPECT_EQ(d->roofs[1].level, "HBM");
    EXPECT_NEAR(*d->roofs[1].achieved_per_s, 2e11, 1);
    // The summary says the work was counted, and by what.
    std::ostringstream text;
    output::render_run_summary(record, text);
    EXPECT_NE(text.str().find("of roof (far; counted by cupti)"), std::string::npos) << text.str();
}

TEST(GpuRegions, CountsThatDoNotMatchTheKernelsAreNotGivenToThem) {
    measure::NvtxCapture c;
    measure::GpuProcess p{1, {}, {}};
    p.log.kernels = {kernel("a_kernel", 1, 1 * ms), kernel("b_kernel", 2, 5 * ms)};
    measure::GpuRun run;
    run.processes = {p};
    // One range too few (a graph's kernels, a dropped range): no pairing is trusted.
    run.processes[0].metrics = {counted(0, "a_kernel", 1e6, 0, 1e6)};
    auto ops = measure::place_gpu_operations(run, c);
    auto notes = measure::attach_kernel_counts(run, ops);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("1 counted ranges for 2 kernels"), std::string::npos) << notes[0];
    for (const auto& o : ops) EXPECT_FALSE(o.counted) << o.name;
    // As many, but in another order than the kernels ran: a name tells.
    run.processes[0].metrics = {counted(0, "b_kernel", 1e6, 0, 1e6),
                                counted(1, "a_kernel", 1e6, 0, 1e6)};
    ops = measure::place_gpu_operations(run, c);
    notes = measure::attach_kernel_counts(run, ops);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("named 'b_kernel', its kernel 'a_kernel'"), std::string::npos)
        << notes[0];
    for (const auto& o : ops) EXPECT_FALSE(o.counted) << o.name;
}

TEST(GpuRegions, PathsStayUniqueAcrossDevicesAndRanges) {
    measure::NvtxCapture c;
    c.instances = {range("step", "", 1, 1, 0, 10 * ms)};
    measure::GpuRun run;
    measure::GpuProcess p{1, {}, {}};
    p.log.launches = {{1, 1, 1, 1 * ms, 1 * ms + 100}, {2, 1, 1, 2 * ms, 2 * ms + 100}};
    p.log.kernels = {kernel("k", 1, 1 * ms, 0), kernel("k", 2, 3 * ms, 1),
                     kernel("step", 9, 20 * ms)};  // unplaced, named like the range
    run.processes = {p};
    const auto ops = measure::place_gpu_operations(run, c);
    const auto out = measure::aggregate_gpu_regions({{&ops, &c}}, std::nullopt, {"step"});
    EXPECT_TRUE(find(out.regions, "step/k [gpu0]"));
    ASSERT_TRUE(find(out.regions, "step/k [gpu1]"));
    EXPECT_EQ(find(out.regions, "step/k [gpu1]")->labels.at("device"), "gpu1");
    EXPECT_TRUE(find(out.regions, "step [gpu]"));
}

}  // namespace
}  // namespace ceiling
