// A run's serial stage: the range whose instances, one at a time on one thread, spanned most
// of the wall time while other threads' ranges ran beside it and CPUs idled. Synthetic
// records (judged_records.hpp) against the synthetic 4-CPU profile.
#include <gtest/gtest.h>

#include "agent/measure/region_diagnosis.hpp"
#include "tests/unit/agent/judged_records.hpp"

namespace ceiling::measure {
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

}  // namespace
}  // namespace ceiling::measure
