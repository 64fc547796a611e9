// How a region is judged once its work and busy cores are known: against the roof of the
// cores its process kept busy (or held, or that the processes it started or other processes
// used, or the quota and affinity allow), and what it says when its work ran elsewhere or the
// host left cores idle. What comes first among its moves, beside the roof, is
// region_moves_test.cpp. The records are synthetic (judged_records.hpp), judged against the
// synthetic profile.
#include "agent/judge/region_judging.hpp"

#include <algorithm>
#include <sstream>

#include <gtest/gtest.h>

#include "agent/judge/judge_record.hpp"
#include "agent/output/run_summary.hpp"
#include "tests/unit/agent/judged_records.hpp"

namespace ceiling::judge {
namespace {

using namespace judged;

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
    // Two workers it started, read low by the sampler (reaped just before the range ended,
    // in a long interval of a loaded host): within that error they did the work themselves,
    // so it is not handed to the host's other processes. Without the error it would be.
    auto pool = served;
    pool.path = pool.name = "pool";
    pool.descendant_busy_cores = 0.7;
    pool.descendant_busy_cores_error = 0.6;
    pool.other_busy_cores = 2.0;  // their unread time shows as the host's
    auto pool_exact = pool;
    pool_exact.path = pool_exact.name = "pool_exact";
    pool_exact.descendant_busy_cores_error.reset();
    RunRecord rec =
        record_of({client, bursts, rough, served, unexplained, pool, pool_exact}, 1.0);
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

