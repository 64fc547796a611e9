// What comes first among a judged region's (or run's) moves beside its roof: storage and
// kernel time, threads that took turns or queued for a CPU, tiny ops, one thread busy beside
// idle CPUs; the run's line when only regions were judged, and what an undeclared or
// half-declared region says. Which roof a region is judged at is region_judging_test.cpp.
// The records are synthetic (judged_records.hpp), judged against the synthetic profile:
// fp32 vector 35.9 GFLOP/s at 1 thread, 143.7 at 4.
#include <algorithm>
#include <sstream>

#include <gtest/gtest.h>

#include "agent/judge/judge_record.hpp"
#include "agent/judge/region_judging.hpp"
#include "agent/output/run_summary.hpp"
#include "tests/unit/agent/judged_records.hpp"

namespace ceiling::judge {
namespace {

using namespace judged;

// A range around reading a file: its declared bytes at 10 % of the DRAM roof, while storage
// served its program at the storage roof: I/O bound, with the numbers; below the roof's
// near_roof share, the roofs decide as before; undeclared, the storage still decides.
TEST(FirstMoves, ARegionWhileStorageRanAtItsRoofIsIoBound) {
    auto load = busy_region("load", fp32(0, 0.1 * 20e9 * 0.01), 0.01, 0.4);
    load.storage_read_bytes_per_s = 1.8e9;
    RunRecord rec = record_of({load}, 1.0);
    StorageRoof disk;
    disk.read_bytes_per_s.max = 2e9;
    disk.write_bytes_per_s.max = 1e9;
    rec.machine_profile->storage = disk;
    judge_record(rec);
    const Diagnosis& d = verdict(rec, "load");
    EXPECT_EQ(d.diagnosis, "not the model (I/O bound)");
    EXPECT_TRUE(has_finding(d, "storage served its program 1.8 GB/s read")) << d.first_move;
    rec.regions.front().storage_read_bytes_per_s = 0.5e9;
    judge_record(rec);
    EXPECT_NE(verdict(rec, "load").diagnosis, "not the model (I/O bound)");
    rec.regions.front().storage_read_bytes_per_s = 1.8e9;
    rec.regions.front().measurement.work.reset();
    judge_record(rec);
    EXPECT_EQ(verdict(rec, "load").diagnosis, "not the model (I/O bound)") << "undeclared";
}

// A third of its program's CPU time in the kernel while it was open (a read from the page
// cache, a buffer freed and faulted in again each time): said, and first among the moves; a
// fifth of it (the run's system_time_share) is the line; from half on (kernel_time_share)
// the kernel did more of its work than its code, and the table's kernel row decides it.
TEST(FirstMoves, MuchKernelTimeInsideARegionComesFirst) {
    auto copy = busy_region("copy", fp32(0, 0.2 * 20e9 * 0.01), 0.01, 1.0);
    copy.system_busy_cores = 0.3;
    RunRecord rec = record_of({copy}, 1.0);
    judge_record(rec);
    const Diagnosis& d = verdict(rec, "copy");
    EXPECT_TRUE(has_finding(d,
                            "30 % of its program's CPU time while it was open was in the "
                            "kernel"));
    // Before the table's move (the idle cores of this 4-CPU host come before both).
    const auto kernel = d.first_move.find("spend less time in the kernel (at least 30 %");
    ASSERT_NE(kernel, std::string::npos) << d.first_move;
    EXPECT_LT(kernel, d.first_move.find("dependency stalls")) << d.first_move;
    EXPECT_EQ(d.diagnosis, "latency bound");
    rec.regions.front().system_busy_cores = 0.6;
    judge_record(rec);
    EXPECT_EQ(verdict(rec, "copy").diagnosis, "not the model (kernel bound)");
    EXPECT_NE(verdict(rec, "copy").first_move.find("fewer, larger system calls"), std::string::npos)
        << verdict(rec, "copy").first_move;
    rec.regions.front().system_busy_cores = 0.1;
    judge_record(rec);
    EXPECT_FALSE(has_finding(verdict(rec, "copy"), "in the kernel"));
}

// A run kernel bound by what lay outside its regions (a benchmark's setup faulting in its
// arrays) says so, its regions judged on their own; where they held the kernel time, not.
TEST(FirstMoves, KernelTimeOutsideTheRegionsIsTheRunsOwn) {
    auto triad = busy_region("triad", fp32(0.2e9, 2.4e9), 0.01, 1.0);
    triad.system_busy_cores = 0.01;
    RunRecord rec = record_of({triad}, 1.0);
    rec.executions.front().counters = {
        {"user_s", 0.3, "s", Source::software, std::nullopt, false},
        {"system_s", 0.6, "s", Source::software, std::nullopt, false}};
    judge_record(rec);
    ASSERT_TRUE(rec.diagnosis);
    ASSERT_EQ(rec.diagnosis->diagnosis, "not the model (kernel bound)");
    EXPECT_TRUE(has_finding(*rec.diagnosis, "100% of it lay outside them"));
    rec.regions.front().system_busy_cores = 1.0;
    rec.regions.front().total_s_per_execution = {0.6};
    judge_record(rec);
    EXPECT_FALSE(has_finding(*rec.diagnosis, "lay outside them"));
}

// Four threads that shared its work one at a time (a lock held while working) on a 4-CPU
// host: the lever is letting them run at once; more threads would only queue.
TEST(FirstMoves, ThreadsThatTookTurnsAreToldToRunAtOnceNotToAddThreads) {
    auto turns = timed_region("turns", fp32(0.95 * 35.9e9 * 0.01, 0), 0.01);
    turns.busy_cores = 1.0;
    turns.busy_cores_error = 0.001;
    turns.other_busy_cores = 0.05;
    turns.working_threads = 4.0;
    auto alone = turns;  // one thread did the work: more threads are the lever
    alone.path = alone.name = "alone";
    alone.working_threads = 1.0;
    auto together = turns;  // four threads at once
    together.path = together.name = "together";
    together.busy_cores = 3.9;
    auto crowded = turns;  // other processes held the CPUs it could have used
    crowded.path = crowded.name = "crowded";
    crowded.other_busy_cores = 2.8;
    auto waiting = turns;  // mostly waited (I/O, a device): not turns on a lock
    waiting.path = waiting.name = "waiting";
    waiting.busy_cores = 0.3;
    RunRecord rec = record_of({turns, alone, together, crowded, waiting}, 1.0);
    judge_record(rec);
    const Diagnosis& t = verdict(rec, "turns");
    EXPECT_EQ(t.first_move.rfind("let its threads run at once (4.00 threads shared", 0), 0u)
        << t.first_move;
    EXPECT_TRUE(has_finding(t, "its threads took turns: 4.00 threads"));
    EXPECT_TRUE(has_finding(t, "keep 4.00 cores busy"));
    EXPECT_FALSE(has_finding(t, "idle while it was open")) << "not told to add threads";
    EXPECT_EQ(verdict(rec, "alone").first_move.rfind("use the idle cores", 0), 0u)
        << verdict(rec, "alone").first_move;
    for (const char* path : {"alone", "together", "crowded", "waiting"})
        EXPECT_FALSE(has_finding(verdict(rec, path), "took turns")) << path;
}

// A forward pass whose process got 0.07 cores with 1.6 threads queued while two data-loader
// workers it started kept 1.8 cores busy: judged at its own cores (the workers are not its
// work), its first move is giving it the CPUs, and the finding names who held them; a
// region that ran as much as it queued, or queued little, is not told so.
TEST(FirstMoves, ARegionQueuedForACpuIsToldToGetTheCpusFirst) {
    auto step = timed_region("step", fp32(0.01 * 35.9e9 * 0.01, 0), 0.01);
    step.busy_cores = 0.07;
    step.busy_cores_error = 0.001;
    step.queued_threads = 1.62;
    step.descendant_busy_cores = 1.81;
    step.other_busy_cores = 0.05;
    auto ran = step;  // ran about as much as it queued
    ran.path = ran.name = "ran";
    ran.busy_cores = 1.7;
    auto quiet = step;  // queued little: waited for something else
    quiet.path = quiet.name = "quiet";
    quiet.queued_threads = 0.2;
    RunRecord rec = record_of({step, ran, quiet}, 1.0);
    judge_record(rec);
    const Diagnosis& d = verdict(rec, "step");
    EXPECT_EQ(d.first_move.rfind("give it the CPUs (its threads queued 1.62 on average", 0), 0u)
        << d.first_move;
    EXPECT_TRUE(has_finding(d, "the processes it started kept 1.81 cores busy"));
    EXPECT_FALSE(has_finding(d, "other processes (")) << "0.05 cores are no holder";
    EXPECT_TRUE(has_finding(d, "judged against the 1-thread roof")) << "not at the workers' cores";
    for (const char* path : {"ran", "quiet"})
        EXPECT_FALSE(has_finding(verdict(rec, path), "it waited for a CPU")) << path;
    // Without declared work the same is said (no roof needed), not "it mostly waited, for
    // I/O, a lock, ..."; threads that took turns likewise.
    auto unknown = step;
    unknown.path = unknown.name = "unknown";
    unknown.measurement.work.reset();
    auto turns = timed_region("turns", std::nullopt, 0.01);
    turns.busy_cores = 1.0;
    turns.other_busy_cores = 0.05;
    turns.working_threads = 4.0;
    RunRecord rec2 = record_of({unknown, turns}, 1.0);
    judge_record(rec2);
    const Diagnosis& u = verdict(rec2, "unknown");
    EXPECT_EQ(u.first_move.rfind("give it the CPUs", 0), 0u) << u.first_move;
    EXPECT_FALSE(has_finding(u, "it mostly waited"));
    EXPECT_EQ(verdict(rec2, "turns").first_move.rfind("let its threads run at once", 0), 0u)
        << verdict(rec2, "turns").first_move;
}

// A model call of 48 ops in 147 us (a batch-1 MLP of 64-wide layers under PyTorch): 3 us
// per op is the framework's per-op cost, not a miss at a time, and its move says fuse or
// batch; a call of the same ops at 2 ms, or one near its roof, is not told so.
TEST(FirstMoves, TinyOpsAreToldToFuseOrBatch) {
    const auto ops = [](RecordedRegion r, double per_call) {
        r.measurement.counters.push_back(
            {"op_calls_per_call", per_call, "count", Source::timing, std::nullopt, false});
        return r;
    };
    auto tiny = ops(busy_region("tiny", fp32(108e3, 220e3), 147e-6, 1.0), 48);
    auto big = ops(busy_region("big", fp32(108e3, 220e3), 2e-3, 1.0), 48);
    auto fast = ops(busy_region("fast", fp32(0.9 * 35.9e9 * 147e-6, 1e3), 147e-6, 1.0), 48);
    RunRecord rec = record_of({tiny, big, fast}, 1.0);
    judge_record(rec);
    const Diagnosis& d = verdict(rec, "tiny");
    EXPECT_EQ(d.first_move.rfind("fewer, larger ops (48 ops a call at 3.06 us each", 0), 0u)
        << d.first_move;
    EXPECT_TRUE(has_finding(d, "tiny ops: 48 ops a call"));
    EXPECT_FALSE(has_finding(verdict(rec, "big"), "tiny ops"));
    EXPECT_EQ(verdict(rec, "fast").bound, Bound::compute);
    EXPECT_FALSE(has_finding(verdict(rec, "fast"), "tiny ops"));
}

// A run whose work one thread did, busy all along beside an idle CPU, is told so (a std::map
// of 4 M keys read "bound unknown" with no word of the idle CPU); two threads, a thread that
// mostly slept, or one CPU: not.
TEST(OneThreadBusy, IdleCpusBesideOneBusyThreadAreSaid) {
    ProcessAccounting p;
    p.wall_s = 12.5;
    p.user_s = 12.3;
    p.system_s = 0.2;
    p.working_threads = 1.0;
    const auto f = one_thread_busy(p, 2.0);
    ASSERT_TRUE(f);
    EXPECT_NE(f->detail.find("1.00 CPUs sat idle beside it"), std::string::npos) << f->detail;
    EXPECT_NE(f->detail.find("a lever of up to 2.00x"), std::string::npos) << f->detail;
    EXPECT_FALSE(one_thread_busy(p, 1.0));
    EXPECT_FALSE(one_thread_busy(p, std::nullopt));
    auto two = p;
    two.working_threads = 2.0;
    EXPECT_FALSE(one_thread_busy(two, 2.0));
    auto asleep = p;
    asleep.user_s = 3.0;
    EXPECT_FALSE(one_thread_busy(asleep, 2.0));
}

// A CPU another process kept busy is not idle: one busy thread on two CPUs while other work
// held the second reads nothing idle (a TransformerEncoder run read "1.05 CPUs sat idle ...
// a lever of up to 2.11x" with that CPU busy with other work).
TEST(OneThreadBusy, ACpuOtherWorkKeptBusyIsNotIdle) {
    ProcessAccounting p;
    p.wall_s = 10;
    p.user_s = 9.8;
    p.system_s = 0.1;
    p.working_threads = 1.0;
    p.own_runnable_thread_s = 9.9;
    p.host_runnable_thread_s = 9.9 + 9.5;  // other work runnable on the other CPU all along
    EXPECT_FALSE(one_thread_busy(p, 2.0));
    p.host_runnable_thread_s = 9.9 + 2.0;  // other work held 0.2 of it: 0.81 idle, said so
    const auto f = one_thread_busy(p, 2.0);
    ASSERT_TRUE(f);
    EXPECT_NE(f->detail.find("other work held 0.20"), std::string::npos) << f->detail;
    EXPECT_NE(f->detail.find("0.81 CPUs sat idle"), std::string::npos) << f->detail;
}

// A team of its own threads queued on fewer CPUs than other work left free: the move names
// the setting that sizes the team and its value (the free CPUs), and what the queue cost.
TEST(FirstMoves, AnOversubscribedPoolIsToldItsSettingAndValue) {
    RecordedRegion reg;
    reg.path = reg.name = "forward";
    reg.busy_cores = 0.9;
    reg.queued_threads = 1.1;
    reg.working_threads = 2.0;
    reg.other_busy_cores = 1.0;  // other work held one of the two CPUs
    const Thresholds t;
    const auto q = queued_for_cpu(t, reg, 2.0);
    ASSERT_TRUE(q);
    EXPECT_EQ(q->move.rfind("size its thread pool to the CPUs other work left free: OMP_NUM_THREADS=1", 0), 0u)
        << q->move;
    EXPECT_NE(q->move.find("up to 2.2x slower"), std::string::npos) << q->move;
    reg.labels[torch_role_label] = "model";
    EXPECT_NE(queued_for_cpu(t, reg, 2.0)->move.find("torch.set_num_threads(1)"), std::string::npos);
    // A team no larger than the free CPUs, or CPUs unknown: no setting to name.
    reg.other_busy_cores = 0.0;
    EXPECT_EQ(queued_for_cpu(t, reg, 2.0)->move.find("thread pool"), std::string::npos);
    reg.other_busy_cores = 1.0;
    EXPECT_EQ(queued_for_cpu(t, reg)->move.rfind("give it the CPUs", 0), 0u);
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
    // A longer region not judged (its work unknown) is named first: the judged one may be a
    // sliver of the run.
    auto model = timed_region("model", std::nullopt, 0.16);
    model.labels[work_unknown_label] = "its ops' work is unknown";
    rec = record_of({shares, small, model}, 1.0);
    judge_record(rec);
    std::ostringstream both;
    output::render_run_summary(rec, both);
    EXPECT_NE(both.str().find("its longest region, model (80% of wall time), is not judged: its "
                              "ops' work is unknown; its longest judged region, share (50%"),
              std::string::npos)
        << both.str();
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

}  // namespace
}  // namespace ceiling::judge
