// Regions from NVTX event files (written here in the injection library's format),
// declared work in region names, and the launcher's PATH lookup and naming helpers.
#include <cstring>
#include <fstream>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/inject/nvtx_event_format.hpp"
#include "agent/run/launch.hpp"
#include "agent/machine/launch_context.hpp"
#include "agent/run/region.hpp"
#include "diagnosis/run_record.hpp"
#include "agent/judge/region_judging.hpp"
#include "tests/unit/agent/nvtx_capture_files.hpp"

namespace ceiling::measure {
namespace {

namespace fs = std::filesystem;
using inject::Event;
using inject::EventKind;

using CaptureDir = testing::CaptureFiles;
using testing::cpu_read;

Event ev(EventKind k, std::int64_t t, std::uint32_t string = 0, std::uint64_t range = 0,
         std::uint32_t domain = 0) {
    return testing::event(k, t, string, range, domain);
}

TEST(DeclaredWork, ParsesTheBraceGroup) {
    const auto d = parse_declared_work("gemm 1024 {ops=2.1G bytes=12Mi precision=fp16 engine=matrix}");
    EXPECT_EQ(d.name, "gemm 1024");
    ASSERT_TRUE(d.work);
    EXPECT_DOUBLE_EQ(d.work->ops, 2.1e9);
    EXPECT_DOUBLE_EQ(d.work->compulsory_bytes, 12.0 * 1024 * 1024);
    EXPECT_EQ(d.work->precision, Precision::fp16);
    EXPECT_EQ(d.work->engine, Engine::matrix);
    EXPECT_TRUE(d.error.empty());
}

TEST(DeclaredWork, PlainNamesAndMistakes) {
    EXPECT_EQ(parse_declared_work("forward").name, "forward");
    EXPECT_FALSE(parse_declared_work("forward").work);
    EXPECT_FALSE(parse_declared_work("x {precision=fp32}").work) << "no amount declared";
    const auto bad = parse_declared_work("x {ops=lots}");
    EXPECT_EQ(bad.name, "x {ops=lots}");
    EXPECT_FALSE(bad.work);
    EXPECT_NE(bad.error.find("lots"), std::string::npos);
    EXPECT_FALSE(parse_declared_work("x {flops=1}").error.empty());
    EXPECT_FALSE(parse_declared_work("x {ops=-1}").error.empty());
    EXPECT_FALSE(parse_declared_work("x {bytes=1k written=2k}").error.empty()) << "more than bytes";
    EXPECT_FALSE(parse_declared_work("x {written=1k}").error.empty()) << "stores of no bytes";
}

// Amounts of bytes take the command line's units ("8MB", "12MiB"); operations do not end in
// B; an amount infinite once scaled is refused, so every record run writes reads back.
TEST(DeclaredWork, ByteAmountsTakeUnitsAndNothingInfiniteIsDeclared) {
    const auto d = parse_declared_work("copy {ops=0 bytes=8MB working_set=12MiB written=512B}");
    ASSERT_TRUE(d.work) << d.error;
    EXPECT_DOUBLE_EQ(d.work->compulsory_bytes, 8e6);
    EXPECT_DOUBLE_EQ(d.work->working_set_bytes, 12.0 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(*d.work->written_bytes, 512);
    EXPECT_FALSE(parse_declared_work("x {ops=1GB}").error.empty()) << "operations are not bytes";
    EXPECT_FALSE(parse_declared_work("x {ops=1e300T}").error.empty()) << "infinite once scaled";
    EXPECT_FALSE(parse_declared_work("x {bytes=1e400}").error.empty()) << "beyond a double";
}

// What parses, a record holds and reads back: report and diff read every record run writes
// (bytes=2e19 and working_set=1e20 were stored, then refused as beyond a 64-bit count).
TEST(DeclaredWork, EveryDeclaredAmountReadsBackFromARecord) {
    EXPECT_FALSE(parse_declared_work("x {bytes=2e19}").error.empty());
    EXPECT_FALSE(parse_declared_work("x {working_set=1e20}").error.empty());
    for (const char* message : {"x {bytes=1.8e19 working_set=18e18 written=1e19 ops=1e300}",
                                "x {ops=1e290G bytes=0}", "x {bytes=17Ti ops=4}"}) {
        const auto d = parse_declared_work(message);
        ASSERT_TRUE(d.work) << message << ": " << d.error;
        RunRecord record;
        RecordedRegion region;
        region.path = region.name = d.name;
        region.measurement.work = d.work;
        record.regions.push_back(region);
        RunRecord back;
        ASSERT_NO_THROW(back = parse_run_record(nlohmann::json(record).dump())) << message;
        ASSERT_TRUE(back.regions.at(0).measurement.work);
        EXPECT_EQ(back.regions[0].measurement.work->compulsory_bytes, d.work->compulsory_bytes) << message;
        EXPECT_EQ(back.regions[0].measurement.work->ops, d.work->ops) << message;
    }
}

// written= names the stores among the bytes (a triad stores one array of three), so the
// region is judged against the stream kernel of its mix; absent, the mix is unknown.
TEST(DeclaredWork, WrittenBytesAreTheStoresAmongTheBytes) {
    const auto d = parse_declared_work("triad {ops=134M bytes=805M written=268M}");
    ASSERT_TRUE(d.work) << d.error;
    ASSERT_TRUE(d.work->written_bytes);
    EXPECT_DOUBLE_EQ(*d.work->written_bytes, 268e6);
    EXPECT_FALSE(parse_declared_work("triad {ops=134M bytes=805M}").work->written_bytes);
}

TEST(Capture, NestingSelfTimeAndStartEndRanges) {
    CaptureDir d;
    d.strings(10, 5, {{1, "outer"}, {2, "inner {ops=1k bytes=100}"}, {3, "async"}, {4, "tick"}});
    d.events(10, 5, 10, 0,
             {ev(EventKind::push, 100, 1), ev(EventKind::start, 110, 3, 7), ev(EventKind::push, 200, 2),
              ev(EventKind::pop, 300), ev(EventKind::mark, 310, 4), ev(EventKind::push, 400, 2),
              ev(EventKind::pop, 450), ev(EventKind::pop, 1000)});
    // The start/end range ends on another thread.
    d.events(10, 5, 11, 0, {ev(EventKind::end, 900, 0, 7)});
    const NvtxCapture c = read_nvtx_capture(d.path(), 2000);
    ASSERT_EQ(c.instances.size(), 4u);
    std::map<std::string, std::vector<const RegionInstance*>> by;
    for (const auto& r : c.instances) by[r.path].push_back(&r);
    ASSERT_EQ(by["outer"].size(), 1u);
    EXPECT_EQ(by["outer"][0]->end_ns - by["outer"][0]->start_ns, 900);
    EXPECT_EQ(by["outer"][0]->child_ns, 150);
    ASSERT_EQ(by["outer/inner"].size(), 2u);
    EXPECT_EQ(by["outer/inner"][0]->parent, "outer");
    ASSERT_TRUE(by["outer/inner"][0]->work);
    EXPECT_EQ(by["outer/inner"][0]->name, "inner");
    ASSERT_EQ(by["async"].size(), 1u);
    EXPECT_FALSE(by["async"][0]->push_pop);
    EXPECT_EQ(by["async"][0]->tid, 10);
    EXPECT_EQ(by["async"][0]->end_ns, 900);
    ASSERT_EQ(c.marks.size(), 1u);
    EXPECT_EQ(c.marks[0].name, "tick");

    const auto regions = aggregate_regions({&c}, std::regex("inner"));
    std::map<std::string, const RecordedRegion*> reg;
    for (const auto& r : regions) reg[r.path] = &r;
    EXPECT_EQ(regions.front().path, "outer");  // timeline order
    EXPECT_NEAR(*reg["outer"]->self_s, 750e-9, 1e-15);
    EXPECT_EQ(reg["outer/inner"]->instances, 2u);
    EXPECT_TRUE(reg["outer/inner"]->model);
    EXPECT_FALSE(reg["outer"]->model);
    EXPECT_NEAR(reg["outer/inner"]->total_s_per_execution[0], 150e-9, 1e-15);
    ASSERT_TRUE(reg["outer/inner"]->measurement.work);
    EXPECT_DOUBLE_EQ(reg["outer/inner"]->measurement.work->ops, 1000);
    EXPECT_NEAR(covered_s(c, [](const RegionInstance&) { return true; }), 900e-9, 1e-15);
    EXPECT_NEAR(covered_s(c, [](const RegionInstance& r) { return r.name == "inner"; }), 150e-9, 1e-15);
}

// Covered time is the union over threads and nesting: checked against a count of covered
// nanoseconds on random spans of one thread (merged as they come) and of three (sorted).
TEST(Capture, CoveredTimeIsTheUnionOfTheSelectedSpans) {
    std::srand(7);
    for (int threads : {1, 3}) {
        NvtxCapture c;
        for (int t = 0; t < threads; ++t) {
            std::int64_t start = std::rand() % 50;
            for (int i = 0; i < 40; ++i) {
                RegionInstance r;
                r.name = i % 4 == 0 ? "rare" : "common";
                r.pid = 1;
                r.tid = t;
                r.start_ns = start;
                r.end_ns = start + std::rand() % 60;
                c.instances.push_back(r);
                start += std::rand() % 40;  // overlapping, nested, touching or apart
            }
        }
        for (const char* name : {"rare", "common"}) {
            std::vector<bool> covered(4000, false);
            for (const auto& r : c.instances)
                if (r.name == name)
                    for (auto t = r.start_ns; t < r.end_ns; ++t) covered[static_cast<std::size_t>(t)] = true;
            const auto expected = static_cast<double>(std::count(covered.begin(), covered.end(), true)) * 1e-9;
            EXPECT_NEAR(covered_s(c, [&](const RegionInstance& r) { return r.name == name; }), expected, 1e-15)
                << threads << " thread(s), " << name;
        }
    }
}

// Instances come out by (pid, tid, start, longest first), whatever order the ranges ended in
// (pops end the innermost first) and whatever order the files were read in.
TEST(Capture, InstancesAreOrderedByProcessThreadStartThenLongestFirst) {
    CaptureDir d;
    d.strings(30, 1, {{1, "a"}, {2, "b"}, {3, "c"}});
    // Thread 31: a[100, 900] holding b[100, 300] (same start: the longer first) and c[400, 500].
    d.events(30, 1, 31, 0,
             {ev(EventKind::push, 100, 1), ev(EventKind::push, 100, 2), ev(EventKind::pop, 300),
              ev(EventKind::push, 400, 3), ev(EventKind::pop, 500), ev(EventKind::pop, 900)});
    // Thread 30 starts later but sorts first (lower tid); a start/end range crosses threads.
    d.events(30, 1, 30, 0,
             {ev(EventKind::push, 600, 3), ev(EventKind::start, 650, 2, 9), ev(EventKind::pop, 700),
              ev(EventKind::push, 50, 1), ev(EventKind::pop, 60)});
    d.events(30, 1, 31, 1, {ev(EventKind::end, 950, 0, 9)});
    const NvtxCapture c = read_nvtx_capture(d.path(), 2000);
    std::vector<std::string> order;
    for (const auto& r : c.instances)
        order.push_back(std::to_string(r.tid) + ":" + r.path.str() + "@" + std::to_string(r.start_ns));
    EXPECT_EQ(order, (std::vector<std::string>{"30:a@50", "30:c@600", "30:b@650", "31:a@100",
                                               "31:a/b@100", "31:a/c@400"}));
}

TEST(Capture, OpenRangesEndWithTheProgramAndChunksJoin) {
    CaptureDir d;
    d.strings(20, 1, {{1, "doomed"}, {2, "step"}});
    d.events(20, 1, 20, 0, {ev(EventKind::push, 10, 1), ev(EventKind::push, 20, 2)});
    d.events(20, 1, 20, 1, {ev(EventKind::pop, 30), ev(EventKind::pop, 40), ev(EventKind::pop, 50),
                             ev(EventKind::push, 60, 1)});
    const NvtxCapture c = read_nvtx_capture(d.path(), 100);
    ASSERT_EQ(c.instances.size(), 3u);
    EXPECT_FALSE(c.warnings.empty()) << "the unbalanced pop is reported";
    const auto& last = c.instances.back();
    EXPECT_EQ(last.name, "doomed");
    EXPECT_TRUE(last.unclosed);
    EXPECT_EQ(last.end_ns, 100);
}

// ceiling's own cost in the program: each chunk's events at the costs its header carries
// (a range, push and pop, at range_ns; a CPU-time read at cpu_read_ns), plus each image's
// timing of those costs once, and none at all when a chunk with events carries no cost (an
// unknown is not a zero).
TEST(Capture, RecordingCostIsTheEventsAtTheCostsTheLibraryTimed) {
    CaptureDir d;
    d.strings(20, 1, {{1, "step"}});
    d.events(20, 1, 20, 0,
             {ev(EventKind::push, 10, 1), cpu_read(15, 5), ev(EventKind::pop, 20),
              ev(EventKind::push, 30, 1), ev(EventKind::pop, 40)},
             100.0f, 1000.0f, 5000.0f);
    d.events(20, 1, 21, 0, {ev(EventKind::mark, 50, 1)}, 80.0f, 2000.0f, 5000.0f);
    const NvtxCapture c = read_nvtx_capture(d.path(), 100);
    EXPECT_EQ(c.recorded_events, 6u);
    ASSERT_TRUE(c.recording_s.has_value());
    EXPECT_NEAR(*c.recording_s, (4 * 50.0 + 1000.0 + 40.0 + 5000.0) * 1e-9, 1e-15);

    CaptureDir untimed;
    untimed.strings(20, 1, {{1, "step"}});
    untimed.events(20, 1, 20, 0, {ev(EventKind::push, 10, 1), ev(EventKind::pop, 20)}, 100.0f,
                   1000.0f);
    untimed.events(20, 1, 21, 0, {ev(EventKind::push, 10, 1), ev(EventKind::pop, 20)});
    const NvtxCapture u = read_nvtx_capture(untimed.path(), 100);
    EXPECT_EQ(u.recorded_events, 4u);
    EXPECT_FALSE(u.recording_s.has_value());
}

TEST(Capture, ForkedImagesAreSeparateProcesses) {
    CaptureDir d;
    d.strings(30, 1, {{1, "parent"}});
    d.strings(31, 2, {{1, "parent"}, {2, "child"}});
    d.events(30, 1, 30, 0, {ev(EventKind::push, 10, 1), ev(EventKind::pop, 100)});
    d.events(31, 2, 31, 0, {ev(EventKind::push, 20, 2), ev(EventKind::pop, 50)});
    const NvtxCapture c = read_nvtx_capture(d.path(), 200);
    ASSERT_EQ(c.instances.size(), 2u);
    const auto regions = aggregate_regions({&c}, std::nullopt);
    for (const auto& r : regions) EXPECT_EQ(r.processes, 1) << r.path;
    EXPECT_EQ(c.instances[1].path, "child");
    EXPECT_EQ(c.instances[1].pid, 31);
}

TEST(Capture, GarbageFilesAreSkippedWithAWarning) {
    CaptureDir d;
    std::ofstream(d.path() / "1-1-1-0.evt") << "not an event file";
    const NvtxCapture c = read_nvtx_capture(d.path(), 0);
    EXPECT_TRUE(c.instances.empty());
    EXPECT_EQ(c.warnings.size(), 1u);
}

// The cores a region held at once: the busiest 10 % of the sampler's looks inside each
// instance (time-weighted), so an OpenMP team whose second thread idles after a third of the
// region reads 2, not its mean 1.33; one look out of ten does not move a single thread.
TEST(Capture, PeakBusyCoresAreTheBusiestTenthOfTheLooksInside) {
    constexpr std::int64_t ms = 1'000'000;
    std::vector<TimelinePoint> cpu;
    double v = 0;
    for (int i = 0; i <= 30; ++i) {  // a point every 10 ms: 2 cores busy, then 1
        cpu.push_back({i * 10 * ms, v});
        v += (i < 10 ? 2.0 : 1.0) * 0.010;
    }
    NvtxCapture cap;
    RegionInstance team, alone, short_one;
    team.start_ns = 0;
    team.end_ns = 300 * ms;  // 30 looks: 10 at 2, 20 at 1
    alone.start_ns = 95 * ms;
    alone.end_ns = 300 * ms;  // the looks from 100 ms on: 1 core
    short_one.start_ns = 5 * ms;
    short_one.end_ns = 28 * ms;  // one whole look inside
    cap.instances = {team, alone, short_one};
    attribute_peak_busy(cap, cpu);
    ASSERT_TRUE(cap.instances[0].peak_busy_cores);
    EXPECT_NEAR(*cap.instances[0].peak_busy_cores, 2.0, 1e-9);
    ASSERT_TRUE(cap.instances[1].peak_busy_cores);
    EXPECT_NEAR(*cap.instances[1].peak_busy_cores, 1.0, 1e-9);
    EXPECT_FALSE(cap.instances[2].peak_busy_cores) << "fewer than three looks: unknown";
    // One busy look of twenty does not reach a tenth of the time.
    cpu[20].value += 0.005;
    for (std::size_t i = 21; i < cpu.size(); ++i) cpu[i].value += 0.005;
    attribute_peak_busy(cap, cpu);
    EXPECT_NEAR(*cap.instances[1].peak_busy_cores, 1.0, 1e-9);
}

// The CPU time below an instance's process while it was open: from the timeline of that
// pid whose readings reach into it (a pid reused later is another process); none for a
// process whose descendants used none.
TEST(Capture, DescendantCpuIsItsOwnProcesssTimelineOverTheInstance) {
    constexpr std::int64_t ms = 1'000'000;
    ProcessTimeline first{7, {{0, 0.0}, {100 * ms, 0.0}, {200 * ms, 0.2}}};  // 2 cores 100-200
    ProcessTimeline reused{7, {{500 * ms, 0.0}, {600 * ms, 0.05}}};
    NvtxCapture cap;
    RegionInstance busy, idle, later, other;
    busy.pid = idle.pid = later.pid = 7;
    other.pid = 8;
    busy.start_ns = 100 * ms;
    busy.end_ns = 200 * ms;
    idle.start_ns = 10 * ms;
    idle.end_ns = 90 * ms;
    later.start_ns = 500 * ms;
    later.end_ns = 600 * ms;
    other.start_ns = 100 * ms;
    other.end_ns = 200 * ms;
    cap.instances = {busy, idle, later, other};
    attribute_descendant_cpu(cap, {first, reused}, 2);
    ASSERT_TRUE(cap.instances[0].descendant_cpu_s);
    EXPECT_NEAR(*cap.instances[0].descendant_cpu_s, 0.2, 1e-9);
    ASSERT_TRUE(cap.instances[1].descendant_cpu_s);
    EXPECT_NEAR(*cap.instances[1].descendant_cpu_s, 0.0, 1e-9);
    ASSERT_TRUE(cap.instances[2].descendant_cpu_s);
    EXPECT_NEAR(*cap.instances[2].descendant_cpu_s, 0.05, 1e-9);
    EXPECT_FALSE(cap.instances[3].descendant_cpu_s) << "no process below pid 8 used CPU time";
}

// Other processes' CPU time over each instance: the host's less the instance's own process's
// and its descendants'. A tick-noisy dip is not read as negative time; an instance outside the
// readings, or without its process's CPU time, gets none.
TEST(Capture, OtherProcessesCpuIsTheHostsLessItsOwnOverTheInstance) {
    constexpr std::int64_t ms = 1'000'000;
    // One core busy from 100 ms on (the reading at 150 ms a tick low).
    const std::vector<TimelinePoint> host = {
        {0, 5.0}, {100 * ms, 5.0}, {150 * ms, 4.99}, {200 * ms, 5.1}, {300 * ms, 5.2}};
    NvtxCapture cap;
    RegionInstance quiet, served, itself, after, unknown, early;
    quiet.start_ns = 10 * ms;
    quiet.end_ns = 90 * ms;
    served.start_ns = itself.start_ns = unknown.start_ns = 100 * ms;
    served.end_ns = itself.end_ns = unknown.end_ns = 300 * ms;
    after.start_ns = 250 * ms;
    after.end_ns = 400 * ms;
    quiet.cpu_s = served.cpu_s = after.cpu_s = 0.0;
    // The busy core was its own process (0.15) and a child's (0.05): nothing else's.
    itself.cpu_s = 0.15;
    itself.descendant_cpu_s = 0.05;
    // Opened 10 ms before the first reading (a range at the program's start): read over
    // the 190 ms covered (0.08 s: the 150 ms reading is raised to 5.0), at that rate.
    early.start_ns = -10 * ms;
    early.end_ns = 190 * ms;
    early.cpu_s = 0.0;
    cap.instances = {quiet, served, itself, after, unknown, early};
    attribute_other_cpu(cap, host, 2);
    ASSERT_TRUE(cap.instances[0].other_cpu_s);
    EXPECT_NEAR(*cap.instances[0].other_cpu_s, 0.0, 1e-9);
    ASSERT_TRUE(cap.instances[1].other_cpu_s);
    EXPECT_NEAR(*cap.instances[1].other_cpu_s, 0.2, 1e-9);
    ASSERT_TRUE(cap.instances[2].other_cpu_s);
    EXPECT_NEAR(*cap.instances[2].other_cpu_s, 0.0, 1e-9);
    EXPECT_FALSE(cap.instances[3].other_cpu_s) << "it ends after the last reading";
    EXPECT_FALSE(cap.instances[4].other_cpu_s) << "its process's CPU time is unknown";
    ASSERT_TRUE(cap.instances[5].other_cpu_s);
    EXPECT_NEAR(*cap.instances[5].other_cpu_s, 0.08 * 200.0 / 190, 1e-9);
}

// Storage bytes of the program while each instance was open, from the sampler's cumulative
// readings: interpolated between them; a range opened a little before the first reading is
// scaled from the part covered; one mostly outside the readings gets none.
TEST(RegionStorage, IsInterpolatedFromTheSamplersReadings) {
    constexpr std::int64_t ms = 1'000'000;
    const std::vector<TimelinePoint> read = {{0, 0}, {100 * ms, 100e6}, {200 * ms, 100e6}};
    const std::vector<TimelinePoint> written = {{0, 0}, {200 * ms, 20e6}};
    NvtxCapture cap;
    RegionInstance loading, idle, early, outside;
    loading.start_ns = 25 * ms;
    loading.end_ns = 75 * ms;
    idle.start_ns = 120 * ms;
    idle.end_ns = 180 * ms;
    early.start_ns = -5 * ms;
    early.end_ns = 95 * ms;
    outside.start_ns = 150 * ms;
    outside.end_ns = 400 * ms;
    cap.instances = {loading, idle, early, outside};
    attribute_sampled(cap, read, &RegionInstance::storage_read_bytes);
    attribute_sampled(cap, written, &RegionInstance::storage_write_bytes);
    ASSERT_TRUE(cap.instances[0].storage_read_bytes && cap.instances[0].storage_write_bytes);
    EXPECT_NEAR(*cap.instances[0].storage_read_bytes, 50e6, 1);
    EXPECT_NEAR(*cap.instances[0].storage_write_bytes, 5e6, 1);
    EXPECT_NEAR(*cap.instances[1].storage_read_bytes, 0, 1);
    ASSERT_TRUE(cap.instances[2].storage_read_bytes);
    EXPECT_NEAR(*cap.instances[2].storage_read_bytes, 95e6 * 100 / 95, 1);
    EXPECT_FALSE(cap.instances[3].storage_read_bytes) << "mostly after the last reading";

    // A quantity that never grew, with others in one pass: 0 where covered, as interpolated.
    const std::vector<TimelinePoint> none = {{0, 7}, {100 * ms, 7}, {200 * ms, 7}};
    for (auto& r : cap.instances) r.storage_read_bytes.reset(), r.storage_write_bytes.reset();
    attribute_sampled(cap, {{&none, &RegionInstance::storage_read_bytes, std::nullopt},
                            {&written, &RegionInstance::storage_write_bytes, std::nullopt},
                            {&none, &RegionInstance::system_cpu_s, 1.0}});
    for (std::size_t i = 0; i < 3; ++i) {
        ASSERT_TRUE(cap.instances[i].storage_read_bytes && cap.instances[i].system_cpu_s) << i;
        EXPECT_EQ(*cap.instances[i].storage_read_bytes, 0.0);
        EXPECT_EQ(*cap.instances[i].system_cpu_s, 0.0);
    }
    EXPECT_NEAR(*cap.instances[0].storage_write_bytes, 5e6, 1);
    EXPECT_FALSE(cap.instances[3].storage_read_bytes);
    EXPECT_FALSE(cap.instances[3].storage_write_bytes);
}

// Kernel time is what must have fallen inside each instance (the lower bound the readings
// and the CPUs' rate allow): a 3 ms range inside a 10 ms interval whose 5 ms of kernel time
// may all lie outside it gets none; one across ten busy intervals keeps all but its ends'.
TEST(RegionKernelTime, IsWhatTheReadingsPutInsideEachInstance) {
    constexpr std::int64_t ms = 1'000'000;
    std::vector<TimelinePoint> system = {{0, 0}, {10 * ms, 0.005}};
    for (int i = 2; i <= 12; ++i) system.push_back({i * 10 * ms, 0.005 + (i - 1) * 0.010});
    NvtxCapture cap;
    RegionInstance brief, long_one;
    brief.start_ns = 4 * ms;
    brief.end_ns = 7 * ms;
    long_one.start_ns = 15 * ms;
    long_one.end_ns = 115 * ms;
    cap.instances = {brief, long_one};
    attribute_sampled(cap, system, &RegionInstance::system_cpu_s, 1.0);
    ASSERT_TRUE(cap.instances[0].system_cpu_s && cap.instances[1].system_cpu_s);
    EXPECT_NEAR(*cap.instances[0].system_cpu_s, 0, 1e-12);
    EXPECT_NEAR(*cap.instances[1].system_cpu_s, 0.100, 0.010 + 1e-9);
    // Interpolated, the brief one would have read 1.5 ms: half its time.
    attribute_sampled(cap, system, &RegionInstance::system_cpu_s);
    EXPECT_NEAR(*cap.instances[0].system_cpu_s, 0.0015, 1e-9);
}

// Working threads of the sampler's windows over each instance, weighted by the overlap; an
// instance inside one window takes that window's; one outside every window gets none.
TEST(Capture, WorkingThreadsOfTheWindowsOverEachInstance) {
    constexpr std::int64_t ms = 1'000'000;
    const std::vector<ThreadWindow> windows = {{0, 500 * ms, 4.0, 0.5},
                                               {500 * ms, 1000 * ms, 1.0, 0.5}};
    NvtxCapture cap;
    RegionInstance inside, across, instant, outside;
    inside.start_ns = 100 * ms;
    inside.end_ns = 200 * ms;
    across.start_ns = 400 * ms;  // 100 ms in the first window, 300 in the second
    across.end_ns = 800 * ms;
    instant.start_ns = instant.end_ns = 600 * ms;
    outside.start_ns = 1100 * ms;
    outside.end_ns = 1200 * ms;
    cap.instances = {inside, across, instant, outside};
    attribute_working_threads(cap, windows);
    ASSERT_TRUE(cap.instances[0].working_threads);
    EXPECT_DOUBLE_EQ(*cap.instances[0].working_threads, 4.0);
    ASSERT_TRUE(cap.instances[1].working_threads);
    EXPECT_DOUBLE_EQ(*cap.instances[1].working_threads, (4.0 * 100 + 1.0 * 300) / 400);
    ASSERT_TRUE(cap.instances[2].working_threads);
    EXPECT_DOUBLE_EQ(*cap.instances[2].working_threads, 1.0);
    EXPECT_FALSE(cap.instances[3].working_threads);
}

TEST(Launch, ResolvesLikeAShell) {
    CaptureDir d;
    const auto exe = d.path() / "tool";
    std::ofstream(exe) << "#!/bin/sh\n";
    chmod(exe.c_str(), 0755);
    const auto plain = d.path() / "plain";
    std::ofstream(plain) << "data";
    chmod(plain.c_str(), 0644);
    EXPECT_EQ(resolve_program("tool", "/nonexistent:" + d.path().string()).path, exe);
    EXPECT_EQ(resolve_program("plain", d.path().string()).status, 126);
    EXPECT_EQ(resolve_program("nothing-here", d.path().string()).status, 127);
    EXPECT_EQ(resolve_program(plain.string(), "").status, 126);
    EXPECT_EQ(resolve_program((d.path() / "missing").string(), "").status, 127);
    EXPECT_EQ(resolve_program(d.path().string(), "").status, 126);  // a directory
    EXPECT_EQ(resolve_program(exe.string(), "").status, 0);
}

TEST(Launch, EndsAreNamedLikeAShell) {
    EXPECT_EQ(process_end_from_status(3 << 8).shell_status(), 3);
    const ProcessEnd segv = process_end_from_status(SIGSEGV);
    EXPECT_EQ(segv.kind, EndKind::signaled);
    EXPECT_EQ(segv.signal_name, "SIGSEGV");
    EXPECT_EQ(segv.shell_status(), 139);
    EXPECT_EQ(signal_name(SIGKILL), "SIGKILL");
}

TEST(LaunchContext, RanksAndNames) {
    const std::map<std::string, std::string> env = {{"SLURM_PROCID", "7"}, {"SLURM_NTASKS", "8"}};
    const auto rank = detect_rank([&](const char* n) {
        const auto it = env.find(n);
        return it == env.end() ? nullptr : it->second.c_str();
    });
    ASSERT_TRUE(rank);
    EXPECT_EQ(rank->rank, 7);
    EXPECT_EQ(rank->world_size, 8);
    EXPECT_EQ(rank->source, "SLURM_PROCID");
    EXPECT_FALSE(detect_rank([](const char*) -> const char* { return "x"; }));
    EXPECT_EQ(with_rank("out/r.json", 3), "out/r.rank3.json");
    EXPECT_EQ(with_rank("r", 3), "r.rank3");
    EXPECT_EQ(with_rank("r.json", std::nullopt), "r.json");
    for (auto name : environment_allowlist())
        for (const char* secretish : {"SECRET", "PASSWORD", "_KEY", "AUTH", "CREDENTIAL"})
            EXPECT_EQ(std::string(name).find(secretish), std::string::npos) << name;
}

}  // namespace
}  // namespace ceiling::measure

namespace ceiling::measure {
namespace {

// Each process that records leaves its peak resident set at exit: the capture keeps the
// largest, and ignores one that cannot be a process's.
TEST(CapturePeak, TheLargestPeakOfTheRecordingProcessesIsKept) {
    testing::CaptureFiles d;
    d.strings(5, 1, {{1, "step"}});
    d.events(5, 1, 5, 0,
             {testing::event(inject::EventKind::push, 100, 1),
              testing::event(inject::EventKind::pop, 200)});
    EXPECT_FALSE(read_nvtx_capture(d.path(), 1000, 1).peak_rss_bytes) << "none left: none known";
    d.peak(5, 1, 3 << 20);
    d.peak(6, 1, 9 << 20);
    d.peak(7, 1, std::uint64_t{1} << 62);
    const NvtxCapture cap = read_nvtx_capture(d.path(), 1000, 1);
    ASSERT_TRUE(cap.peak_rss_bytes);
    EXPECT_EQ(*cap.peak_rss_bytes, 9 << 20);
}

// Instances still open when their process ended (the run interrupted mid-range) did not do the
// work they declare: beside closed ones they are left out of the region's timing, and the
// diagnosis says so; a region with only such instances is timed on them, and their declared
// work gives no rate.
TEST(CutShort, InstancesStillOpenAtTheEndAreLeftOutOfTheTiming) {
    constexpr std::int64_t ms = 1'000'000;
    NvtxCapture cap;
    auto instance = [&](const char* name, std::int64_t start, std::int64_t end, bool open) {
        RegionInstance r;
        r.name = r.path = name;
        r.pid = r.tid = 1;
        r.start_ns = start;
        r.end_ns = end;
        r.unclosed = open;
        Work w;
        w.ops = open ? 5e6 : 1e6;
        r.work = w;
        cap.instances.push_back(r);
    };
    instance("walk", 0, 100 * ms, false);
    instance("walk", 100 * ms, 200 * ms, false);
    instance("walk", 200 * ms, 230 * ms, true);
    instance("main", 0, 230 * ms, true);
    const auto regions = aggregate_regions({&cap}, std::nullopt);
    const auto walk = std::find_if(regions.begin(), regions.end(),
                                   [](const RecordedRegion& r) { return r.path == "walk"; });
    const auto main = std::find_if(regions.begin(), regions.end(),
                                   [](const RecordedRegion& r) { return r.path == "main"; });
    ASSERT_TRUE(walk != regions.end() && main != regions.end());
    EXPECT_EQ(walk->instances, 3u);
    EXPECT_EQ(walk->measurement.duration_s.count, 2u);
    EXPECT_NEAR(walk->measurement.duration_s.median, 0.100, 1e-9);
    EXPECT_NEAR(walk->total_s_per_execution.at(0), 0.230, 1e-9) << "its time is all its time";
    const auto said = judge::cut_short(*walk);
    ASSERT_TRUE(said);
    EXPECT_NE(said->detail.find("1 instance still open"), std::string::npos) << said->detail;
    EXPECT_EQ(main->measurement.duration_s.count, 1u) << "only open instances: timed on them";
    EXPECT_FALSE(judge::cut_short(*main));
    // Their declared work is not work done: the closed instances' alone, and none for a
    // region never closed (a crash inside it read 1000-1900 % of a roof).
    ASSERT_TRUE(walk->measurement.work);
    EXPECT_DOUBLE_EQ(walk->measurement.work->ops, 1e6);
    EXPECT_FALSE(main->measurement.work) << "a rate from work it never finished";
}

}  // namespace
}  // namespace ceiling::measure
