// The per-execution process counters of `ceiling run`: the /proc sampler on a recorded tree
// (I/O totals, each process's peak, the host's run queue), folding samples into peaks, and
// turning wait4's rusage plus the samples into counters that never hold ceiling's memory.
#include <algorithm>

#include <gtest/gtest.h>
#include <unistd.h>

#include "agent/run/launch.hpp"
#include "agent/run/sampler.hpp"

namespace ceiling::measure {
namespace {

const std::filesystem::path fake_proc = CEILING_TEST_DATA "/fakeroot-run/proc";
const double tick_s = 1.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
const double page_bytes = static_cast<double>(::sysconf(_SC_PAGESIZE));
constexpr double MiB = 1024.0 * 1024.0;

const CounterValue* counter(const std::vector<CounterValue>& c, const std::string& name) {
    const auto it =
        std::find_if(c.begin(), c.end(), [&](const CounterValue& x) { return x.name == name; });
    return it == c.end() ? nullptr : &*it;
}

TEST(SampleTree, SumsTheRecordedTreeIncludingItsIo) {
    const auto s = sample_tree(4100, fake_proc);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->processes, 2);
    EXPECT_EQ(s->threads, 4);
    // utime + stime + reaped children's of both processes, in clock ticks.
    EXPECT_NEAR(s->cpu_s, (250 + 30 + 12 + 4 + 10 + 5) * tick_s, 1e-9);
    EXPECT_EQ(s->rss_bytes, (65536 + 407) * page_bytes);
    // The recorded 50 MB write (read as 0 while " 50000000" went to std::from_chars).
    EXPECT_EQ(s->io.write_call_bytes, 50000000);
    EXPECT_EQ(s->io.storage_write_bytes, 50016256);
    EXPECT_EQ(s->io.read_call_bytes, 1048576 + 4032);
    EXPECT_EQ(s->host_runnable, 10) << "11 running, less the sampler reading";
    // The host's busy CPU time: /proc/stat's user nice system irq softirq (neither idle,
    // iowait nor steal), from which the sampler takes the tree's to get other processes'.
    EXPECT_NEAR(*s->host_busy_s, (771950 + 125 + 103187 + 0 + 321) * tick_s, 1e-6);
    // Per thread, not per process: both of the trainer's recorded threads run, sleep sleeps.
    EXPECT_EQ(s->own_runnable, 2);
    ASSERT_EQ(s->peaks.size(), 2u);
    const auto root = std::find_if(s->peaks.begin(), s->peaks.end(),
                                   [](const ProcessPeak& p) { return p.pid == 4100; });
    ASSERT_NE(root, s->peaks.end());
    EXPECT_EQ(root->hwm_bytes, 300000 * 1024.0);
    EXPECT_EQ(root->start_ticks, 476914);
    // Each thread's own CPU time (its task's stat), keyed by thread id and start.
    ASSERT_EQ(s->thread_cpu.size(), 3u);
    for (const auto& t : s->thread_cpu)
        EXPECT_NEAR(t.cpu_s, (t.tid == 4101 ? 10 + 5 : 250 + 30) * tick_s, 1e-9) << t.tid;
    // Below each process: the root has the children it waited for (12 + 4 ticks) and its live
    // child (10 + 5); nothing is below the child.
    ASSERT_EQ(s->descendants.size(), 2u);
    for (const auto& d : s->descendants)
        EXPECT_NEAR(d.cpu_s, d.pid == 4100 ? (12 + 4 + 10 + 5) * tick_s : 0.0, 1e-9) << d.pid;
}

TEST(SampleTree, OneUnreadableIoMakesTheTreesIoUnknownNotSmaller) {
    const auto s = sample_tree(4200, fake_proc);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->processes, 2);
    EXPECT_FALSE(s->io.write_call_bytes);
    EXPECT_FALSE(s->io.storage_read_bytes);
    EXPECT_FALSE(sample_tree(99999, fake_proc)) << "a gone root";
}

