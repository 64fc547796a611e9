// What a region is judged with: busy cores from the process's CPU-time reads, counted work
// attributed from PMU samples, non-model time split among regions, and the region tree in
// output. Everything is fed through recorded event files and synthetic counter readings; how
// a region is then judged is region_judging_test's.
#include <cmath>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "agent/run/cumulative_timeline.hpp"
#include "agent/run/region.hpp"
#include "agent/run/region_counters.hpp"
#include "agent/judge/judge_record.hpp"
#include "agent/output/html_report.hpp"
#include "agent/output/run_summary.hpp"
#include "tests/unit/agent/judged_records.hpp"
#include "tests/unit/agent/nvtx_capture_files.hpp"
#include "tests/unit/diagnosis/diagnosis_fixtures.hpp"

namespace ceiling::measure {
namespace {

using inject::EventKind;
using testing::CaptureFiles;
using testing::cpu_read;
using testing::event;
using testing::thread_cpu_read;
using namespace judge::judged;

std::map<std::string, const RecordedRegion*> by_path(const std::vector<RecordedRegion>& regions) {
    std::map<std::string, const RecordedRegion*> m;
    for (const auto& r : regions) m[r.path] = &r;
    return m;
}

TEST(CumulativeTimeline, InterpolatesWithinWhatMonotonicityAllows) {
    const CumulativeTimeline counts({{200, 300}, {0, 0}, {100, 100}}, std::nullopt);
    EXPECT_DOUBLE_EQ(counts.at(100)->value, 100);
    EXPECT_DOUBLE_EQ(counts.at(100)->error, 0);
    EXPECT_DOUBLE_EQ(counts.at(50)->value, 50);
    EXPECT_DOUBLE_EQ(counts.at(50)->error, 50);  // anywhere in [0, 100]
    EXPECT_DOUBLE_EQ(counts.at(150)->value, 200);
    EXPECT_DOUBLE_EQ(counts.at(150)->error, 100);
    EXPECT_FALSE(counts.at(250)) << "nothing bounds a count after the last sample";
    EXPECT_FALSE(counts.at(-10));
    const auto span = counts.between(50, 150);
    EXPECT_DOUBLE_EQ(span->value, 150);
    EXPECT_DOUBLE_EQ(span->error, 150);

    // At most 3 per ns (3 CPUs): tighter inside, and a bound beyond the ends.
    const CumulativeTimeline cpu({{0, 0}, {100, 100}, {200, 300}}, 3e9);
    EXPECT_DOUBLE_EQ(cpu.at(150)->value, 200);
    EXPECT_DOUBLE_EQ(cpu.at(150)->error, 50);   // within [300 - 150, 100 + 150]
    EXPECT_DOUBLE_EQ(cpu.at(250)->value, 400);  // the last segment's rate
    EXPECT_DOUBLE_EQ(cpu.at(250)->error, 100);  // within [300, 450]
    EXPECT_DOUBLE_EQ(cpu.at(-10)->value, 0);    // never below 0
    EXPECT_TRUE(CumulativeTimeline().empty());
    EXPECT_FALSE(CumulativeTimeline().at(0));
}

// The search hint only speeds a lookup: every answer equals the plain search's, for instants
// that move forward (the common case), jump back (the next thread), fall outside the points
// or land on one exactly, and for a hint left by another timeline.
TEST(CumulativeTimeline, AHintedSearchAnswersAsThePlainOne) {
    std::vector<TimelinePoint> points;
    for (int i = 0; i < 50; ++i) points.push_back({i * 100, i * 70.0 + (i % 3) * 5.0});
    const CumulativeTimeline t(points, 2e9);
    std::vector<std::pair<std::int64_t, std::int64_t>> spans;
    for (std::int64_t b = -150; b < 5200; b += 37) spans.emplace_back(b, b + (b % 5) * 13);  // forward
    spans.emplace_back(400, 400);     // back, exactly on a point
    spans.emplace_back(4900, 6000);   // to the last point and beyond it
    spans.emplace_back(-500, -100);   // wholly before
    spans.emplace_back(1250, 1350);   // back, mid-way
    std::size_t hint = 1000;          // from a longer timeline
    for (const auto& [b, e] : spans) {
        const auto plain = t.between(b, e);
        const auto hinted = t.between(b, e, &hint);
        ASSERT_EQ(plain.has_value(), hinted.has_value()) << b << " " << e;
        if (!plain) continue;
        EXPECT_DOUBLE_EQ(hinted->value, plain->value) << b << " " << e;
        EXPECT_DOUBLE_EQ(hinted->error, plain->error) << b << " " << e;
    }
}

// A pipeline: two stages, each a range on its own thread, each thread one core busy, so the
// process two. Each stage's busy cores are its process's, and the part its other thread
// spent inside its own ranges meanwhile is said beside it (judged without, region_judging).
// A range whose instances lie inside another thread's range every time is that range's
// work handed on: not taken out of it.
TEST(BusyCores, RangesOpenBesideItOnOtherThreadsAreSaid) {
    constexpr std::int64_t ms = 1'000'000;
    CaptureFiles d;
    d.strings(50, 1, {{1, "load"}, {2, "compute"}});
    std::vector<inject::Event> load = {cpu_read(0, 0), thread_cpu_read(0, 0)};
    for (int k = 0; k < 4; ++k) {
        load.push_back(event(EventKind::push, k * ms, 1));
        load.push_back(event(EventKind::pop, (k + 1) * ms));
    }
    load.push_back(cpu_read(4 * ms, 8 * ms));
    load.push_back(thread_cpu_read(4 * ms, 4 * ms));
    d.events(50, 1, 50, 0, load);
    std::vector<inject::Event> compute = {thread_cpu_read(0, 0)};
    for (int k = 0; k < 3; ++k) {
        compute.push_back(event(EventKind::push, k * ms + ms / 2, 2));
        compute.push_back(event(EventKind::pop, (k + 1) * ms + ms / 2));
    }
    compute.push_back(thread_cpu_read(4 * ms, 4 * ms));
    d.events(50, 1, 51, 0, compute);
    // A step on one thread, its gemm on another (inside the step every time, the step's
    // thread waiting for it meanwhile).
    d.strings(60, 1, {{1, "step"}, {2, "gemm"}});
    d.events(
        60, 1, 60, 0,
        {cpu_read(0, 0), thread_cpu_read(0, 0), event(EventKind::push, 0, 1),
         thread_cpu_read(1 * ms, 1 * ms), thread_cpu_read(2 * ms, 1 * ms),
         thread_cpu_read(5 * ms / 2, 3 * ms / 2), thread_cpu_read(7 * ms / 2, 3 * ms / 2),
         event(EventKind::pop, 4 * ms), cpu_read(4 * ms, 4 * ms), thread_cpu_read(4 * ms, 2 * ms)});
    d.events(60, 1, 61, 0,
             {thread_cpu_read(0, 0), event(EventKind::push, 1 * ms, 2),
              event(EventKind::pop, 2 * ms), event(EventKind::push, 5 * ms / 2, 2),
              event(EventKind::pop, 7 * ms / 2), thread_cpu_read(4 * ms, 2 * ms)});
    // Two stages in step: "read" hands each item on and reads the next meanwhile, so each
    // "decode" (shorter) lies inside the next "read" every time, while read's thread works.
    d.strings(80, 1, {{1, "read"}, {2, "decode"}});
    std::vector<inject::Event> reader = {cpu_read(0, 0), thread_cpu_read(0, 0)};
    for (int k = 0; k < 4; ++k) {
        reader.push_back(event(EventKind::push, k * ms, 1));
        reader.push_back(event(EventKind::pop, (k + 1) * ms));
    }
    reader.push_back(cpu_read(4 * ms, 7 * ms));
    reader.push_back(thread_cpu_read(4 * ms, 4 * ms));
    d.events(80, 1, 80, 0, reader);
    std::vector<inject::Event> decoder = {thread_cpu_read(0, 0)};
    for (int k = 1; k < 4; ++k) {
        decoder.push_back(thread_cpu_read(k * ms, (k - 1) * 3 * ms / 4));
        decoder.push_back(event(EventKind::push, k * ms, 2));
        decoder.push_back(event(EventKind::pop, k * ms + 3 * ms / 4));
        decoder.push_back(thread_cpu_read(k * ms + 3 * ms / 4, k * 3 * ms / 4));
    }
    d.events(80, 1, 81, 0, decoder);
    const NvtxCapture c = read_nvtx_capture(d.path(), 5 * ms, 2);
    const auto regions = aggregate_regions({&c}, std::nullopt);
    const auto r = by_path(regions);
    // load [k, k+1] ms meets compute [0.5, 1.5], [1.5, 2.5], [2.5, 3.5]: 3 of its 4 ms.
    ASSERT_TRUE(r.at("load")->beside_busy_cores);
    EXPECT_NEAR(*r.at("load")->beside_busy_cores, 0.75, 1e-6);
    EXPECT_NEAR(*r.at("load")->busy_cores, 2.0, 1e-6);
    ASSERT_TRUE(r.at("compute")->beside_busy_cores);
    EXPECT_NEAR(*r.at("compute")->beside_busy_cores, 1.0, 1e-6);
    ASSERT_TRUE(r.at("step")->beside_busy_cores);
    EXPECT_NEAR(*r.at("step")->beside_busy_cores, 0.0, 1e-9) << "its gemm is its work";
    ASSERT_TRUE(r.at("gemm")->beside_busy_cores);
    EXPECT_NEAR(*r.at("gemm")->beside_busy_cores, 0.0, 1e-6) << "the step's thread waited";
    // decode's 0.75 ms in three of the reader's four 1 ms instances: beside it, though inside
    // it every time; the median instance's (one with a decode), as its busy cores are.
    ASSERT_TRUE(r.at("read")->beside_busy_cores);
    EXPECT_NEAR(*r.at("read")->beside_busy_cores, 0.75, 1e-6);
}

// What the process's threads that record no ranges used while a region was open: its
// process's CPU time less every recording thread's own (here a model range on one thread
// kept one core busy, and a thread with no ranges 0.8 more).
TEST(BusyCores, ThreadsRecordingNoRangesAreCountedApart) {
    constexpr std::int64_t ms = 1'000'000;
    CaptureFiles d;
    d.strings(70, 1, {{1, "model"}});
    d.events(70, 1, 70, 0,
             {cpu_read(0, 0), thread_cpu_read(0, 0), event(EventKind::push, 0, 1),
              event(EventKind::pop, 10 * ms), cpu_read(10 * ms, 18 * ms),
              thread_cpu_read(10 * ms, 10 * ms)});
    const NvtxCapture c = read_nvtx_capture(d.path(), 11 * ms, 2);
    const auto regions = aggregate_regions({&c}, std::nullopt);
    const auto r = by_path(regions);
    ASSERT_TRUE(r.at("model")->unranged_busy_cores);
    EXPECT_NEAR(*r.at("model")->unranged_busy_cores, 0.8, 1e-6);
    EXPECT_NEAR(*r.at("model")->busy_cores, 1.8, 1e-6);
}

// The reported case: a range pushed on the main thread around work on two threads it
// starts was recorded with one thread. Its process kept two cores busy, which the CPU-time
// reads (from any thread of the process) show.
TEST(BusyCores, ComeFromTheWholeProcessNotTheThreadThatRecorded) {
    CaptureFiles d;
    d.strings(40, 1, {{1, "fma {ops=460.8G}"}, {2, "serial"}});
    // CPU(t) = 2 x (t - 1000) while `fma` is open (two threads busy), idle until `serial`
    // (one thread). The library reads at a push when its last read is old enough.
    d.events(40, 1, 40, 0,
             {cpu_read(900, 0), event(EventKind::push, 1000, 1), event(EventKind::pop, 1'001'000),
              cpu_read(1'001'100, 2'000'100), cpu_read(1'999'900, 2'000'100),
              event(EventKind::push, 2'000'000, 2), event(EventKind::pop, 3'000'000),
              cpu_read(3'000'100, 3'000'200)});
    d.events(40, 1, 41, 0, {cpu_read(501'000, 1'000'000)});
    // Another image recorded no CPU time: busy cores unknown there, never 0.
    d.strings(41, 2, {{1, "elsewhere"}});
    d.events(41, 2, 41, 0, {event(EventKind::push, 10, 1), event(EventKind::pop, 20)});
    const NvtxCapture c = read_nvtx_capture(d.path(), 4'000'000, 2);
    const auto regions = aggregate_regions({&c}, std::nullopt);
    const auto r = by_path(regions);
    ASSERT_TRUE(r.at("fma")->busy_cores);
    EXPECT_EQ(r.at("fma")->threads, 1);
    EXPECT_NEAR(*r.at("fma")->busy_cores, 2.0, 0.001);
    ASSERT_TRUE(r.at("fma")->busy_cores_error);
    EXPECT_LE(std::abs(*r.at("fma")->busy_cores - 2.0), *r.at("fma")->busy_cores_error + 1e-9);
    EXPECT_NEAR(*r.at("serial")->busy_cores, 1.0, 0.001);
    EXPECT_FALSE(r.at("elsewhere")->busy_cores);
}

// Instances of one size are judged at their median duration, which leaves a slow first one
// out (a cold start waiting for its weights to page in); their busy cores leave it out too,
// or its wait reads as cores the typical instance held and left idle. Of different sizes
// (judged at the mean) every instance counts.
TEST(BusyCores, OfTheInstancesTheMedianDurationStandsFor) {
    const auto tokens = [](const std::string& second_name) {
        CaptureFiles d;
        d.strings(45, 1, {{1, "token {ops=1G}"}, {2, second_name}});
        // The first instance: 4 ms at 0.25 cores; then four of 1 ms at 2 cores.
        std::vector<inject::Event> ev = {cpu_read(1000, 0), event(EventKind::push, 1000, 1),
                                         event(EventKind::pop, 4'001'000),
                                         cpu_read(4'001'000, 1'000'000)};
        for (std::int64_t k = 0; k < 4; ++k) {
            const std::int64_t start = 4'001'000 + k * 1'000'000;
            ev.push_back(event(EventKind::push, start, k == 3 ? 2 : 1));
            ev.push_back(event(EventKind::pop, start + 1'000'000));
            ev.push_back(cpu_read(start + 1'000'000, 1'000'000 + (k + 1) * 2'000'000));
        }
        d.events(45, 1, 45, 0, ev);
        const NvtxCapture c = read_nvtx_capture(d.path(), 9'000'000, 2);
        return aggregate_regions({&c}, std::nullopt);
    };
    const auto same = tokens("token {ops=1G}");
    const RecordedRegion* typical = by_path(same).at("token");
    ASSERT_TRUE(typical->busy_cores);
    EXPECT_NEAR(*typical->busy_cores, 2.0, 0.01);
    EXPECT_EQ(typical->busy_cores_outliers, 1);
    const auto mixed = tokens("token {ops=9G}");
    const RecordedRegion* all = by_path(mixed).at("token");
    ASSERT_TRUE(all->busy_cores);
    EXPECT_NEAR(*all->busy_cores, 9.0 / 8.0, 0.01) << "judged at the mean: every instance";
    EXPECT_FALSE(all->busy_cores_outliers);
}

// Its rate is the work over the median duration, so its busy cores are the median
// instance's: five steps of 1 ms at 2 cores, two slowed to 1.8 ms by a preempted thread (the
// same 2 ms of CPU time). Summed over time they read 1.63 cores, a roof below the one the
// median step ran at.
TEST(BusyCores, AreTheMedianInstancesWhereTheRateIsTheMedians) {
    CaptureFiles d;
    d.strings(46, 1, {{1, "step {ops=1G}"}});
    std::vector<inject::Event> ev = {cpu_read(0, 0)};
    std::int64_t t = 0, cpu = 0;
    for (int k = 0; k < 7; ++k) {
        const std::int64_t length = k == 2 || k == 5 ? 1'800'000 : 1'000'000;
        ev.push_back(event(EventKind::push, t, 1));
        t += length;
        cpu += 2'000'000;
        ev.push_back(event(EventKind::pop, t));
        ev.push_back(cpu_read(t, cpu));
    }
    d.events(46, 1, 46, 0, ev);
    const NvtxCapture c = read_nvtx_capture(d.path(), t + 1'000'000, 2);
    const auto regions = aggregate_regions({&c}, std::nullopt);
    const RecordedRegion* step = by_path(regions).at("step");
    ASSERT_TRUE(step->busy_cores);
    EXPECT_NEAR(*step->busy_cores, 2.0, 0.01);
}

// One region name for instances of different sizes: the work per instance is their mean,
// and the spread of their sizes goes with it, so the judge times them by their total time
// (diagnose); instances of one size have a spread of 1.
TEST(DeclaredWork, InstancesOfDifferentSizesCarryTheirSpread) {
    CaptureFiles d;
    d.strings(60, 1, {{1, "gemm {ops=1G}"}, {2, "gemm {ops=100G}"}, {3, "step {bytes=8M}"}});
    d.events(
        60, 1, 60, 0,
        {event(EventKind::push, 0, 1), event(EventKind::pop, 10), event(EventKind::push, 20, 2),
         event(EventKind::pop, 1020), event(EventKind::push, 1030, 3), event(EventKind::pop, 1040),
         event(EventKind::push, 1050, 3), event(EventKind::pop, 1060)});
    const NvtxCapture c = read_nvtx_capture(d.path(), 2000);
    const auto regions = aggregate_regions({&c}, std::nullopt);
    const auto r = by_path(regions);
    const Measurement& gemm = r.at("gemm")->measurement;
    ASSERT_TRUE(gemm.work);
    EXPECT_DOUBLE_EQ(gemm.work->ops, 50.5e9);
    ASSERT_TRUE(gemm.work_spread);
    EXPECT_DOUBLE_EQ(*gemm.work_spread, 100.0);
    ASSERT_TRUE(r.at("step")->measurement.work_spread);
    EXPECT_DOUBLE_EQ(*r.at("step")->measurement.work_spread, 1.0);
}

// A range each thread of a parallel loop pushes around its own share: instances side by
// side in one process are summed, instances in different processes are not (each process's
// busy cores judge its own), and a loop of ranges on one thread stays at one.
TEST(Concurrency, InstancesSideBySideInOneProcessAreCounted) {
    CaptureFiles d;
    d.strings(70, 1, {{1, "share"}, {2, "seq"}});
    d.events(70, 1, 70, 0,
             {event(EventKind::push, 0, 1), event(EventKind::pop, 1000),
              event(EventKind::push, 2000, 2), event(EventKind::pop, 2100),
              event(EventKind::push, 2200, 2), event(EventKind::pop, 2300)});
    d.events(70, 1, 71, 0, {event(EventKind::push, 100, 1), event(EventKind::pop, 1100)});
    d.strings(71, 2, {{1, "share"}});
    d.events(71, 2, 71, 0, {event(EventKind::push, 0, 1), event(EventKind::pop, 1000)});
    const NvtxCapture c = read_nvtx_capture(d.path(), 4000);
    const auto regions = aggregate_regions({&c}, std::nullopt);
    const auto r = by_path(regions);
    // 3000 ns of instances over unions of 1100 (process 70) and 1000 (process 71).
    ASSERT_TRUE(r.at("share")->concurrency);
    EXPECT_NEAR(*r.at("share")->concurrency, 3000.0 / 2100.0, 1e-12);
    EXPECT_NEAR(*r.at("seq")->concurrency, 1.0, 1e-12);
}

// The region table indents by depth, so records list each region right under its parent:
// `a/d` started after `b/c`, yet belongs under `a`, not under `b`.
TEST(RegionTree, ChildrenFollowTheirParentDepthFirst) {
    CaptureFiles d;
    d.strings(50, 1, {{1, "a"}, {2, "b"}, {3, "c"}, {4, "d"}});
    d.events(
        50, 1, 50, 0,
        {event(EventKind::push, 100, 1), event(EventKind::pop, 200), event(EventKind::push, 300, 2),
         event(EventKind::push, 310, 3), event(EventKind::pop, 320), event(EventKind::pop, 400),
         event(EventKind::push, 500, 1), event(EventKind::push, 510, 4), event(EventKind::pop, 520),
         event(EventKind::pop, 600)});
    const NvtxCapture c = read_nvtx_capture(d.path(), 1000);
    std::vector<std::string> paths;
    for (const auto& r : aggregate_regions({&c}, std::nullopt)) paths.push_back(r.path);
    EXPECT_EQ(paths, (std::vector<std::string>{"a", "a/d", "b", "b/c"}));
}

// step{forward, backward, optimizer} on one thread, load on another; model forward|backward.
NvtxCapture training_step(CaptureFiles& d) {
    d.strings(60, 1, {{1, "step"}, {2, "forward"}, {3, "backward"}, {4, "optimizer"}, {5, "load"}});
    d.events(
        60, 1, 60, 0,
        {event(EventKind::push, 0, 1), event(EventKind::push, 100, 2), event(EventKind::pop, 400),
         event(EventKind::push, 400, 3), event(EventKind::pop, 570), event(EventKind::push, 600, 4),
         event(EventKind::pop, 800), event(EventKind::pop, 1000)});
    d.events(60, 1, 61, 0, {event(EventKind::push, 500, 5), event(EventKind::pop, 900)});
    return read_nvtx_capture(d.path(), 1000);
}

TEST(NonModelTime, EachInstantInNoModelRegionGoesToTheRegionsHoldingIt) {
    CaptureFiles d;
    const NvtxCapture c = training_step(d);
    const auto regions = aggregate_regions({&c}, std::regex("forward|backward"));
    const auto r = by_path(regions);
    // [0,100) step; [570,600) step + load; [600,800) optimizer + load; [800,900) step + load;
    // [900,1000) step. Model instants [100,570) belong to no listed region.
    EXPECT_NEAR(*r.at("step")->non_model_s, 265e-9, 1e-15);
    EXPECT_NEAR(*r.at("step/optimizer")->non_model_s, 100e-9, 1e-15);
    EXPECT_NEAR(*r.at("load")->non_model_s, 165e-9, 1e-15);
    EXPECT_NEAR(*r.at("step/forward")->non_model_s, 0, 1e-15);
    EXPECT_FALSE(aggregate_regions({&c}, std::nullopt).front().non_model_s);
}

TEST(NonModelTime, ListedSharesNeverExceedTheWallTime) {
    CaptureFiles d;
    const NvtxCapture c = training_step(d);
    const std::regex model("forward|backward");
    RunRecord rec = record_of(aggregate_regions({&c}, model), 1000e-9);
    rec.model_time_s_per_execution = {covered_s(
        c, [&](const RegionInstance& i) { return is_model_region(model, i.name, i.path); })};
    rec.region_time_s_per_execution = {covered_s(c, [](const RegionInstance&) { return true; })};
    judge::judge_record(rec);
    ASSERT_TRUE(rec.diagnosis && rec.diagnosis->model_share);
    const ModelShare& m = *rec.diagnosis->model_share;
    EXPECT_NEAR(m.share, 0.47, 1e-9);
    EXPECT_FALSE(m.overlapping);
    double total = m.share;
    for (const auto& s : m.top_non_model) total += s.share;
    EXPECT_NEAR(total, 1.0, 1e-9);
    ASSERT_FALSE(m.top_non_model.empty());
    EXPECT_EQ(m.top_non_model.front().name, "step");
    EXPECT_NEAR(m.top_non_model.front().share, 0.265, 1e-9);
}

collectors::Reading pmu_reading(const char* name, double value, const char* unit) {
    collectors::Reading r;
    r.name = name;
    r.value = value;
    r.unit = unit;
    r.source = collectors::ReadingSource::pmu;
    return r;
}

// Samples of a cumulative FLOP count: 1 flop/ns to 2500, none to 3000, 2/ns to 4000.
std::vector<CounterSample> flop_samples(const std::vector<std::int64_t>& at) {
    auto flops = [](std::int64_t t) -> double {
        if (t <= 2500) return static_cast<double>(t);
        if (t <= 3000) return 2500;
        if (t <= 4000) return 2500 + 2.0 * static_cast<double>(t - 3000);
        return 4500;
    };
    std::vector<CounterSample> out;
    for (const std::int64_t t : at) {
        CounterSample s;
        s.t_ns = t;
        s.readings.values.push_back(pmu_reading("fp_ops", flops(t), "flop"));
        s.readings.values.push_back(pmu_reading("dram_bytes", 8 * flops(t), "bytes"));
        out.push_back(std::move(s));
    }
    return out;
}

NvtxCapture two_gemms(CaptureFiles& d) {
    d.strings(70, 1, {{1, "gemm"}});
    d.events(70, 1, 70, 0,
             {event(EventKind::push, 1000, 1), event(EventKind::pop, 2000),
              event(EventKind::push, 3000, 1), event(EventKind::pop, 4000)});
    return read_nvtx_capture(d.path(), 5000);
}

TEST(CountedWork, SparseSamplesGiveABoundThatHoldsAndLowConfidence) {
    CaptureFiles d;
    NvtxCapture c = two_gemms(d);
    attribute_counts(c, flop_samples({0, 1500, 2500, 3500, 5000}), RegionCounting{true, true, {}});
    const double truth[] = {1000, 2000};
    ASSERT_EQ(c.counts.size(), c.instances.size());
    for (std::size_t i = 0; i < 2; ++i) {
        ASSERT_TRUE(c.counts[i].ops);
        EXPECT_LE(std::abs(c.counts[i].ops->value - truth[i]), c.counts[i].ops->error + 1e-9);
    }
    const auto regions = aggregate_regions({&c}, std::nullopt);
    const Measurement& m = regions.front().measurement;
    ASSERT_TRUE(m.measured_ops);
    const auto flops = std::find_if(m.counters.begin(), m.counters.end(),
                                    [](const CounterValue& v) { return v.name == "fp_ops"; });
    ASSERT_NE(flops, m.counters.end());
    EXPECT_TRUE(flops->low_confidence) << "instances short beside the sampling interval";
}

TEST(CountedWork, DenseSamplesReachTheDecisionTable) {
    CaptureFiles d;
    NvtxCapture c = two_gemms(d);
    std::vector<std::int64_t> every_10ns;
    for (std::int64_t t = 0; t <= 5000; t += 10) every_10ns.push_back(t);
    // Bytes failed self-validation here: only FLOPs are given to regions.
    attribute_counts(c, flop_samples(every_10ns), RegionCounting{true, false, {}});
    ASSERT_EQ(c.counts.size(), c.instances.size());
    EXPECT_FALSE(c.counts.front().bytes);
    auto regions = aggregate_regions({&c}, std::nullopt);
    ASSERT_EQ(regions.size(), 1u);
    const Measurement& m = regions.front().measurement;
    ASSERT_TRUE(m.measured_ops);
    EXPECT_NEAR(*m.measured_ops, 1500, 15);  // (1000 + 2000) / 2 instances
    EXPECT_EQ(m.measured_ops_source, Source::pmu);
    EXPECT_FALSE(m.measured_bytes);
    for (const auto& v : m.counters) {
        if (v.name == "fp_ops") {
            EXPECT_FALSE(v.low_confidence);
        }
    }

    // With counted bytes too, an undeclared region is judged by the decision table.
    attribute_counts(c, flop_samples(every_10ns), RegionCounting{true, true, {}});
    auto counted = aggregate_regions({&c}, std::nullopt);
    RunRecord rec = record_of(counted, 1e-5);
    judge::judge_record(rec);
    const Diagnosis& g = verdict(rec, "gemm");
    EXPECT_EQ(g.roofs.size(), 2u);
    EXPECT_TRUE(g.roofs[0].fraction && g.roofs[1].fraction);
    EXPECT_EQ(g.roofs[0].source, Source::pmu);
    EXPECT_TRUE(g.bound) << g.observation;
}

TEST(CountedWork, AnInstanceOutsideTheSamplesLeavesTheRegionUncounted) {
    CaptureFiles d;
    NvtxCapture c = two_gemms(d);
    attribute_counts(c, flop_samples({0, 1500, 2500, 3500}), RegionCounting{true, true, {}});
    ASSERT_EQ(c.counts.size(), c.instances.size());
    EXPECT_TRUE(c.counts[0].ops);
    EXPECT_FALSE(c.counts[1].ops) << "ends after the last sample";
    const auto regions = aggregate_regions({&c}, std::nullopt);
    EXPECT_FALSE(regions.front().measurement.measured_ops) << "a partial sum would understate";
    RunRecord rec = record_of(regions, 1e-5);
    CounterValue whole;
    whole.name = "fp_ops";
    whole.value = 4500;
    whole.unit = "flop";
    whole.source = Source::pmu;
    rec.whole.counters.push_back(whole);
    judge::judge_record(rec);
    EXPECT_NE(verdict(rec, "gemm").observation.find("could not be given to every instance"),
              std::string::npos);
}

// Old records keep regions in first-seen order: the renderers still show the tree.
TEST(RegionTree, TextAndHtmlShowEachRegionUnderItsParent) {
    auto a = timed_region("a", std::nullopt, 0.1);
    auto b = timed_region("b", std::nullopt, 0.1);
    auto bc = timed_region("b/c", std::nullopt, 0.01);
    bc.name = "c";
    bc.parent = "b";
    auto ad = timed_region("a/d", std::nullopt, 0.01);
    ad.name = "dee";
    ad.parent = "a";
    ad.busy_cores = 1.96;
    RunRecord rec = record_of({a, b, bc, ad}, 1.0);
    std::vector<std::string> order;
    for (const auto& row : output::region_tree(rec))
        order.push_back(row.region->path + ":" + std::to_string(row.depth));
    EXPECT_EQ(order, (std::vector<std::string>{"a:0", "a/d:1", "b:0", "b/c:1"}));

    std::ostringstream text;
    output::render_run_summary(rec, text);
    const std::string t = text.str();
    EXPECT_NE(t.find("busy cores"), std::string::npos);
    EXPECT_LT(t.find("  dee"), t.find("\n  b ")) << t;
    EXPECT_NE(t.find("1.96"), std::string::npos);
    const std::string html = output::render_html_report({rec}, {"r.json"});
    EXPECT_LT(html.find(">dee<"), html.find(">b<"));
    EXPECT_GT(html.find(">c<"), html.find(">b<"));
    EXPECT_NE(html.find("1.96"), std::string::npos);
}

}  // namespace
}  // namespace ceiling::measure
