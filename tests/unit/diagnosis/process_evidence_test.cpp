// What a run's process accounting means: idle cores read as waiting only when voluntary
// switches say so, preemption and steal as contention (marked on the verdicts), and page
// faults as first touch unless they clearly exceed the peak footprint's pages.
#include "diagnosis/process_evidence.hpp"

#include <algorithm>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "diagnosis/json_support.hpp"
#include "diagnosis/regions.hpp"

namespace ceiling {
namespace {

const Thresholds t;

// A copy: the evidence is often a temporary.
SystemSignal signal(const std::vector<SystemSignal>& s, const std::string& name) {
    const auto it =
        std::find_if(s.begin(), s.end(), [&](const SystemSignal& x) { return x.name == name; });
    EXPECT_NE(it, s.end()) << name;
    return it == s.end() ? SystemSignal{} : *it;
}

bool says(const std::string& text, const std::string& words) {
    return text.find(words) != std::string::npos;
}

// The reported case: 10 s of a 2-thread compute program beside a build on a 2-core VM.
ProcessAccounting preempted_compute() {
    ProcessAccounting p;
    p.wall_s = 10;
    p.cores_used = 2;
    p.user_s = 9.4;
    p.system_s = 0.2;                       // 0.48 of 2 cores
    p.voluntary_context_switches = 6;       // 0.6/s
    p.involuntary_context_switches = 3340;  // 334/s: 348 per second of CPU time
    p.host_cpu_s = 20;
    p.host_steal_s = 0.01;
    p.host_runnable_thread_s = 42;  // 2.1 runnable threads per CPU
    return p;
}

// A program that sleeps: 20 naps a second, hardly any CPU.
ProcessAccounting sleeper() {
    ProcessAccounting p;
    p.wall_s = 10;
    p.cores_used = 1;
    p.user_s = 0.05;
    p.system_s = 0.05;
    p.voluntary_context_switches = 200;
    p.involuntary_context_switches = 12;  // 1.2/s
    return p;
}

TEST(IdleCores, PreemptedThreadsQueuedTheyDidNotWait) {
    const auto s = system_evidence(preempted_compute(), t);
    const auto& cpu = signal(s, "cpu_utilisation");
    EXPECT_TRUE(cpu.fired);
    EXPECT_NEAR(*cpu.value, 0.48, 1e-12);
    EXPECT_EQ(cpu.qualifier, "voluntary_switch_share");
    EXPECT_NEAR(*cpu.qualifier_value, 6.0 / 3346, 1e-12);
    EXPECT_FALSE(says(cpu.meaning, "waits")) << cpu.meaning;
    EXPECT_TRUE(says(cpu.meaning, "preempted")) << cpu.meaning;
}

TEST(IdleCores, BlockedThreadsWait) {
    const auto& cpu = signal(system_evidence(sleeper(), t), "cpu_utilisation");
    EXPECT_TRUE(cpu.fired);
    EXPECT_TRUE(says(cpu.meaning, "the process waits")) << cpu.meaning;
}

TEST(IdleCores, WithoutBothSwitchCountsNeitherIsClaimed) {
    auto p = sleeper();
    p.involuntary_context_switches.reset();
    const auto& cpu = signal(system_evidence(p, t), "cpu_utilisation");
    EXPECT_TRUE(cpu.fired);
    EXPECT_FALSE(cpu.qualifier_value);
    EXPECT_TRUE(says(cpu.meaning, "waiting or queued")) << cpu.meaning;
}

// Four Python threads under the GIL on 2 CPUs, as measured here: 3.6 threads shared the
// work, 0.99 cores busy, most switches voluntary (waits for the GIL).
ProcessAccounting gil_threads() {
    ProcessAccounting p;
    p.wall_s = 0.57;
    p.cores_used = 2;
    p.user_s = 0.55;
    p.system_s = 0.01;
    p.working_threads = 3.6;
    p.voluntary_context_switches = 580;
    p.involuntary_context_switches = 90;
    return p;
}

TEST(ThreadConcurrency, ThreadsSharingTheWorkOneAtATimeTookTurns) {
    const auto& s = signal(system_evidence(gil_threads(), t), "thread_concurrency");
    EXPECT_TRUE(s.fired);
    EXPECT_NEAR(*s.value, 0.56 / 0.57 / 2, 1e-12) << "busy cores over min(threads, CPUs)";
    EXPECT_TRUE(says(s.meaning, "took turns")) << s.meaning;
    EXPECT_TRUE(says(s.meaning, "GIL")) << s.meaning;
}

TEST(ThreadConcurrency, NotAskedOfOneThreadOrThreadsRunningAtOnce) {
    auto one = gil_threads();
    one.working_threads = 1.2;  // one thread did the work, its helpers hardly any
    EXPECT_FALSE(signal(system_evidence(one, t), "thread_concurrency").value);
    auto together = gil_threads();
    together.user_s = 1.1;  // both CPUs busy: the four threads ran two at a time
    EXPECT_FALSE(signal(system_evidence(together, t), "thread_concurrency").fired);
    auto unknown = gil_threads();
    unknown.working_threads.reset();
    EXPECT_FALSE(signal(system_evidence(unknown, t), "thread_concurrency").value);
}

TEST(ThreadConcurrency, PreemptedThreadsDidNotTakeTurns) {
    // Held off the CPUs by other work: most switches involuntary, that is contention's.
    auto p = gil_threads();
    p.voluntary_context_switches = 20;
    p.involuntary_context_switches = 900;
    const auto& s = signal(system_evidence(p, t), "thread_concurrency");
    EXPECT_TRUE(s.value);
    EXPECT_FALSE(s.fired) << s.meaning;
}

// Where the rule fires it is a row of the decision table too: the run is latency bound,
// its threads took turns, even with no roof to compare (a Python program under the GIL read
// "bound unknown" with the turns only a finding); threads queued behind other work are not.
TEST(ThreadConcurrency, TurnsTakenAreTheRunsBound) {
    RunInputs in;
    in.process = gil_threads();
    const Diagnosis d = diagnose_run(in, t);
    ASSERT_EQ(d.bound, Bound::latency);
    EXPECT_EQ(d.diagnosis, "latency bound (threads took turns)");
    EXPECT_TRUE(says(d.first_move, "let the threads run at once")) << d.first_move;
    EXPECT_EQ(d.levers.front().lever, Lever::system);
    in.process.voluntary_context_switches = 20;
    in.process.involuntary_context_switches = 900;
    EXPECT_NE(diagnose_run(in, t).diagnosis, "latency bound (threads took turns)");
    in.process = gil_threads();
    in.process.user_s = 1.1;  // two at a time on two CPUs
    EXPECT_FALSE(diagnose_run(in, t).bound);
}

TEST(Contention, PreemptionIsContentionWithItsEvidence) {
    const auto p = preempted_compute();
    const auto s = system_evidence(p, t);
    EXPECT_TRUE(signal(s, "involuntary_switches_per_cpu_s").fired);
    EXPECT_NEAR(*signal(s, "involuntary_switches_per_cpu_s").value, 3340 / 9.6, 1e-9);
    EXPECT_FALSE(signal(s, "steal_share").fired);
    EXPECT_NEAR(*signal(s, "run_queue_per_cpu").value, 2.1, 1e-12);
    EXPECT_TRUE(signal(s, "run_queue_per_cpu").fired);
    const auto f = contention_finding(p, s, t);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->kind, FindingKind::contention);
    for (const char* words :
         {"preempted 348 times per second of CPU time", "blocked 0.6/s", "steal 0.05%",
          "2.1 runnable threads per CPU", "taken under contention"})
        EXPECT_TRUE(says(f->detail, words)) << words << " in: " << f->detail;
}

TEST(Contention, StealAloneIsContention) {
    ProcessAccounting p;
    p.wall_s = 10;
    p.host_cpu_s = 20;
    p.host_steal_s = 2;  // 10 % of the host's CPU time
    const auto s = system_evidence(p, t);
    EXPECT_TRUE(signal(s, "steal_share").fired);
    const auto f = contention_finding(p, s, t);
    ASSERT_TRUE(f);
    EXPECT_TRUE(says(f->detail, "steal 10%")) << f->detail;
    EXPECT_FALSE(says(f->detail, "preempted")) << "unmeasured evidence is left out: " << f->detail;
}

TEST(Contention, ASleeperOrABusyHostAloneIsNot) {
    auto p = sleeper();
    p.host_cpu_s = 20;
    p.host_steal_s = 0;
    p.host_runnable_thread_s = 60;  // 3 runnable per CPU: the host is busy, this program naps
    const auto s = system_evidence(p, t);
    // 120 preemptions per second of its little CPU time, but most switches were naps.
    EXPECT_NEAR(*signal(s, "involuntary_switches_per_cpu_s").value, 120, 1e-9);
    EXPECT_FALSE(signal(s, "involuntary_switches_per_cpu_s").fired);
    EXPECT_TRUE(signal(s, "run_queue_per_cpu").fired);
    EXPECT_FALSE(contention_finding(p, s, t));
    // Nearly all of that run queue its own (others idle): still silent, most switches naps.
    p.own_runnable_thread_s = 59;
    EXPECT_FALSE(signal(system_evidence(p, t), "involuntary_switches_per_cpu_s").fired);
    EXPECT_FALSE(
        contention_finding(ProcessAccounting{}, system_evidence(ProcessAccounting{}, t), t))
        << "nothing measured: no contention claimed";
}

TEST(Contention, AComputeProgramAloneIsNot) {
    auto p = preempted_compute();
    p.involuntary_context_switches = 48;  // 5 per second of CPU time: kernel housekeeping
    p.host_runnable_thread_s = 20;        // 1 runnable per CPU: its own two threads
    const auto s = system_evidence(p, t);
    EXPECT_FALSE(signal(s, "involuntary_switches_per_cpu_s").fired);
    EXPECT_FALSE(contention_finding(p, s, t));
}

// Measured here (2-CPU VM): 8 OpenMP threads at the FMA roof, nothing else running: 3.92
// runnable threads per CPU and 236 preemptions per CPU-second, all of them its own.
TEST(Contention, ItsOwnThreadsOversubscribingTheCpusIsNot) {
    auto p = preempted_compute();
    p.own_runnable_thread_s = 41;  // of the host's 42: other work 0.05 per CPU
    const auto s = system_evidence(p, t);
    const auto& preempted = signal(s, "involuntary_switches_per_cpu_s");
    EXPECT_TRUE(preempted.fired);
    EXPECT_TRUE(says(preempted.meaning, "its own threads")) << preempted.meaning;
    const auto& queue = signal(s, "run_queue_per_cpu");
    EXPECT_TRUE(queue.fired);
    EXPECT_EQ(queue.qualifier, "others_run_queue_per_cpu");
    EXPECT_NEAR(*queue.qualifier_value, 0.05, 1e-12);
    for (const char* words : {"nearly all its own", "OMP_NUM_THREADS"})
        EXPECT_TRUE(says(queue.meaning, words)) << words << " in: " << queue.meaning;
    EXPECT_FALSE(contention_finding(p, s, t)) << "the program's own doing, not contention";
    // Half the queue other work's: contention again, the program's share in the evidence.
    p.own_runnable_thread_s = 20;
    const auto shared = system_evidence(p, t);
    EXPECT_TRUE(says(signal(shared, "run_queue_per_cpu").meaning, "other work's among them"));
    const auto f = contention_finding(p, shared, t);
    ASSERT_TRUE(f);
    EXPECT_TRUE(says(f->detail, "2.1 runnable threads per CPU on the host, 1 of them its own"))
        << f->detail;
}

// Measured here (2-CPU VM, a GEMV on both CPUs): a 10 ms sampler took the program from 18
// to 58 preemptions per second of CPU time; ceiling's own wakeups are not other work.
TEST(Contention, CeilingsOwnWakeupsAreNotOtherWork) {
    auto p = preempted_compute();
    p.involuntary_context_switches = 560;  // 58 per second of CPU time
    p.host_runnable_thread_s = 20;
    auto s = system_evidence(p, t);
    EXPECT_TRUE(signal(s, "involuntary_switches_per_cpu_s").fired) << "not discounted";
    p.observer_wakeups = 1000;  // a 10 ms sampler over 10 s: up to 1000 of them are ceiling's
    s = system_evidence(p, t);
    EXPECT_EQ(*signal(s, "involuntary_switches_per_cpu_s").value, 0) << "never below zero";
    EXPECT_FALSE(signal(s, "involuntary_switches_per_cpu_s").fired);
    EXPECT_FALSE(contention_finding(p, s, t));
    // Preempted well beyond ceiling's wakeups: contention, with both numbers.
    p.involuntary_context_switches = 3340;
    s = system_evidence(p, t);
    EXPECT_NEAR(*signal(s, "involuntary_switches_per_cpu_s").value, 2340 / 9.6, 1e-9);
    const auto f = contention_finding(p, s, t);
    ASSERT_TRUE(f);
    for (const char* words :
         {"preempted 244 times per second of CPU time", "besides about 104 by ceiling's own"})
        EXPECT_TRUE(says(f->detail, words)) << words << " in: " << f->detail;
    // The qualifier reads the same discounted count: 6 voluntary against 2340 others'.
    EXPECT_NEAR(*signal(s, "involuntary_switches_per_cpu_s").qualifier_value, 6.0 / 2346, 1e-12);
}

// A wakeup of ceiling's preempts the program only where one of its threads runs: with half
// of the host's runnable threads its own, about half of them did. Seen on a CI machine: one
// CPU shared with two spinners, 165 preemptions against 156 wakeups, which discounted in
// full left 9 and hid the contention.
TEST(Contention, OnlyTheProgramsShareOfCeilingsWakeupsIsDiscounted) {
    auto p = preempted_compute();  // 2.1 runnable threads per CPU on the host
    p.own_runnable_thread_s = 21;  // half of them its own
    p.observer_wakeups = 1000;
    p.involuntary_context_switches = 1100;
    const auto s = system_evidence(p, t);
    EXPECT_NEAR(*signal(s, "involuntary_switches_per_cpu_s").value, (1100 - 500) / 9.6, 1e-9);
    EXPECT_TRUE(signal(s, "involuntary_switches_per_cpu_s").fired);
    const auto f = contention_finding(p, s, t);
    ASSERT_TRUE(f);
    EXPECT_TRUE(says(f->detail, "besides about 52.1 by ceiling's own")) << f->detail;
    // The host's runnable threads unknown: every wakeup is discounted.
    p.host_runnable_thread_s.reset();
    EXPECT_NEAR(*signal(system_evidence(p, t), "involuntary_switches_per_cpu_s").value, 100 / 9.6,
                1e-9);
}

TEST(Contention, TheRunsDiagnosisCarriesIt) {
    RunInputs in;
    in.process = preempted_compute();
    const Diagnosis d = diagnose_run(in, t);
    ASSERT_NE(contention_of(d), nullptr);
    RunInputs asleep;
    asleep.process = sleeper();
    EXPECT_EQ(contention_of(diagnose_run(asleep, t)), nullptr);
    // It survives a record: the kind by name, and the qualifier of each signal.
    const Diagnosis back = nlohmann::json(d).get<Diagnosis>();
    ASSERT_NE(contention_of(back), nullptr);
    EXPECT_EQ(signal(back.system, "cpu_utilisation").qualifier, "voluntary_switch_share");
    EXPECT_EQ(taken_under_contention().kind, FindingKind::contention);
}

// 1 s of wall time and the faults of `faults`, with `pages` resident at the peak.
ProcessAccounting faulting(double faults, std::optional<double> pages) {
    ProcessAccounting p;
    p.wall_s = 1;
    p.minor_page_faults = faults;
    p.major_page_faults = 0;
    p.peak_rss_pages = pages;
    return p;
}

TEST(PageFaults, OneFirstTouchOfOnePointFiveGiBIsNotChurn) {
    // 1.5 GiB of 4 KiB pages touched once: as many faults as resident pages, plus libraries.
    const auto& f =
        signal(system_evidence(faulting(393216 + 900, 393216 + 700), t), "page_faults_per_s");
    EXPECT_TRUE(f.fired);
    EXPECT_NEAR(*f.qualifier_value, 1.0, 0.01);
    EXPECT_TRUE(says(f.meaning, "first touch")) << f.meaning;
    EXPECT_FALSE(says(f.meaning, "over and over")) << f.meaning;
}

// Seen on short programs here: one library read from disk in a 0.4 s run is 2.5/s, above
// the rate's threshold, and said "memory pressure".
TEST(PageFaults, AFewMajorFaultsAreNotMemoryPressure) {
    ProcessAccounting p;
    p.wall_s = 0.4;
    p.minor_page_faults = 3000;
    p.major_page_faults = 1;
    auto f = signal(system_evidence(p, t), "major_page_faults_per_s");
    EXPECT_NEAR(*f.value, 2.5, 1e-12);
    EXPECT_FALSE(f.fired);
    p.wall_s = 4;
    p.major_page_faults = 10;  // 2.5/s again, now ten of them
    f = signal(system_evidence(p, t), "major_page_faults_per_s");
    EXPECT_TRUE(f.fired);
    EXPECT_EQ(*f.qualifier_value, 10);
    EXPECT_TRUE(says(f.meaning, "read from disk")) << f.meaning;
}

TEST(PageFaults, HugePagesFaultLessAndStayFirstTouch) {
    // Transparent huge pages: one fault per 2 MiB, 768 faults for 393216 resident pages.
    const auto& f = signal(system_evidence(faulting(20000, 393216), t), "page_faults_per_s");
    EXPECT_TRUE(says(f.meaning, "first touch")) << f.meaning;
}

TEST(PageFaults, FaultsWellBeyondThePeakAreChurn) {
    // 64 MiB mapped, touched and unmapped 40 times.
    const auto& f =
        signal(system_evidence(faulting(40 * 16384, 16384 + 600), t), "page_faults_per_s");
    EXPECT_TRUE(f.fired);
    EXPECT_GT(*f.qualifier_value, 30);
    EXPECT_TRUE(says(f.meaning, "over and over")) << f.meaning;
    // Just under the ratio is not yet churn.
    const auto& edge =
        signal(system_evidence(faulting(1.9 * 20000, 20000), t), "page_faults_per_s");
    EXPECT_TRUE(says(edge.meaning, "first touch")) << edge.meaning;
}

TEST(PageFaults, WithoutATrustedPeakNeitherIsClaimed) {
    const auto& f = signal(system_evidence(faulting(50000, std::nullopt), t), "page_faults_per_s");
    EXPECT_TRUE(f.fired);
    EXPECT_TRUE(says(f.meaning, "first touch or churn")) << f.meaning;
    EXPECT_FALSE(signal(system_evidence(faulting(5000, 10), t), "page_faults_per_s").fired)
        << "below the rate threshold nothing fires, whatever the ratio";
}

TEST(ProcessAccountingJson, RoundTripsTheHostAndFootprintFields) {
    const auto p = preempted_compute();
    auto with_pages = p;
    with_pages.peak_rss_pages = 1234;
    with_pages.observer_wakeups = 99;
    with_pages.own_runnable_thread_s = 7;
    with_pages.working_threads = 3.5;
    with_pages.cpu_quota_cpus = 1.5;
    with_pages.cpu_quota_throttled_s = 0.25;
    with_pages.io_calls = 3e6;
    with_pages.io_call_bytes = 5e6;
    const ProcessAccounting back = nlohmann::json(with_pages).get<ProcessAccounting>();
    EXPECT_EQ(back.peak_rss_pages, 1234);
    EXPECT_EQ(back.host_cpu_s, 20);
    EXPECT_EQ(back.host_steal_s, 0.01);
    EXPECT_EQ(back.host_runnable_thread_s, 42);
    EXPECT_EQ(back.observer_wakeups, 99);
    EXPECT_EQ(back.own_runnable_thread_s, 7);
    EXPECT_EQ(back.working_threads, 3.5);
    EXPECT_EQ(back.cpu_quota_cpus, 1.5);
    EXPECT_EQ(back.cpu_quota_throttled_s, 0.25);
    EXPECT_FALSE(back.cpu_quota_periods);
    EXPECT_EQ(back.io_calls, 3e6);
    EXPECT_EQ(back.io_call_bytes, 5e6);
    // An older record without them reads them as unknown.
    auto old = nlohmann::json(p);
    old.erase("host_cpu_s");
    EXPECT_FALSE(old.get<ProcessAccounting>().host_cpu_s);
}

}  // namespace
}  // namespace ceiling