TreeSample at(double t_s, double rss, std::vector<ProcessPeak> peaks,
              std::optional<double> runnable, bool probe = false) {
    TreeSample s;
    s.t_ns = static_cast<std::int64_t>(t_s * 1e9);
    s.rss_bytes = rss;
    s.threads = 1;
    s.processes = 1;
    s.peaks = std::move(peaks);
    s.host_runnable = runnable;
    if (runnable) s.own_runnable = 2;
    s.probe = probe;
    return s;
}

TEST(PeakAccumulator, EachProcessCountsOnceAtItsPeakAndProbesAreNotSamples) {
    PeakAccumulator acc;
    acc.add(at(0.000, 1 * MiB, {{10, 5, 1 * MiB, "a"}}, 3, true));
    acc.add(at(0.010, 8 * MiB, {{10, 5, 8 * MiB, "a"}, {11, 6, 2 * MiB, "b"}}, 3));
    acc.add(at(0.020, 4 * MiB, {{10, 5, 8 * MiB, "a"}, {11, 6, 4 * MiB, "b"}}, 1));
    // pid 11 reused by another process (another start time): a process of its own.
    acc.add(at(0.030, 0, {{11, 9, 3 * MiB, "c"}}, std::nullopt));
    const auto p =
        acc.finish(static_cast<std::int64_t>(0.040e9), collectors::HostCpuTicks{1000, 50},
                   collectors::HostCpuTicks{1008, 52}, 100.0);
    EXPECT_EQ(p.samples, 3);
    EXPECT_EQ(p.tree_rss_bytes, 8 * MiB);
    EXPECT_EQ(p.process_hwm_bytes, 8 * MiB);
    EXPECT_EQ(p.process_hwm_sum_bytes, (8 + 4 + 3) * MiB);
    // A step function: 3 runnable for 20 ms, 1 for 10 ms, then unknown (not extended).
    ASSERT_TRUE(p.host_runnable_thread_s);
    EXPECT_NEAR(*p.host_runnable_thread_s, 3 * 0.020 + 1 * 0.010, 1e-12);
    // The program's own: 2 runnable in the first three samples, unknown after.
    ASSERT_TRUE(p.own_runnable_thread_s);
    EXPECT_NEAR(*p.own_runnable_thread_s, 2 * 0.030, 1e-12);
    EXPECT_DOUBLE_EQ(*p.host_cpu_s, 0.08);
    EXPECT_DOUBLE_EQ(*p.host_steal_s, 0.02);
}

TEST(PeakAccumulator, NothingSeenIsUnknownNotZero) {
    PeakAccumulator acc;
    acc.add(at(0.0, 0, {}, std::nullopt));  // an exited, unreaped root: no memory left
    const auto same = collectors::HostCpuTicks{1000, 50};
    const auto p = acc.finish(1'000'000, same, same, 100.0);
    EXPECT_FALSE(p.tree_rss_bytes);
    EXPECT_FALSE(p.process_hwm_bytes);
    EXPECT_FALSE(p.process_hwm_sum_bytes);
    EXPECT_FALSE(p.host_cpu_s) << "no clock tick elapsed: unknown";
    EXPECT_FALSE(p.host_steal_s);
    EXPECT_FALSE(p.host_runnable_thread_s);
    EXPECT_FALSE(p.own_runnable_thread_s);
}

TEST(WorkingThreads, IsHowManyThreadsSharedTheTime) {
    EXPECT_DOUBLE_EQ(*working_threads({1, 1, 1, 1}), 4);
    EXPECT_DOUBLE_EQ(*working_threads({5, 0, 0}), 1) << "idle helpers are no workers";
    EXPECT_DOUBLE_EQ(*working_threads({3, 1}), 1.6);
    EXPECT_FALSE(working_threads({}));
    EXPECT_FALSE(working_threads({0, 0})) << "no CPU time at all: unknown";
}

