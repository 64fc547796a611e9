// A run's serial stage: the range whose instances, one at a time on one thread, spanned most
// of the wall time while other threads' ranges ran beside it and CPUs idled. Synthetic
// records (judged_records.hpp) against the synthetic 4-CPU profile.
#include <gtest/gtest.h>

#include "agent/judge/judge_record.hpp"
#include "tests/unit/agent/judged_records.hpp"

namespace ceiling::judge {
namespace {

using namespace judged;

// A producer decoding 60 items on its thread (99 % of the wall time, its core busy) beside a
// consumer's ranges (0.24 cores): the producer sets the run's length, and the run's first move
// starts with it.
RunRecord pipeline() {
    auto decode = busy_region("decode", std::nullopt, 0.0226, 1.24);
    decode.instances = 60;
    decode.total_s_per_execution = {60 * 0.0226};
    decode.beside_busy_cores = 0.24;
    decode.unranged_busy_cores = 0.0;
    decode.concurrency = 1.0;
    auto infer = busy_region("infer", std::nullopt, 0.0055, 1.61);
    infer.instances = 60;
    infer.total_s_per_execution = {60 * 0.0055};
    infer.beside_busy_cores = 0.98;
    infer.concurrency = 1.0;
    return record_of({decode, infer}, 1.37);
}

bool says(const std::string& text, const std::string& words) {
    return text.find(words) != std::string::npos;
}

TEST(SerialStage, TheStageSpanningTheRunBesideOthersIsNamed) {
    RunRecord rec = pipeline();
    judge_record(rec);
    ASSERT_TRUE(rec.diagnosis);
    EXPECT_TRUE(has_finding(*rec.diagnosis, "decode is the run's serial stage"));
    EXPECT_TRUE(has_finding(*rec.diagnosis, "its own thread busy 1.00 of a core"));
    EXPECT_FALSE(has_finding(*rec.diagnosis, "infer is the run's serial stage"));
    EXPECT_TRUE(says(rec.diagnosis->first_move, "start with decode, the serial stage (99%"))
        << rec.diagnosis->first_move;
    // A start-up before the first range (imports, a sanitizer's) is not the pipeline's: the
    // stage spans the time its ranges ran, 1.36 s of a 2 s run.
    RunRecord late = pipeline();
    late.whole.durations_s = {2.0};
    late.whole.duration_s = summarize(late.whole.durations_s);
    late.before_regions_s_per_execution = {0.6};
    late.after_regions_s_per_execution = {0.04};
    judge_record(late);
    EXPECT_TRUE(has_finding(*late.diagnosis, "decode is the run's serial stage"));
    late.before_regions_s_per_execution.clear();
    judge_record(late);
    EXPECT_FALSE(has_finding(*late.diagnosis, "serial stage")) << "68 % of the wall time";
}

TEST(SerialStage, NotWhereItsConditionsFail) {
    const auto named = [](RunRecord rec) {
        judge_record(rec);
        return has_finding(*rec.diagnosis, "serial stage");
    };
    {  // Nothing ran beside it: one thread's program (its idle cores are the regions' to say).
        RunRecord rec = pipeline();
        rec.regions[0].beside_busy_cores = 0.0;
        EXPECT_FALSE(named(rec));
    }
    {  // Instances side by side (a range each thread of a team pushes).
        RunRecord rec = pipeline();
        rec.regions[0].concurrency = 2.0;
        EXPECT_FALSE(named(rec));
    }
    {  // Half the wall time: the run does not last as long as it.
        RunRecord rec = pipeline();
        rec.regions[0].total_s_per_execution = {0.68};
        EXPECT_FALSE(named(rec));
    }
    {  // Its own thread mostly waited (a stage blocked on its input, not computing).
        RunRecord rec = pipeline();
        rec.regions[0].busy_cores = 0.5;
        EXPECT_FALSE(named(rec));
    }
    {  // One range around the whole run: spans it trivially.
        RunRecord rec = pipeline();
        rec.regions[0].instances = 1;
        EXPECT_FALSE(named(rec));
    }
    {  // Both stages span the run, each busy all along (a balanced pipeline): neither is
       // the one the others wait for.
        RunRecord rec = pipeline();
        rec.regions[1] = rec.regions[0];
        rec.regions[1].path = rec.regions[1].name = "infer";
        EXPECT_FALSE(named(rec));
    }
    {  // No CPU idle: more threads on it would only take turns.
        RunRecord rec = pipeline();
        rec.regions[0].busy_cores = 3.9;
        rec.regions[0].beside_busy_cores = 2.9;
        EXPECT_FALSE(named(rec));
    }
}

// A shell pipeline, `gen | gzip`: gzip busy a core all along while gen used a tenth of one
// and a CPU idled. Named from the processes; two busy ones (a pool's workers) name neither.
TEST(SerialStage, AProcessBusyACoreBesideOthersThatWaitIsNamed) {
    RunRecord rec = record_of({}, 1.67);
    rec.executions.front().processes = {
        {102, "gzip", 1.64, 1.67}, {101, "gen", 0.18, 1.67}, {100, "sh", 0.003, 1.67}};
    judge_record(rec);
    ASSERT_TRUE(rec.diagnosis);
    EXPECT_TRUE(has_finding(*rec.diagnosis, "gzip (pid 102) is the run's serial stage: busy 0.98"));
    EXPECT_TRUE(says(rec.diagnosis->first_move, "start with gzip (pid 102), the serial stage"))
        << rec.diagnosis->first_move;
    const auto named = [](RunRecord r) {
        judge_record(r);
        return has_finding(*r.diagnosis, "serial stage");
    };
    RunRecord pool = rec;
    pool.executions.front().processes[1] = {101, "worker", 1.60, 1.67};
    EXPECT_FALSE(named(pool)) << "two busy processes";
    RunRecord alone = rec;
    alone.executions.front().processes[1].cpu_s = 0.005;
    EXPECT_FALSE(named(alone)) << "nothing beside it: a program under a shell";
    RunRecord threads = rec;
    threads.executions.front().processes[0].cpu_s = 3.2;
    EXPECT_FALSE(named(threads)) << "two cores' worth: its threads share its work";
    RunRecord late = rec;
    late.executions.front().processes[0].seen_s = 0.8;
    late.executions.front().processes[0].cpu_s = 0.78;
    EXPECT_FALSE(named(late)) << "half the run";
}

}  // namespace
}  // namespace ceiling::judge
