// What a region is judged with: busy cores from the process's CPU-time reads, counted work
// attributed from PMU samples, non-model time split among regions, the roof of the threads
// really busy, an explicit unknown for regions with no work, and the region tree in output.
// Everything is fed through recorded event files and synthetic counter readings.
#include <cmath>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "agent/measure/cumulative_timeline.hpp"
#include "agent/measure/region.hpp"
#include "agent/measure/region_counters.hpp"
#include "agent/measure/region_diagnosis.hpp"
#include "agent/output/html_report.hpp"
#include "agent/output/run_summary.hpp"
#include "tests/unit/agent/nvtx_capture_files.hpp"
#include "tests/unit/diagnosis/diagnosis_fixtures.hpp"

namespace ceiling::measure {
namespace {

using inject::EventKind;
using testing::CaptureFiles;
using testing::cpu_read;
using testing::event;

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

RunRecord record_of(std::vector<RecordedRegion> regions, double wall_s) {
    RunRecord rec;
    rec.kind = RecordKind::run;
    rec.machine_profile = testing::synthetic_profile();
    rec.whole.durations_s = {wall_s};
    rec.whole.duration_s = summarize(rec.whole.durations_s);
    Execution e;
    e.wall_s = wall_s;
    rec.executions.push_back(e);
    rec.regions = std::move(regions);
    return rec;
}

TEST(NonModelTime, ListedSharesNeverExceedTheWallTime) {
    CaptureFiles d;
    const NvtxCapture c = training_step(d);
    const std::regex model("forward|backward");
    RunRecord rec = record_of(aggregate_regions({&c}, model), 1000e-9);
    rec.model_time_s_per_execution = {covered_s(
        c, [&](const RegionInstance& i) { return is_model_region(model, i.name, i.path); })};
    rec.region_time_s_per_execution = {covered_s(c, [](const RegionInstance&) { return true; })};
    judge_record(rec);
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

RecordedRegion timed_region(const std::string& path, std::optional<Work> work, double seconds) {
    RecordedRegion r;
    r.path = r.name = path;
    r.instances = 5;
    r.threads = 1;
    r.processes = 1;
    r.total_s_per_execution = {5 * seconds};
    r.measurement.name = path;
    r.measurement.work = work;
    r.measurement.durations_s = std::vector<double>(5, seconds);
    r.measurement.duration_s = summarize(r.measurement.durations_s);
    return r;
}

Work fp32(double ops, double bytes) {
    Work w;
    w.ops = ops;
    w.compulsory_bytes = bytes;
    return w;
}

const Diagnosis& verdict(const RunRecord& rec, const std::string& path) {
    for (const auto& v : rec.region_diagnoses)
        if (v.path == path) return v.diagnosis;
    throw std::runtime_error("no verdict for " + path);
}

bool has_finding(const Diagnosis& d, const std::string& words) {
    return std::any_of(d.findings.begin(), d.findings.end(),
                       [&](const Finding& f) { return f.detail.find(words) != std::string::npos; });
}

// Synthetic profile: fp32 vector 35.9 GFLOP/s at 1 thread, 143.7 at 4. The roof of c busy
// cores is c x 35.9 (at least 35.9, at most the roof of ceil(c) threads).
TEST(RoofOfTheCoresInUse, RegionsAreJudgedAtTheCoresTheirProcessKeptBusy) {
    // Two threads doing 70 GFLOP/s kept 1.96 cores busy.
    auto two = timed_region("fma", fp32(70e9, 1e6), 1.0);
    two.busy_cores = 1.96;
    two.busy_cores_error = 0.001;
    auto unmeasured = two;
    unmeasured.path = unmeasured.name = "fma unmeasured";
    unmeasured.busy_cores.reset();
    unmeasured.busy_cores_error.reset();
    // Two threads that got 1.1 cores of CPU time (preempted by other work): at the roof of
    // what they got, not at half the 2-thread roof.
    auto starved = timed_region("starved", fp32(1.1 * 35.9e9, 1e6), 1.0);
    starved.busy_cores = 1.1;
    // Waiting most of the time: a third of a core busy, 0.3 x the 1-thread roof.
    auto waiting = timed_region("waits", fp32(0.3 * 35.9e9, 1e6), 1.0);
    waiting.busy_cores = 0.3;
    RunRecord rec = record_of({two, unmeasured, starved, waiting}, 5.0);
    judge_record(rec);

    const Diagnosis& d = verdict(rec, "fma");
    ASSERT_TRUE(d.bound) << d.observation;
    EXPECT_EQ(*d.bound, Bound::compute);
    EXPECT_NE(d.verdict, Verdict::above_roof);
    EXPECT_EQ(d.roofs.front().threads, 2);
    EXPECT_NEAR(*d.roofs.front().fraction, 70 / (1.96 * 35.9), 1e-9);
    ASSERT_FALSE(d.findings.empty());
    EXPECT_NE(d.findings.front().detail.find("judged against the roof of 1.96 cores busy"),
              std::string::npos)
        << d.findings.front().detail;
    EXPECT_NE(d.findings.front().detail.find("at most the 2-thread roof"), std::string::npos);

    // Without busy cores the thread that recorded it decides: above the 1-thread roof.
    const Diagnosis& u = verdict(rec, "fma unmeasured");
    EXPECT_EQ(u.verdict, Verdict::above_roof);
    EXPECT_NE(u.findings.front().detail.find("busy cores not measured"), std::string::npos);

    const Diagnosis& s = verdict(rec, "starved");
    ASSERT_TRUE(s.bound) << s.observation;
    EXPECT_EQ(*s.bound, Bound::compute);
    EXPECT_NEAR(*s.roofs.front().fraction, 1.0, 1e-9);

    // Idle time shows as distance from the 1-thread roof, not as a roof a third as high.
    const Diagnosis& w = verdict(rec, "waits");
    ASSERT_TRUE(w.bound);
    EXPECT_EQ(*w.bound, Bound::latency);
    EXPECT_EQ(w.roofs.front().threads, 1);
    EXPECT_NE(w.findings.front().detail.find("judged against the 1-thread roof: 0.30 cores busy"),
              std::string::npos);
}

// A team of two whose second thread idles after a third of the region (load imbalance): 1.33
// cores busy on average, both held at once. Judged against the 1.33 cores it was "done" at
// 99 %; against the two it held, at 67 %, the idle third named first. A single thread with
// a helper's blip (peak 1.1) stays at its busy cores.
// A region whose process waited while processes it started did the work (a subprocess, a
// multiprocessing pool) is judged at their cores and its own; a region that computed itself
// while workers ran beside it is judged at its own process's cores only.
TEST(RoofOfTheCoresInUse, WorkHandedToProcessesItStartedCountsTheirCores) {
    auto waits = timed_region("bench", fp32(143.7e9 * 0.01 * 0.9, 0), 0.01);
    waits.busy_cores = 0.02;
    waits.descendant_busy_cores = 3.9;
    auto computes = timed_region("forward", fp32(35.9e9 * 0.01 * 0.9, 0), 0.01);
    computes.busy_cores = 1.0;
    computes.descendant_busy_cores = 3.0;  // a data loader's workers beside it
    RunRecord rec = record_of({waits, computes}, 1.0);
    judge_record(rec);
    const Diagnosis& b = verdict(rec, "bench");
    ASSERT_FALSE(b.roofs.empty());
    EXPECT_EQ(b.roofs.front().threads, 4);
    ASSERT_TRUE(b.roofs.front().fraction);
    EXPECT_NEAR(*b.roofs.front().fraction, 0.9 * 143.7 / (3.92 * 35.9), 0.01);
    EXPECT_NE(b.findings.front().detail.find("0.02 in its own process and 3.90 in the processes "
                                             "it started"),
              std::string::npos)
        << b.findings.front().detail;
    const Diagnosis& f = verdict(rec, "forward");
    ASSERT_FALSE(f.roofs.empty());
    EXPECT_EQ(f.roofs.front().threads, 1);
    EXPECT_NEAR(*f.roofs.front().fraction, 0.9, 0.01);
    std::ostringstream out;
    output::render_run_summary(rec, out);
    EXPECT_NE(out.str().find("3.92 (3.90 in children)"), std::string::npos) << out.str();
}

// One thread at its core's roof on a host of four CPUs with three idle: "done" at the
// 1-thread roof, and the idle cores come first. Not where other processes kept them busy,
// where they were not measured, or where the region's own team used them.
TEST(RoofOfTheCoresInUse, CoresTheHostLeftIdleComeFirst) {
    auto lone = timed_region("lone", fp32(0.95 * 35.9e9 * 0.01, 0), 0.01);
    lone.busy_cores = 1.0;
    lone.busy_cores_error = 0.001;
    lone.other_busy_cores = 0.05;
    auto crowded = lone;
    crowded.path = crowded.name = "crowded";
    crowded.other_busy_cores = 2.5;
    auto unmeasured = lone;
    unmeasured.path = unmeasured.name = "unmeasured";
    unmeasured.other_busy_cores.reset();
    auto team = timed_region("team", fp32(0.95 * 143.7e9 * 0.01, 0), 0.01);
    team.busy_cores = 3.95;
    team.busy_cores_error = 0.001;
    team.other_busy_cores = 0.0;
    RunRecord rec = record_of({lone, crowded, unmeasured, team}, 1.0);
    judge_record(rec);
    const auto idle_named = [&](const std::string& path) {
        return has_finding(verdict(rec, path), "idle while it was open");
    };
    const Diagnosis& l = verdict(rec, "lone");
    ASSERT_TRUE(l.bound);
    EXPECT_EQ(*l.bound, Bound::compute);
    EXPECT_TRUE(idle_named("lone"));
    EXPECT_EQ(l.first_move.rfind("use the idle cores (4.00 x its roof at 4 threads", 0), 0u)
        << l.first_move;
    EXPECT_FALSE(idle_named("crowded"));
    EXPECT_EQ(verdict(rec, "crowded").first_move.rfind("use the idle cores", 0), std::string::npos);
    EXPECT_FALSE(idle_named("unmeasured"));
    EXPECT_FALSE(idle_named("team"));
}

// A range whose process idled while its declared work ran at a core's roof (a client waiting
// for a local server's answer) did not do that work: said, with where to judge it. One that
// idled and did as much work as its CPU time allows (waits between bursts) gets no such word.
TEST(RoofOfTheCoresInUse, WorkItsProcessCouldNotHaveDoneRanOutsideIt) {
    auto client = timed_region("infer", fp32(0.99 * 35.9e9 * 0.01, 0), 0.01);
    client.busy_cores = 0.01;
    auto bursts = timed_region("bursts", fp32(0.3 * 35.9e9 * 0.01, 0), 0.01);
    bursts.busy_cores = 0.3;
    // Too short to know its busy cores: the error, not the figure, is what it had at most.
    auto rough = client;
    rough.path = rough.name = "rough";
    rough.busy_cores_error = 0.9;
    // A two-thread server's answers: 1.95 x one core's roof. Judged at the cores the host's
    // other processes kept busy meanwhile where they could have done it, else above the roof.
    auto served = timed_region("served", fp32(1.95 * 35.9e9 * 0.01, 0), 0.01);
    served.busy_cores = 0.01;
    served.other_busy_cores = 2.0;
    auto unexplained = served;
    unexplained.path = unexplained.name = "unexplained";
    unexplained.other_busy_cores = 0.9;  // too few to have done it
    RunRecord rec = record_of({client, bursts, rough, served, unexplained}, 1.0);
    judge_record(rec);
    const auto outside = [&](const std::string& path) {
        return has_finding(verdict(rec, path), "the work ran outside it");
    };
    const Diagnosis& c = verdict(rec, "infer");
    EXPECT_TRUE(outside("infer"));
    ASSERT_TRUE(c.bound);
    EXPECT_EQ(*c.bound, Bound::compute);  // the verdict is the work's, as if one core did it
    EXPECT_EQ(c.first_move.rfind("judge the work where it runs", 0), 0u) << c.first_move;
    EXPECT_FALSE(outside("bursts"));
    EXPECT_FALSE(outside("rough"));

    const Diagnosis& sv = verdict(rec, "served");
    ASSERT_TRUE(sv.bound) << sv.observation;
    EXPECT_EQ(*sv.bound, Bound::compute);
    EXPECT_EQ(sv.roofs.front().threads, 2);
    EXPECT_NE(
        sv.findings.front().detail.find("the 2.00 cores the host's other processes kept busy"),
        std::string::npos)
        << sv.findings.front().detail;
    EXPECT_TRUE(outside("served"));
    const Diagnosis& u = verdict(rec, "unexplained");
    EXPECT_EQ(u.verdict, Verdict::above_roof);
    EXPECT_EQ(u.roofs.front().threads, 1);
    EXPECT_TRUE(outside("unexplained"));
}

// Instances far shorter than the time between CPU-time reads bound their busy cores only
// loosely: an error above the figure itself is said to be that, not printed bare.
TEST(RoofOfTheCoresInUse, BusyCoresOfTinyInstancesAreSaidToBeRough) {
    auto tiny = timed_region("zero_", fp32(0, 1e3), 10e-6);
    tiny.busy_cores = 0.98;
    tiny.busy_cores_error = 7.9;
    auto fine = timed_region("gemm", fp32(1e9, 1e6), 0.01);
    fine.busy_cores = 1.0;
    fine.busy_cores_error = 0.02;
    RunRecord rec = record_of({tiny, fine}, 1.0);
    judge_record(rec);
    EXPECT_NE(verdict(rec, "zero_")
                  .findings.front()
                  .detail.find("0.98 (+-7.90: its instances are "
                               "shorter than the 100 us"),
              std::string::npos)
        << verdict(rec, "zero_").findings.front().detail;
    EXPECT_NE(verdict(rec, "gemm").findings.front().detail.find("1.00 (+-0.02) cores busy"),
              std::string::npos)
        << verdict(rec, "gemm").findings.front().detail;
}

TEST(RoofOfTheCoresInUse, ARegionIsJudgedAtTheCoresItHeldWhenItLeftThemIdle) {
    auto team = timed_region("team", fp32(1.33 * 35.9e9, 1e6), 1.0);
    team.busy_cores = 1.33;
    team.peak_busy_cores = 2.0;
    auto single = timed_region("single", fp32(35.9e9, 1e6), 1.0);
    single.busy_cores = 1.0;
    single.peak_busy_cores = 1.1;
    RunRecord rec = record_of({team, single}, 5.0);
    judge_record(rec);
    const Diagnosis& d = verdict(rec, "team");
    EXPECT_EQ(d.roofs.front().threads, 2);
    EXPECT_NEAR(*d.roofs.front().fraction, 1.33 / 2, 1e-9);
    EXPECT_NE(d.findings.front().detail.find("the 2.00 cores it held at once"), std::string::npos)
        << d.findings.front().detail;
    EXPECT_EQ(d.first_move.rfind("keep the cores it held busy: 34 %", 0), 0u) << d.first_move;
    const Diagnosis& s = verdict(rec, "single");
    EXPECT_EQ(s.roofs.front().threads, 1);
    EXPECT_NEAR(*s.roofs.front().fraction, 1.0, 1e-9);
    EXPECT_EQ(s.first_move.find("keep the cores"), std::string::npos);
}

// Two threads, each pushing its own range around one thread's 35 GFLOP/s of FMA: each
// instance alone is half the roof of the two cores busy, their sum is at it.
TEST(RoofOfTheCoresInUse, InstancesSideBySideAreJudgedAsTheirSum) {
    auto shares = timed_region("share", fp32(35e9, 1e6), 1.0);
    shares.busy_cores = 2.0;
    shares.threads = 2;
    shares.concurrency = 2.0;
    auto alone = shares;
    alone.path = alone.name = "alone";
    alone.concurrency = 1.005;  // ranges that touch: within the timing's noise
    RunRecord rec = record_of({shares, alone}, 5.0);
    judge_record(rec);
    const Diagnosis& d = verdict(rec, "share");
    ASSERT_TRUE(d.bound) << d.observation;
    EXPECT_EQ(*d.bound, Bound::compute);
    EXPECT_NEAR(*d.roofs.front().fraction, 70 / (2 * 35.9), 1e-9);
    ASSERT_GE(d.findings.size(), 2u);
    EXPECT_NE(d.findings[1].detail.find("instances ran side by side: 2.00 open at once"),
              std::string::npos)
        << d.findings[1].detail;
    const Diagnosis& a = verdict(rec, "alone");
    EXPECT_NEAR(*a.roofs.front().fraction, 35 / (2 * 35.9), 1e-9);
    for (const auto& f : a.findings) EXPECT_EQ(f.detail.find("side by side"), std::string::npos);
}

// The run's own bound is unknown without whole-run counts even where its regions were
// judged: its line points at the longest judged region instead of reading as nothing judged.
TEST(RunLine, AnUnknownRunPointsAtItsLongestJudgedRegion) {
    auto shares = timed_region("share", fp32(7e9, 1e6), 0.2);  // 5 x 0.2 s, 2 at once
    shares.busy_cores = 2.0;
    shares.threads = 2;
    shares.concurrency = 2.0;
    auto small = timed_region("small", fp32(0.3e9, 1e6), 0.01);
    RunRecord rec = record_of({shares, small}, 1.0);
    judge_record(rec);
    ASSERT_TRUE(rec.diagnosis);
    ASSERT_FALSE(rec.diagnosis->bound);
    std::ostringstream text;
    output::render_run_summary(rec, text);
    EXPECT_NE(text.str().find("bound unknown: for the run as a whole (no roof comparison was "
                              "possible: operations and bytes were not both measured); its "
                              "longest judged region, share (50% of wall time), is compute bound"),
              std::string::npos)
        << text.str();
    // The table: 1 s of instances, open half the wall time, 70 Gop/s as the region's rate.
    EXPECT_NE(text.str().find("share       5   1.00 s      50%"), std::string::npos) << text.str();
    EXPECT_NE(text.str().find("70.0 Gop/s"), std::string::npos) << text.str();
    // What to measure is not the run's move when its regions were judged: theirs follow.
    EXPECT_EQ(text.str().find("measure what is missing first"), std::string::npos) << text.str();
}

// An amount left out of a declaration is zero, and the verdict says so: FLOPs alone are work
// in registers, bytes alone pure data movement; both declared, nothing is said.
TEST(DeclaredWork, OneSideLeftOutIsSaidToBeZero) {
    auto fill = timed_region("torch::aten.fill_", fp32(0, 1e8), 0.01);
    fill.labels["torch"] = "op";  // work from ceiling's formula, not declared by the user
    RunRecord rec = record_of(
        {timed_region("matmul", fp32(1e9, 0), 0.01), timed_region("copy", fp32(0, 1e8), 0.01),
         timed_region("both", fp32(1e9, 1e8), 0.01), fill},
        1.0);
    judge_record(rec);
    const auto says = [&](const std::string& path, const std::string& words) {
        for (const auto& f : verdict(rec, path).findings)
            if (f.kind == FindingKind::assumption && f.detail.find(words) != std::string::npos)
                return true;
        return false;
    };
    EXPECT_TRUE(says("matmul", "no bytes declared: judged as work in registers"));
    EXPECT_FALSE(says("matmul", "no operations declared"));
    EXPECT_TRUE(says("copy", "no operations declared: judged as pure data movement"));
    EXPECT_FALSE(says("both", "declared:"));
    EXPECT_FALSE(says("torch::aten.fill_", "declared:"));
}

// An undeclared region whose process was idle while it was open waited: that is said, and
// finding what it waits for comes first; one whose process computed gets no such word.
TEST(UndeclaredRegions, OneWhoseProcessIdledInsideItWaited) {
    auto waits = timed_region("next batch", std::nullopt, 0.01);
    waits.busy_cores = 0.04;
    waits.other_busy_cores = 0.97;  // a server or a producer process doing the work
    auto computes = timed_region("preprocess", std::nullopt, 0.01);
    computes.busy_cores = 0.97;
    RunRecord rec = record_of({waits, computes}, 1.0);
    judge_record(rec);
    const Diagnosis& w = verdict(rec, "next batch");
    EXPECT_FALSE(w.bound);
    ASSERT_FALSE(w.findings.empty());
    EXPECT_NE(w.findings.back().detail.find("its process kept 0.04 cores busy while it was open: "
                                            "it mostly waited"),
              std::string::npos)
        << w.findings.back().detail;
    EXPECT_NE(w.findings.back().detail.find("(the host's other processes kept 0.97 cores busy "
                                            "meanwhile)"),
              std::string::npos)
        << w.findings.back().detail;
    EXPECT_EQ(w.first_move.rfind("find what it waits for", 0), 0u) << w.first_move;
    const Diagnosis& c = verdict(rec, "preprocess");
    EXPECT_TRUE(c.findings.empty());
    EXPECT_EQ(c.first_move, "declare the region's work or count it, then judge it");
}

TEST(UndeclaredRegions, GetAnUnknownLineSayingWhatToDo) {
    auto plain = timed_region("preprocess", std::nullopt, 0.01);
    RunRecord rec = record_of({plain}, 1.0);
    judge_record(rec);
    const Diagnosis& d = verdict(rec, "preprocess");
    EXPECT_FALSE(d.bound);
    EXPECT_EQ(d.observation,
              "no work declared and no PMU here; declare `{ops=... bytes=...}` or run where "
              "`ceiling doctor` finds a PMU");
    std::ostringstream out;
    output::render_run_summary(rec, out);
    EXPECT_NE(out.str().find("region preprocess: bound unknown: no work declared and no PMU here"),
              std::string::npos)
        << out.str();
    // An unknown whose roofs were never compared says what to do: the run what to measure,
    // the region to declare its work.
    EXPECT_NE(out.str().find("  first move: measure what is missing first: NVTX ranges declaring"),
              std::string::npos)
        << out.str();
    EXPECT_NE(out.str().find("first move: declare the region's work or count it"),
              std::string::npos)
        << out.str();
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
    for (std::size_t i = 0; i < 2; ++i) {
        ASSERT_TRUE(c.instances[i].counted_ops);
        EXPECT_LE(std::abs(c.instances[i].counted_ops->value - truth[i]),
                  c.instances[i].counted_ops->error + 1e-9);
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
    EXPECT_FALSE(c.instances.front().counted_bytes);
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
    judge_record(rec);
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
    EXPECT_TRUE(c.instances[0].counted_ops);
    EXPECT_FALSE(c.instances[1].counted_ops) << "ends after the last sample";
    const auto regions = aggregate_regions({&c}, std::nullopt);
    EXPECT_FALSE(regions.front().measurement.measured_ops) << "a partial sum would understate";
    RunRecord rec = record_of(regions, 1e-5);
    CounterValue whole;
    whole.name = "fp_ops";
    whole.value = 4500;
    whole.unit = "flop";
    whole.source = Source::pmu;
    rec.whole.counters.push_back(whole);
    judge_record(rec);
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