// Samples every 50 ms of threads (tid, CPU seconds so far), all started at tick 7.
TreeSample threads_at(double t_s, std::vector<std::pair<pid_t, double>> threads) {
    TreeSample s = at(t_s, 1 * MiB, {}, std::nullopt);
    for (const auto& [tid, cpu] : threads) s.thread_cpu.push_back({tid, 7, cpu});
    return s;
}

std::optional<double> working_of(const std::vector<TreeSample>& samples) {
    PeakAccumulator acc;
    for (const auto& s : samples) acc.add(s);
    return acc.finish(samples.back().t_ns, std::nullopt, std::nullopt, 100.0).working_threads;
}

TEST(PeakAccumulator, ThreadsTakingTurnsShareEachWindow) {
    // Four threads, one running at a time, each 1/4 of every 50 ms: four working threads.
    std::vector<TreeSample> turns;
    for (int i = 0; i <= 20; ++i)
        turns.push_back(threads_at(
            0.05 * i, {{1, 0.0125 * i}, {2, 0.0125 * i}, {3, 0.0125 * i}, {4, 0.0125 * i}}));
    EXPECT_NEAR(*working_of(turns), 4, 1e-9);
    // The same second spent by four threads started one after another (250 ms each): at a
    // window's end one thread works; those that ended within it are not counted there.
    std::vector<TreeSample> serial;
    for (int i = 0; i <= 20; ++i) {
        const double t = 0.05 * i;
        std::vector<std::pair<pid_t, double>> live;
        for (int k = 0; k < 4; ++k)
            if (t >= 0.25 * k && t <= 0.25 * (k + 1)) live.push_back({10 + k, t - 0.25 * k});
        serial.push_back(threads_at(t, live));
    }
    EXPECT_NEAR(*working_of(serial), 1, 1e-9);
    // The same with each hand-off seen by one sample (the next thread started, the last one
    // not yet gone): still one at a time, never alive together through an interval.
    std::vector<TreeSample> caught;
    for (int i = 0; i <= 20; ++i) {
        const double t = 0.05 * i;
        std::vector<std::pair<pid_t, double>> live;
        for (int k = 0; k < 4; ++k)
            if (t >= 0.25 * k - 1e-9 && t <= 0.25 * (k + 1) + 1e-9)
                live.push_back({10 + k, std::max(0.0, t - 0.25 * k)});
        caught.push_back(threads_at(t, live));
    }
    EXPECT_NEAR(*working_of(caught), 1, 1e-9);
    // A program shorter than a window still closes its last one at its last sample, and
    // threads started after its first sample count with all their time.
    EXPECT_NEAR(
        *working_of({threads_at(0, {{1, 0}}), threads_at(0.05, {{1, 0.02}, {2, 0.01}, {3, 0.02}}),
                     threads_at(0.1, {{1, 0.05}, {2, 0.04}, {3, 0.05}})}),
        0.14 * 0.14 / (0.05 * 0.05 * 2 + 0.04 * 0.04), 1e-9);
    // A pool's four workers ended before the program's last sample (torn down as it ends):
    // they shared its work, not the main thread left alone at the end (1.0 before).
    std::vector<TreeSample> pool{threads_at(0, {{1, 0}})};
    for (int i = 1; i <= 8; ++i) {
        const double w = 0.025 * (i - 1);
        pool.push_back(threads_at(0.05 * i, {{1, 0.001}, {2, w}, {3, w}, {4, w}, {5, w}}));
    }
    pool.push_back(threads_at(0.45, {{1, 0.002}}));
    EXPECT_NEAR(*working_of(pool), 4, 0.05);
    EXPECT_FALSE(working_of({threads_at(0, {{1, 0}}), threads_at(0.1, {{1, 0}})}))
        << "no CPU time: unknown";
}

