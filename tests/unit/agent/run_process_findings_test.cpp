// A run record's process counters as `ceiling run` judges and prints them: contention marks
// the run's and its regions' verdicts, peak memory is the program's (a lower bound says so),
// whole-run I/O is shown, and an older record's max_rss_bytes (wait4's, with ceiling's own
// memory in it) is never taken for the program's.
#include <sstream>

#include <gtest/gtest.h>

#include "agent/judge/judge_record.hpp"
#include "agent/output/run_summary.hpp"
#include "diagnosis/process_evidence.hpp"
#include "tests/unit/diagnosis/diagnosis_fixtures.hpp"

namespace ceiling {
namespace {

CounterValue count(const std::string& name, double v, bool low_confidence = false) {
    CounterValue c;
    c.name = name;
    c.value = v;
    c.unit = name.find("bytes") != std::string::npos ? "bytes" : "count";
    c.low_confidence = low_confidence;
    return c;
}

// One 10 s execution of a 2-thread compute program beside a build on a 2-core VM, with a
// region of known work so that the region gets a verdict of its own.
RunRecord contended_record() {
    RunRecord r;
    r.kind = RecordKind::run;
    r.command = {"compute"};
    r.machine_profile = testing::synthetic_profile();
    Execution e;
    e.wall_s = 10;
    e.counters = {count("user_s", 9.4),
                  count("system_s", 0.2),
                  count("voluntary_context_switches", 6),
                  count("involuntary_context_switches", 3340),
                  count("peak_threads", 2),
                  count("host_cpu_s", 20),
                  count("host_steal_s", 0.01),
                  count("host_runnable_thread_s", 42),
                  count("peak_rss_bytes", 3e6, true),
                  count("storage_read_bytes", 4096),
                  count("storage_write_bytes", 50e6),
                  count("read_call_bytes", 8192),
                  count("write_call_bytes", 50e6)};
    r.executions.push_back(e);
    r.whole.durations_s = {10};
    r.whole.duration_s = summarize(r.whole.durations_s);
    RecordedRegion reg;
    reg.path = reg.name = "gemm";
    reg.total_s_per_execution = {8};
    reg.instances = 1;
    reg.measurement.threads = 2;
    Work w;
    w.ops = 1e11;
    w.compulsory_bytes = 1e9;
    reg.measurement.work = w;
    reg.measurement.durations_s = {8};
    reg.measurement.duration_s = summarize(reg.measurement.durations_s);
    r.regions.push_back(reg);
    return r;
}

TEST(RunProcessFindings, ContentionMarksTheRunAndEveryRegionVerdict) {
    RunRecord r = contended_record();
    judge::judge_record(r);
    ASSERT_TRUE(r.diagnosis);
    ASSERT_NE(contention_of(*r.diagnosis), nullptr);
    ASSERT_EQ(r.region_diagnoses.size(), 1u);
    EXPECT_NE(contention_of(r.region_diagnoses[0].diagnosis), nullptr);
    // Judged again (ceiling report), each verdict is marked once.
    judge::judge_record(r);
    const auto& f = r.region_diagnoses[0].diagnosis.findings;
    EXPECT_EQ(std::count_if(f.begin(), f.end(),
                            [](const Finding& x) { return x.kind == FindingKind::contention; }),
              1);

    std::ostringstream out;
    output::render_run_summary(r, out);
    const std::string s = out.str();
    EXPECT_NE(s.find("Diagnosis (taken under contention"), std::string::npos) << s;
    EXPECT_NE(s.find("note: contention: preempted 348 times per second of CPU time"),
              std::string::npos)
        << s;
    EXPECT_EQ(s.find("(taken under contention: other work competed"), std::string::npos)
        << "the regions do not repeat it: " << s;
    EXPECT_EQ(s.find("the process waits"), std::string::npos) << s;
    EXPECT_NE(s.find("memory: peak resident at least 2.86 MiB (largest process)"),
              std::string::npos)
        << s;
    EXPECT_NE(
        s.find("I/O: storage 47.7 MiB written, 4 KiB read; read/write calls 47.7 MiB written"),
        std::string::npos)
        << s;
}

TEST(RunProcessFindings, AQuietRunIsNotMarked) {
    RunRecord r = contended_record();
    for (auto& c : r.executions[0].counters)
        if (c.name == "involuntary_context_switches")
            c.value = 20;  // 1/s per core
        else if (c.name == "host_runnable_thread_s")
            c.value = 18;
    judge::judge_record(r);
    ASSERT_TRUE(r.diagnosis);
    EXPECT_EQ(contention_of(*r.diagnosis), nullptr);
    EXPECT_EQ(contention_of(r.region_diagnoses.at(0).diagnosis), nullptr);
    std::ostringstream out;
    output::render_run_summary(r, out);
    EXPECT_EQ(out.str().find("contention"), std::string::npos) << out.str();
}

TEST(RunProcessFindings, AnOlderRecordsMaxRssIsNotThePrograms) {
    RunRecord r = contended_record();
    auto& c = r.executions[0].counters;
    std::erase_if(c, [](const CounterValue& x) { return x.name == "peak_rss_bytes"; });
    c.push_back(count("max_rss_bytes", 104e6));  // wait4's: ceiling's memory before exec
    judge::judge_record(r);
    EXPECT_FALSE(peak_memory_bytes(r));
    ASSERT_TRUE(r.diagnosis);
    EXPECT_FALSE(r.diagnosis->capacity);
    std::ostringstream out;
    output::render_run_summary(r, out);
    EXPECT_EQ(out.str().find("memory: peak resident"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace ceiling