    EXPECT_FALSE(outside("pool"));
    EXPECT_EQ(verdict(rec, "pool").roofs.front().threads, 1);
    EXPECT_NE(verdict(rec, "pool").findings.front().detail.find("0.70 (+-0.60"),
              std::string::npos)
        << verdict(rec, "pool").findings.front().detail;
    EXPECT_TRUE(outside("pool_exact"));
    EXPECT_EQ(verdict(rec, "pool_exact").roofs.front().threads, 2);
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

// A pipeline's stage: its process kept 1.9 cores busy, 0.95 of them its other thread inside
// the other stage's ranges. Judged at the 0.95 that are its own (at 1.9 its 0.9 x one core's
// roof read 47 %, latency bound), and those cores are not idle.
TEST(RoofOfTheCoresInUse, AStageIsJudgedWithoutTheStagesBesideIt) {
    auto stage = timed_region("stage", fp32(0.9 * 35.9e9 * 0.01, 0), 0.01);
    stage.busy_cores = 1.9;
    stage.busy_cores_error = 0.001;
    stage.other_busy_cores = 0.05;
    stage.beside_busy_cores = 0.95;
    RunRecord rec = record_of({stage}, 1.0);
    judge_record(rec);
    const Diagnosis& d = verdict(rec, "stage");
    ASSERT_TRUE(d.bound) << d.observation;
    EXPECT_EQ(*d.bound, Bound::compute);
    EXPECT_NEAR(*d.roofs.front().fraction, 0.9, 1e-9) << "of one core's roof";
    EXPECT_TRUE(has_finding(d, "judged against the 1-thread roof: 0.95 cores busy"));
    EXPECT_TRUE(
        has_finding(d, "its process kept 1.90 cores busy, 0.95 of them on its other threads"));
    // 4 CPUs: 4 - 0.05 - 0.95 - 0.95 = 2.05 idle, the same as before the stages were told apart.
    EXPECT_TRUE(has_finding(d, "2.05 idle while it was open")) << d.first_move;
}

// A model loop at 90 % of one core's roof beside a thread that records no ranges (a loader):
// judged at both threads' cores it reads latency bound, and CPU time cannot tell helpers
// from work beside it, so what it reads at the cores left is said. Where the rate needs
// those cores (above one core's roof), they were its helpers: nothing is said.
TEST(RoofOfTheCoresInUse, ThreadsRecordingNoRangesMayBeWorkBesideItAndThatIsSaid) {
    auto model = busy_region("model", fp32(0.9 * 35.9e9 * 0.01, 0), 0.01, 1.9);
    model.unranged_busy_cores = 0.9;
    RunRecord rec = record_of({model}, 1.0);
    judge_record(rec);
    const Diagnosis& d = verdict(rec, "model");
    ASSERT_TRUE(d.bound);
    EXPECT_EQ(*d.bound, Bound::latency) << "judged at 1.90 cores, as if helpers";
    EXPECT_TRUE(has_finding(d,
                            "0.90 of its 1.90 busy cores were on threads that record no "
                            "ranges"));
    EXPECT_TRUE(has_finding(d, "at the 1.00 cores left it reads compute bound"));
    auto team = busy_region("model", fp32(1.6 * 35.9e9 * 0.01, 0), 0.01, 1.9);
    team.unranged_busy_cores = 0.9;
    RunRecord helped = record_of({team}, 1.0);
    judge_record(helped);
    EXPECT_FALSE(has_finding(verdict(helped, "model"), "threads that record no ranges"))
        << "1.6 x one core's roof: those threads did its work";
}

// A range around submitting work to a pool busy with earlier submissions: two cores busy, its
// declared work 50 x their roof. Not "ran elsewhere" (its process was busy), but the range
// may have ended before its work: said beside the usual causes.
TEST(RoofOfTheCoresInUse, AboveTheRoofARangeMayEndBeforeItsWork) {
    auto submit = busy_region("submit", fp32(50 * 2 * 35.9e9 * 0.001, 0), 0.001, 2.0);
    RunRecord rec = record_of({submit}, 1.0);
    judge_record(rec);
    const Diagnosis& d = verdict(rec, "submit");
    EXPECT_EQ(d.verdict, Verdict::above_roof);
    EXPECT_TRUE(has_finding(d, "a range that ends before the work it declares"));
}

// Ranges beside it that were its work (a team ranging its shares under another name while
// its own thread worked): without their cores it would run at 1.6 x the roof of those left,
// which it cannot; judged with them, and said.
TEST(RoofOfTheCoresInUse, RangesBesideItThatDidItsWorkAreKept) {
    auto step = busy_region("step", fp32(1.6 * 35.9e9 * 0.01, 0), 0.01, 1.9);
    step.beside_busy_cores = 0.95;
    RunRecord rec = record_of({step}, 1.0);
    judge_record(rec);
    const Diagnosis& d = verdict(rec, "step");
    EXPECT_NE(d.verdict, Verdict::above_roof);
    EXPECT_TRUE(has_finding(d, "did its work: without their cores it ran above the roof"));
}

// A team of two whose second thread works a third of the first's time, in instances of
// 17 ms under 10 ms looks: no look tells the cores it held, so a finding says which
// --interval would; longer instances, a balanced team, threads that took turns, a look
// that did tell, or a program of several processes get none.
TEST(RoofOfTheCoresInUse, InstancesTooShortForTheLooksToShowHeldCoresAskForAShorterInterval) {
    auto team = timed_region("team", fp32(0.95 * 35.9e9 * 0.017 * 1.33, 0), 0.017);
    team.busy_cores = 1.33;
    team.busy_cores_error = 0.001;
    team.working_threads = 1.6;
    auto long_team = team;
    long_team.path = long_team.name = "long";
    long_team.measurement.durations_s = std::vector<double>(5, 0.05);
    long_team.measurement.duration_s = summarize(long_team.measurement.durations_s);
    auto balanced = team;
    balanced.path = balanced.name = "balanced";
    balanced.working_threads = 1.38;
    auto turns = team;
    turns.path = turns.name = "turns";
    turns.busy_cores = 1.0;
    turns.working_threads = 2.0;
    auto seen = team;
    seen.path = seen.name = "seen";
    seen.peak_busy_cores = 2.0;
    auto processes = team;
    processes.path = processes.name = "processes";
    processes.processes = 2;
    auto tiny = team;
    tiny.path = tiny.name = "tiny";
    tiny.measurement.durations_s = std::vector<double>(5, 0.004);
    tiny.measurement.duration_s = summarize(tiny.measurement.durations_s);
    RunRecord rec = record_of({team, long_team, balanced, turns, seen, processes, tiny}, 1.0);
    rec.options.interval_s = 0.010;
    judge_record(rec);
    EXPECT_TRUE(has_finding(verdict(rec, "team"), "1.60 working threads kept 1.33 cores busy"));
    EXPECT_TRUE(has_finding(verdict(rec, "team"), "run again with --interval 2ms"));
    EXPECT_TRUE(has_finding(verdict(rec, "tiny"), "too short even for the sampler's 1 ms looks"));
    for (const char* path : {"long", "balanced", "turns", "seen", "processes"})
        EXPECT_FALSE(has_finding(verdict(rec, path), "working threads kept")) << path;
    rec.options.interval_s.reset();  // not sampled: nothing could have told
    judge_record(rec);
    EXPECT_FALSE(has_finding(verdict(rec, "team"), "working threads kept"));
}

// Under a container's CPU quota its threads run on more CPUs at once than the quota's share
// of a period, then wait: a region is judged at the quota, never at the cores it held past
// it, and below one CPU every roof is the quota's share of the measured one. The cores the
// host left idle count only up to the quota.
TEST(RoofOfTheCoresInUse, ACpuQuotaCapsTheCoresARegionIsJudgedAt) {
    const auto under_quota = [](RecordedRegion r, double quota) {
        RunRecord rec = record_of({std::move(r)}, 5.0);
        rec.executions.front().counters.push_back({"cpu_quota_cpus", quota, "CPUs"});
        judge_record(rec);
        return rec;
    };
    auto team = timed_region("team", fp32(0.95 * 35.9e9, 1e6), 1.0);
    team.busy_cores = 1.0;
    team.peak_busy_cores = 2.0;
    {
        const RunRecord rec = under_quota(team, 1.0);
        const Diagnosis& d = verdict(rec, "team");
        EXPECT_NEAR(*d.roofs.front().fraction, 0.95, 1e-9) << "judged at 1 CPU, not 2 held";
        EXPECT_EQ(d.first_move.find("keep the cores"), std::string::npos) << d.first_move;
        EXPECT_TRUE(has_finding(d, "its control group's CPU quota gives 1.00 CPUs' time"));
        EXPECT_EQ(rec.regions.front().held_cores(rec.thresholds, usable_cpus(rec)), std::nullopt);
    }
    auto half = timed_region("half", fp32(0.5 * 0.95 * 35.9e9, 1e6), 1.0);
    half.busy_cores = 0.5;
    half.peak_busy_cores = 1.9;
    {
        const RunRecord rec = under_quota(half, 0.5);
        const Diagnosis& d = verdict(rec, "half");
        ASSERT_TRUE(d.bound);
        EXPECT_EQ(*d.bound, Bound::compute);
        EXPECT_NEAR(*d.roofs.front().fraction, 0.95, 1e-9) << "half a CPU's roof";
        EXPECT_TRUE(has_finding(d, "every roof 0.50 x the measured one"));
    }
    auto lone = timed_region("lone", fp32(0.95 * 35.9e9 * 0.01, 0), 0.01);
    lone.busy_cores = 1.0;
    lone.busy_cores_error = 0.001;
    lone.other_busy_cores = 0.0;
    EXPECT_FALSE(has_finding(verdict(under_quota(lone, 1.5), "lone"), "idle while it was open"))
        << "one whole CPU under the quota: none idle";
    const Diagnosis two = verdict(under_quota(lone, 2.0), "lone");
    EXPECT_TRUE(has_finding(two, "of the 2 CPUs its control group's quota gives"));
    EXPECT_EQ(two.first_move.rfind("use the idle cores (2.00 x its roof at 2 threads", 0), 0u)
        << two.first_move;
}

// Eight threads under `taskset -c 0` on a host of idle CPUs: the mask, not the thread
// count, is the lever ("use the idle cores ... more threads" before).
TEST(RoofOfTheCoresInUse, ANarrowAffinityMaskIsTheLeverWhereTheHostIdles) {
    auto lone = timed_region("lone", fp32(0.95 * 35.9e9 * 0.01, 0), 0.01);
    lone.busy_cores = 1.0;
    lone.busy_cores_error = 0.001;
    lone.other_busy_cores = 0.0;
    const auto masked_to = [&](double cpus) {
        RunRecord rec = record_of({lone}, 5.0);
        rec.executions.front().counters.push_back({"affinity_cpus", cpus, "CPUs"});
        judge_record(rec);
        return verdict(rec, "lone");
    };
    const Diagnosis one = masked_to(1);
    EXPECT_EQ(one.first_move.rfind("widen its CPU affinity (it allowed 1 of 4 CPUs; 4.00 x its "
                                   "roof at 4 threads); then ",
                                   0),
              0u)
        << one.first_move;
    EXPECT_TRUE(has_finding(one, "its CPU affinity allowed 1 of the 4 CPUs it could use"));
    const Diagnosis all = masked_to(4);
    EXPECT_EQ(all.first_move.rfind("use the idle cores (4.00 x its roof at 4 threads", 0), 0u)
        << all.first_move;
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

}  // namespace
}  // namespace ceiling::judge