TEST(Sampler, TakesItsFirstSampleAtOnce) {
    // Stopped before its thread could sample (a program that ends at once): still seen.
    Sampler sampler(4100, 10.0, {}, fake_proc);
    const auto samples = sampler.stop();
    ASSERT_EQ(samples.size(), 1u);
    EXPECT_FALSE(samples.front().probe);
    const auto& p = sampler.peaks();
    EXPECT_EQ(p.samples, static_cast<int>(samples.size()));
    EXPECT_EQ(p.process_hwm_bytes, 300000 * 1024.0);
    EXPECT_EQ(p.process_hwm_sum_bytes, (300000 + 1628) * 1024.0);
    EXPECT_FALSE(p.host_cpu_s) << "the recorded /proc/stat does not move";
}

TEST(TimeSeries, IoRatesFromCumulativeCountsAndUnknownIsNoPoint) {
    std::vector<TreeSample> s(4);
    for (int i = 0; i < 4; ++i) {
        s[i].t_ns = i * 100'000'000LL;  // 100 ms apart
        s[i].io = {0.0, 25e6 * i, 0.0, 25e6 * i, 0.0, 0.0};
    }
    s[2].io.storage_write_bytes.reset();
    const auto series = series_from_samples(s, 0, 0.05);
    auto find = [&](const std::string& name) {
        return *std::find_if(series.begin(), series.end(),
                             [&](const Series& x) { return x.name == name; });
    };
    const Series w = find("write_call_bytes_per_s");
    ASSERT_EQ(w.values.size(), 3u);
    for (double v : w.values) EXPECT_DOUBLE_EQ(v, 250e6);
    const Series storage = find("storage_write_bytes_per_s");
    EXPECT_EQ(storage.values.size(), 1u) << "both points around the unknown sample are left out";
}

ChildResult child(double ru_maxrss_bytes, std::optional<double> launch_rss) {
    ChildResult r;
    r.usage.ru_maxrss = static_cast<long>(ru_maxrss_bytes / 1024);
    r.usage.ru_minflt = 100;
    r.usage.ru_nivcsw = 3;
    r.launch_rss_bytes = launch_rss;
    return r;
}

TEST(ProcessCounters, WaitsPeakAtCeilingsFootprintIsNeverRecorded) {
    // /bin/true under a 100 MB ceiling: wait4 says 100 MB, the probes saw 1 MB.
    SampledPeaks sampled;
    sampled.samples = 1;
    sampled.process_hwm_bytes = 1 * MiB;
    sampled.process_hwm_sum_bytes = 1 * MiB;
    sampled.tree_rss_bytes = 0.9 * MiB;
    std::vector<std::string> notes;
    const auto c = process_counters(child(100 * MiB, 100 * MiB), &sampled, notes);
    EXPECT_FALSE(counter(c, "max_rss_bytes"));
    ASSERT_TRUE(counter(c, "peak_rss_bytes"));
    EXPECT_EQ(counter(c, "peak_rss_bytes")->value, 1 * MiB);
    EXPECT_TRUE(counter(c, "peak_rss_bytes")->low_confidence) << "one sample: a lower bound";
    EXPECT_FALSE(counter(c, "peak_rss_pages")) << "too few samples to judge faults by";
    EXPECT_EQ(counter(c, "minor_faults")->value, 100);
    EXPECT_NE(std::find_if(
                  notes.begin(), notes.end(),
                  [](const std::string& n) { return n.find("lower bound") != std::string::npos; }),
              notes.end());
    EXPECT_NE(std::find_if(notes.begin(), notes.end(),
                           [](const std::string& n) {
                               return n.find("I/O not measured") != std::string::npos;
                           }),
              notes.end());
}