namespace ceiling {
namespace {

// Storage traffic against the storage roofs `machine` measured: reads against the read roof,
// writes against the write roof, the nearer of the two; unknown without a roof.
TEST(StorageRoofShare, TheNearerDirectionAgainstItsOwnRoof) {
    ProcessAccounting p;
    p.wall_s = 2;
    p.storage_read_bytes = 1.4e9;   // 0.7 GB/s against 1 GB/s: 70 %
    p.storage_write_bytes = 0.2e9;  // 0.1 GB/s against 2 GB/s: 5 %
    EXPECT_FALSE(signal(system_evidence(p, t), "storage_roof_share").value) << "no roof: unknown";
    p.storage_read_roof_bytes_per_s = 1e9;
    p.storage_write_roof_bytes_per_s = 2e9;
    const auto s = signal(system_evidence(p, t), "storage_roof_share");
    ASSERT_TRUE(s.value);
    EXPECT_DOUBLE_EQ(*s.value, 0.7);
    EXPECT_TRUE(s.fired);
    EXPECT_TRUE(says(s.meaning, "near the sequential storage roof"));
    // Half the reads: 35 %, below near_roof (60 %).
    p.storage_read_bytes = 0.7e9;
    EXPECT_FALSE(signal(system_evidence(p, t), "storage_roof_share").fired);
    // Writes at 3x their roof went into the page cache (counted when dirtied): not a rate
    // storage held the program to, so only the reads count.
    p.storage_write_bytes = 12e9;
    const auto cached = signal(system_evidence(p, t), "storage_roof_share");
    ASSERT_TRUE(cached.value);
    EXPECT_DOUBLE_EQ(*cached.value, 0.35);
    EXPECT_FALSE(cached.fired);
    // Reads beyond their roof are what storage served (with deeper queues than the roof's):
    // still storage-bound.
    p.storage_read_bytes = 2.4e9;  // 1.2 GB/s against 1 GB/s
    const auto deep = signal(system_evidence(p, t), "storage_roof_share");
    ASSERT_TRUE(deep.value);
    EXPECT_DOUBLE_EQ(*deep.value, 1.2);
    EXPECT_TRUE(deep.fired);
}

// A program that only streams files has no model regions, and its run is still decided:
// storage at its roof is the decision table's I/O row; below it the run stays undecided.
TEST(StorageRoofShare, DecidesARunWithoutModelRegions) {
    RunInputs in;
    in.process.wall_s = 2;
    in.process.storage_read_bytes = 1.6e9;  // 0.8 GB/s against 1 GB/s
    in.process.storage_read_roof_bytes_per_s = 1e9;
    const Diagnosis d = diagnose_run(in, t);
    ASSERT_EQ(d.bound, Bound::not_the_model);
    EXPECT_EQ(d.diagnosis, "not the model (I/O bound)");
    EXPECT_TRUE(says(d.first_move, "read or write less"));
    EXPECT_EQ(d.levers.front().lever, Lever::system);
    in.process.storage_read_bytes = 0.4e9;  // 20 %
    EXPECT_FALSE(diagnose_run(in, t).bound);
    // A model region of 10 % of the time besides storage at 80 % of its roof: both rows of
    // not the model hold; the storage names the cause, and the bound is listed once.
    in.process.storage_read_bytes = 1.6e9;
    RegionTiming forward;
    forward.name = "forward";
    forward.model = true;
    forward.total_s = 0.2;
    forward.count = 1;
    in.regions = {forward};
    const Diagnosis both = diagnose_run(in, t);
    ASSERT_EQ(both.bound, Bound::not_the_model);
    EXPECT_EQ(both.diagnosis, "not the model (I/O bound)");
    EXPECT_TRUE(both.also_held.empty());
}

// Threads blocked on storage a quarter of the wall time or more while the cores idled are the
// I/O row however little moved (a log flushed after every record at 1 % of the write roof);
// beside busy cores (a loader blocked on reads while the compute thread runs) they are not.
TEST(StorageWaits, BlockedOnStorageWhileIdleIsIoBound) {
    RunInputs in;
    in.process.wall_s = 1;
    in.process.cores_used = 1;
    in.process.user_s = 0.01;
    in.process.system_s = 0.37;
    in.process.voluntary_context_switches = 20000;
    in.process.involuntary_context_switches = 1;
    in.process.storage_wait_thread_s = 0.6;
    const Diagnosis d = diagnose_run(in, t);
    ASSERT_EQ(d.bound, Bound::not_the_model);
    EXPECT_EQ(d.diagnosis, "not the model (I/O bound)");
    EXPECT_TRUE(says(d.first_move, "one flush for many writes")) << d.first_move;
    const auto waits = signal(d.system, "storage_wait_threads");
    EXPECT_TRUE(waits.fired);
    ASSERT_TRUE(waits.value);
    EXPECT_DOUBLE_EQ(*waits.value, 0.6);
    // Its system time is its I/O calls (random O_DIRECT reads: half a core in the kernel,
    // blocked the rest): its own code still left the core idle.
    in.process.system_s = 0.55;
    in.process.storage_wait_thread_s = 0.45;
    EXPECT_EQ(diagnose_run(in, t).diagnosis, "not the model (I/O bound)");
    in.process.system_s = 0.37;
    // Below a quarter: not decided by it.
    in.process.storage_wait_thread_s = 0.2;
    EXPECT_FALSE(signal(diagnose_run(in, t).system, "storage_wait_threads").fired);
    // Its core busy (90 %): overlapped, not bound.
    in.process.storage_wait_thread_s = 0.6;
    in.process.user_s = 0.85;
    in.process.system_s = 0.05;
    const Diagnosis busy = diagnose_run(in, t);
    EXPECT_FALSE(signal(busy.system, "storage_wait_threads").fired);
    EXPECT_FALSE(busy.bound);
}

// Threads blocked in sleeps, on sockets or in event loops half the wall time or more while
// the cores idled are the waiting row (a poller asleep 92 % of its wall read "bound unknown"
// before); beside a busy core (a worker computing while a timer thread sleeps) they are not.
TEST(OutsideWaits, AsleepWhileIdleIsWaiting) {
    RunInputs in;
    in.process.wall_s = 1.74;
    in.process.cores_used = 1;
    in.process.user_s = 0.11;
    in.process.system_s = 0.03;
    in.process.voluntary_context_switches = 1500;
    in.process.involuntary_context_switches = 1;
    in.process.outside_wait_thread_s = 1.6;
    const Diagnosis d = diagnose_run(in, t);
    ASSERT_EQ(d.bound, Bound::not_the_model);
    EXPECT_EQ(d.diagnosis, "not the model (waiting)");
    EXPECT_TRUE(says(d.first_move, "its own sleeps and polling intervals")) << d.first_move;
    const auto waits = signal(d.system, "outside_wait_threads");
    EXPECT_TRUE(waits.fired);
    ASSERT_TRUE(waits.value);
    EXPECT_NEAR(*waits.value, 1.6 / 1.74, 1e-12);
    // Under half the wall: not decided by it.
    in.process.outside_wait_thread_s = 0.8;
    EXPECT_FALSE(signal(diagnose_run(in, t).system, "outside_wait_threads").fired);
    // Its waits inside synchronisation with a device (a runtime blocking in poll on the
    // driver's descriptor) are the device's.
    in.process.outside_wait_thread_s = 1.6;
    in.process.device_wait_s = 1.5;
    EXPECT_FALSE(signal(diagnose_run(in, t).system, "outside_wait_threads").fired);
    in.process.device_wait_s.reset();
    // Its core busy: the sleeper is a helper beside the work.
    in.process.outside_wait_thread_s = 1.6;
    in.process.user_s = 1.6;
    const Diagnosis busy = diagnose_run(in, t);
    EXPECT_FALSE(signal(busy.system, "outside_wait_threads").fired);
    EXPECT_NE(busy.diagnosis, "not the model (waiting)");
}

// Most of its CPU time in the kernel while its core was busy is the table's kernel row, the
// calls that put it there named where they are many small reads and writes (3 million
// one-byte writes: 93 % of its CPU time in the kernel, read "bound unknown" before). A
// program that mostly waits is not: what it waits on decides.
TEST(KernelTime, MostCpuTimeInTheKernelIsKernelBound) {
    RunInputs in;
    in.process.wall_s = 1.44;
    in.process.cores_used = 1;
    in.process.user_s = 0.10;
    in.process.system_s = 1.34;
    in.process.io_calls = 3e6;
    in.process.io_call_bytes = 3e6;
    const Diagnosis d = diagnose_run(in, t);
    ASSERT_EQ(d.bound, Bound::not_the_model);
    EXPECT_EQ(d.diagnosis, "not the model (kernel bound)");
    EXPECT_TRUE(says(d.first_move, "fewer, larger system calls")) << d.first_move;
    const auto calls = signal(d.system, "io_calls_per_s");
    EXPECT_TRUE(calls.fired);
    ASSERT_TRUE(calls.qualifier_value);
    EXPECT_DOUBLE_EQ(*calls.qualifier_value, 1.0);
    EXPECT_TRUE(says(calls.meaning, "buffer them"));
    // As many calls of 64 KiB each: not small, not said (the kernel row still holds).
    in.process.io_call_bytes = 3e6 * 65536;
    const Diagnosis big = diagnose_run(in, t);
    EXPECT_FALSE(signal(big.system, "io_calls_per_s").fired);
    EXPECT_EQ(big.diagnosis, "not the model (kernel bound)");
    // Calls unknown: not said, never zero.
    in.process.io_calls.reset();
    EXPECT_FALSE(signal(diagnose_run(in, t).system, "io_calls_per_s").value);
    // Where it started a thread per task (51 200 in 1.9 s), the finding names them; a
    // program's pool (a few hundred) is not judged by rate.
    in.process.host_tasks_started = 2000;
    EXPECT_TRUE(signal(diagnose_run(in, t).system, "tasks_started_per_s").fired);
    in.process.host_tasks_started = 999;
    EXPECT_FALSE(signal(diagnose_run(in, t).system, "tasks_started_per_s").fired);
    in.process.host_tasks_started.reset();
    // Under half of its CPU time in the kernel: a finding (a fifth or more), not the bound.
    in.process.user_s = 0.9;
    in.process.system_s = 0.5;
    const Diagnosis some = diagnose_run(in, t);
    EXPECT_TRUE(signal(some.system, "system_time_share").fired);
    EXPECT_FALSE(some.bound);
    // Mostly waiting (a tenth of its core busy, blocked): not kernel bound.
    const Diagnosis waits = [&] {
        RunInputs w = in;
        w.process.user_s = 0.01;
        w.process.system_s = 0.13;
        w.process.voluntary_context_switches = 5000;
        w.process.involuntary_context_switches = 2;
        return diagnose_run(w, t);
    }();
    EXPECT_TRUE(signal(waits.system, "cpu_utilisation").fired);
    EXPECT_NE(waits.diagnosis, "not the model (kernel bound)");
    // As little CPU but preempted, not blocked (most switches involuntary: it queued behind
    // other work): still kernel bound, its kernel time is what it did with the CPU it got.
    const Diagnosis queued = [&] {
        RunInputs w = in;
        w.process.user_s = 0.02;
        w.process.system_s = 0.60;
        w.process.voluntary_context_switches = 5;
        w.process.involuntary_context_switches = 300;
        return diagnose_run(w, t);
    }();
    EXPECT_TRUE(signal(queued.system, "cpu_utilisation").fired);
    EXPECT_EQ(queued.diagnosis, "not the model (kernel bound)");
}

// Rates of a few calls or faults in a short run are nothing: a buffered program's 734 writes
// of 4 KiB in 8.4 ms (88 K/s) and its start-up's 100 faults (12 K/s) read "many small read
// and write calls" and "frequent page faults" before.
TEST(KernelTime, AShortRunsFewCallsAndFaultsAreNotJudged) {
    RunInputs in;
    in.process.wall_s = 0.0084;
    in.process.cores_used = 1;
    in.process.user_s = 0.006;
    in.process.system_s = 0.002;
    in.process.io_calls = 743;
    in.process.io_call_bytes = 743 * 3950.0;
    in.process.minor_page_faults = 100;
    const Diagnosis d = diagnose_run(in, t);
    const auto calls = signal(d.system, "io_calls_per_s");
    ASSERT_TRUE(calls.value);
    EXPECT_GT(*calls.value, t.io_calls_per_s);
    EXPECT_FALSE(calls.fired);
    const auto faults = signal(d.system, "page_faults_per_s");
    ASSERT_TRUE(faults.value);
    EXPECT_GT(*faults.value, t.page_faults_per_s);
    EXPECT_FALSE(faults.fired);
    // As many at once as the minimum, at one byte each: said.
    in.process.io_calls = t.io_calls_min;
    in.process.io_call_bytes = t.io_calls_min;
    EXPECT_TRUE(signal(diagnose_run(in, t).system, "io_calls_per_s").fired);
    // 4 KiB calls (a stdio buffer) are not small, however many.
    in.process.io_call_bytes = t.io_calls_min * 4096;
    EXPECT_FALSE(signal(diagnose_run(in, t).system, "io_calls_per_s").fired);
    // Half of a 6 ms program's CPU time in the kernel is its start-up (exec, loading its
    // libraries), not a bound: a 4.5 ms loop beside it read "kernel bound".
    in.process.wall_s = 0.0062;
    in.process.user_s = 0.0045;
    in.process.system_s = 0.0045;
    const Diagnosis short_run = diagnose_run(in, t);
    EXPECT_FALSE(signal(short_run.system, "system_time_share").fired);
    EXPECT_NE(short_run.diagnosis, "not the model (kernel bound)");
}

// A container's CPU quota that ran out in a quarter of its periods or more is a row of the
// decision table: the run is quota bound whatever its regions, with the numbers in a finding.
// Below it, or without a quota's periods, no word of it.
TEST(CpuQuota, ThrottledInManyPeriodsIsQuotaBound) {
    RunInputs in;
    in.process.wall_s = 4;
    in.process.user_s = 2.0;
    in.process.system_s = 0.0;
    in.process.cpu_quota_cpus = 0.5;
    in.process.cpu_quota_periods = 40;
    in.process.cpu_quota_throttled_periods = 39;
    in.process.cpu_quota_throttled_s = 5.2;
    const Diagnosis d = diagnose_run(in, t);
    ASSERT_EQ(d.bound, Bound::not_the_model);
    EXPECT_EQ(d.diagnosis, "not the model (CPU quota bound)");
    EXPECT_TRUE(says(d.first_move, "raise the CPU quota")) << d.first_move;
    EXPECT_EQ(d.levers.front().lever, Lever::system);
    const auto quota = signal(d.system, "cpu_quota_throttled_share");
    ASSERT_TRUE(quota.value);
    EXPECT_NEAR(*quota.value, 39.0 / 40, 1e-12);
    EXPECT_TRUE(quota.fired);
    EXPECT_TRUE(std::any_of(d.findings.begin(), d.findings.end(), [](const Finding& f) {
        return says(f.detail,
                    "CPU quota of its control group: 0.5 CPUs' time per period; it ran out in 39 "
                    "of 40 periods, its threads held off the CPUs 5.2 s in all (summed over "
                    "CPUs); it used 0.5 CPUs on average");
    }));
    in.process.cpu_quota_throttled_periods = 4;  // 10 %
    const Diagnosis few = diagnose_run(in, t);
    EXPECT_FALSE(few.bound);
    EXPECT_FALSE(signal(few.system, "cpu_quota_throttled_share").fired);
    in.process.cpu_quota_periods.reset();
    in.process.cpu_quota_throttled_periods.reset();
    const Diagnosis none = diagnose_run(in, t);
    EXPECT_FALSE(signal(none.system, "cpu_quota_throttled_share").value);
    EXPECT_FALSE(std::any_of(none.findings.begin(), none.findings.end(),
                             [](const Finding& f) { return says(f.detail, "CPU quota"); }));
}

// The tighter of the machine's memory and its control group's limit is the capacity.
TEST(CpuQuota, AMemoryLimitBelowTheMachinesIsTheCapacity) {
    RunInputs in;
    in.process.wall_s = 1;
    in.footprint_bytes = 0.95e9;
    in.memory_capacity_bytes = 16e9;
    in.memory_limit_bytes = 1e9;
    const Diagnosis d = diagnose_run(in, t);
    ASSERT_EQ(d.bound, Bound::capacity);
    ASSERT_TRUE(d.capacity);
    EXPECT_EQ(d.capacity->against, "memory limit (control group)");
    in.memory_limit_bytes = 32e9;  // above the machine's: the machine's memory is the wall
    const Diagnosis roomy = diagnose_run(in, t);
    ASSERT_TRUE(roomy.capacity);
    EXPECT_EQ(roomy.capacity->against, "memory");
    EXPECT_FALSE(roomy.bound);
}

}  // namespace
}  // namespace ceiling