TEST(ProcessCounters, WaitsPeakAboveTheLaunchFootprintIsTheProgramsAndExact) {
    // The program grew to 1.5 GiB after its last sample: wait4 has it, beyond ceiling's 100 MB.
    SampledPeaks sampled;
    sampled.samples = 2;
    sampled.process_hwm_bytes = 1024 * MiB;
    sampled.process_hwm_sum_bytes = 1024 * MiB;
    std::vector<std::string> notes;
    auto r = child(1536 * MiB, 100 * MiB);
    r.io = collectors::ProcIo{4096.0, 50e6, 0.0, 50016256.0, 3.0, 12.0};
    const auto c = process_counters(r, &sampled, notes);
    ASSERT_TRUE(counter(c, "peak_rss_bytes"));
    EXPECT_EQ(counter(c, "peak_rss_bytes")->value, 1536 * MiB);
    EXPECT_FALSE(counter(c, "peak_rss_bytes")->low_confidence);
    ASSERT_TRUE(counter(c, "peak_rss_pages"));
    EXPECT_DOUBLE_EQ(counter(c, "peak_rss_pages")->value, 1536 * MiB / page_bytes);
    EXPECT_EQ(counter(c, "storage_write_bytes")->value, 50016256);
    EXPECT_EQ(counter(c, "write_call_bytes")->value, 50e6);
    EXPECT_TRUE(notes.empty()) << notes.front();

    // Within the slack above the launch footprint wait4's figure may still be ceiling's.
    const auto near =
        process_counters(child(100 * MiB + launch_rss_slack_bytes / 2, 100 * MiB), nullptr, notes);
    EXPECT_FALSE(counter(near, "peak_rss_bytes")) << "not sampled, and wait4 cannot tell";
}

TEST(ProcessCounters, ManySamplesAreTrustedAndCarryTheHostsLoad) {
    SampledPeaks sampled;
    sampled.samples = trusted_samples;
    sampled.process_hwm_bytes = 64 * MiB;
    sampled.process_hwm_sum_bytes = 66 * MiB;
    sampled.threads = 2;
    sampled.host_cpu_s = 2.0;
    sampled.host_steal_s = 0.2;
    sampled.host_runnable_thread_s = 3.0;
    sampled.own_runnable_thread_s = 1.5;
    std::vector<std::string> notes;
    const auto c = process_counters(child(100 * MiB, 100 * MiB), &sampled, notes);
    EXPECT_FALSE(counter(c, "peak_rss_bytes")->low_confidence);
    EXPECT_DOUBLE_EQ(counter(c, "peak_rss_pages")->value, 66 * MiB / page_bytes);
    EXPECT_EQ(counter(c, "host_steal_s")->value, 0.2);
    EXPECT_EQ(counter(c, "host_cpu_s")->value, 2.0);
    EXPECT_EQ(counter(c, "host_runnable_thread_s")->value, 3.0);
    EXPECT_EQ(counter(c, "own_runnable_thread_s")->value, 1.5);
    EXPECT_EQ(counter(c, "peak_threads")->value, 2);
    EXPECT_FALSE(counter(c, "peak_tree_rss_bytes")) << "not sampled: absent, never 0";
}

// Blocked time between two looks is what a thread neither ran nor queued (its schedstat),
// put on the kind it was seen waiting in: at the later look, else the earlier, else the last
// seen; never seen waiting, left out. Without schedstat, the interval of a blocked look.
TEST(WaitAccumulator, PutsEachThreadsBlockedTimeOnWhatItWaitedIn) {
    using collectors::WaitKind;
    const auto look = [](std::int64_t t_ms, std::vector<ThreadCpu> threads) {
        TreeSample s;
        s.t_ns = (1000 + t_ms) * 1'000'000;  // a monotonic clock is never 0
        for (auto& t : threads) t.read_ns = s.t_ns;
        s.thread_cpu = std::move(threads);
        return s;
    };
    const auto thread = [](pid_t tid, double run_ms, double queued_ms,
                           std::optional<WaitKind> blocked) {
        ThreadCpu t{tid, 1.0, 0.0};
        t.run_ns = run_ms * 1e6;
        t.queued_ns = queued_ms * 1e6;
        t.blocked = blocked;
        return t;
    };
    const auto at = [](const TreeSample& s, WaitKind k) {
        return s.waited_s[static_cast<std::size_t>(k)];
    };
    WaitAccumulator w;
    TreeSample a = look(0, {thread(1, 0, 0, WaitKind::storage_flush), thread(2, 0, 0, {})});
    w.add(a);
    EXPECT_EQ(at(a, WaitKind::storage_flush), 0);
    // Not run since that look: still in the same call, not asked again; run since: asked.
    EXPECT_EQ(w.unchanged(1, 1.0, 0.0), WaitKind::storage_flush);
    EXPECT_FALSE(w.unchanged(1, 1.0, 1e6));
    EXPECT_FALSE(w.unchanged(2, 1.0, 0.0));  // it was running
    // 10 ms: thread 1 ran 4 and queued 1 (5 blocked), seen running now: the earlier look's
    // kind. Thread 2 ran all 10, never blocked.
    TreeSample b = look(10, {thread(1, 4, 1, {}), thread(2, 10, 0, {})});
    w.add(b);
    EXPECT_NEAR(at(b, WaitKind::storage_flush), 0.005, 1e-12);
    // 10 ms more: thread 1 blocked 6, running at both looks: its last kind seen. Thread 2
    // blocked 3, never seen waiting: left out.
    TreeSample c = look(20, {thread(1, 8, 1, {}), thread(2, 17, 0, {})});
    w.add(c);
    EXPECT_NEAR(at(c, WaitKind::storage_flush), 0.011, 1e-12);
    double others = 0;
    for (std::size_t k = 0; k < collectors::wait_kind_count; ++k)
        if (k != static_cast<std::size_t>(WaitKind::storage_flush)) others += c.waited_s[k];
    EXPECT_EQ(others, 0);
    // Without schedstat: the interval of a look that found it blocked, on that look's kind.
    ThreadCpu plain{3, 1.0, 0.0};
    TreeSample d = look(30, {plain});
    w.add(d);
    plain.blocked = WaitKind::sleep;
    TreeSample e = look(50, {plain});
    w.add(e);
    EXPECT_NEAR(at(e, WaitKind::sleep), 0.020, 1e-12);
    EXPECT_NEAR(at(e, WaitKind::storage_flush), 0.011, 1e-12);  // cumulative, kept
    EXPECT_FALSE(w.unchanged(1, 1.0, 8e6));                     // gone since: forgotten
}

// Each process's threads' time queued for a CPU, summed per process as the looks read each
// thread's schedstat, and kept when a thread is gone; a process gone is dropped.
TEST(WaitAccumulator, SumsEachProcesssQueuedTime) {
    const auto look = [](std::int64_t t_ms, std::vector<ThreadCpu> threads) {
        TreeSample s;
        s.t_ns = (1000 + t_ms) * 1'000'000;
        for (auto& t : threads) t.read_ns = s.t_ns;
        s.thread_cpu = std::move(threads);
        return s;
    };
    const auto thread = [](pid_t pid, pid_t tid, double queued_ms) {
        ThreadCpu t{tid, 1.0, 0.0};
        t.run_ns = 0;
        t.queued_ns = queued_ms * 1e6;
        t.pid = pid;
        return t;
    };
    WaitAccumulator w;
    TreeSample a = look(0, {thread(10, 10, 5), thread(10, 11, 1), thread(20, 20, 0)});
    w.add(a);
    EXPECT_TRUE(a.queued_s.empty()) << "nothing before a second look";
    TreeSample b = look(10, {thread(10, 10, 9), thread(10, 11, 4), thread(20, 20, 2)});
    w.add(b);
    const auto of = [](const TreeSample& s, pid_t pid) {
        for (const auto& [p, q] : s.queued_s)
            if (p == pid) return q;
        return -1.0;
    };
    EXPECT_NEAR(of(b, 10), 0.007, 1e-12);  // 4 + 3 ms
    EXPECT_NEAR(of(b, 20), 0.002, 1e-12);
    TreeSample c = look(20, {thread(10, 10, 10)});  // thread 11 gone: its 3 ms stay
    w.add(c);
    EXPECT_NEAR(of(c, 10), 0.008, 1e-12);
    EXPECT_EQ(of(c, 20), -1.0) << "a process gone is no longer carried";
}

}  // namespace
}  // namespace ceiling::measure
