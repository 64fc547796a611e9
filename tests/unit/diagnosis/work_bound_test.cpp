// `ceiling bound`'s arithmetic on the synthetic profile (fp32 FMA 143.7 GFLOP/s, DRAM triad
// 125.1 GB/s at 4 threads; memory 32 GiB).
#include "diagnosis/work_bound.hpp"

#include <cmath>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "diagnosis/json_support.hpp"
#include "diagnosis/llm_bound.hpp"
#include "tests/unit/diagnosis/diagnosis_fixtures.hpp"

namespace ceiling {
namespace {

Work work(double ops, double bytes, double ws = 0, Precision p = Precision::fp32,
          Engine e = Engine::vector) {
    Work w;
    w.precision = p;
    w.engine = e;
    w.ops = ops;
    w.compulsory_bytes = bytes;
    w.working_set_bytes = ws;
    return w;
}

class WorkBoundTest : public ::testing::Test {
  protected:
    MachineProfile profile = testing::synthetic_profile();
    Thresholds t;
};

TEST_F(WorkBoundTest, ComputeFloorWinsAboveTheRidge) {
    // 2.1 GFLOP over 420 MB: intensity 5 > ridge 1.15.
    const WorkBound b = bound_work(profile, work(2.1e9, 4.2e8), 4);
    EXPECT_DOUBLE_EQ(*b.intensity_ops_per_byte, 5);
    EXPECT_DOUBLE_EQ(b.compute_floor_s, 2.1e9 / 143.7e9);
    EXPECT_EQ(b.level, "DRAM");  // 420 MB working set (the bytes, by default)
    EXPECT_DOUBLE_EQ(b.work.working_set_bytes, 4.2e8);
    EXPECT_DOUBLE_EQ(b.memory_floor_s, 4.2e8 / 125.1e9);
    EXPECT_DOUBLE_EQ(b.floor_s, b.compute_floor_s);
    EXPECT_EQ(b.bound, Bound::compute);
    EXPECT_NEAR(b.ridge_ops_per_byte, 1.15, 0.005);
    EXPECT_EQ(b.first_move, first_move_for(decision_row(Bound::compute), Evidence{}));
    // Every level is listed with its own floor; only DRAM holds the working set.
    ASSERT_EQ(b.levels.size(), 4u);
    for (const auto& l : b.levels) {
        EXPECT_DOUBLE_EQ(l.floor_s, 4.2e8 / l.roof.bandwidth.bytes_per_s);
        EXPECT_EQ(l.holds_working_set, l.roof.bandwidth.level == "DRAM");
    }
}

TEST_F(WorkBoundTest, SaxpyIsBandwidthBound) {
    const WorkBound b = bound_work(profile, work(2e8, 1.2e9), 4);
    EXPECT_EQ(b.bound, Bound::bandwidth);
    EXPECT_DOUBLE_EQ(b.floor_s, 1.2e9 / 125.1e9);
    EXPECT_NEAR(b.attainable_ops_per_s / 1e9, 20.9, 0.05);
}

TEST_F(WorkBoundTest, SmallWorkingSetUsesItsCacheLevel) {
    const WorkBound b = bound_work(profile, work(2e8, 1.2e9, 10.0 * 1024 * 1024), 4);
    EXPECT_EQ(b.level, "L3");
    EXPECT_DOUBLE_EQ(b.memory_floor_s, 1.2e9 / 250e9);
}

TEST_F(WorkBoundTest, PureComputeAndPureTraffic) {
    const WorkBound compute = bound_work(profile, work(1e9, 0), 4);
    EXPECT_FALSE(compute.intensity_ops_per_byte);
    EXPECT_EQ(compute.bound, Bound::compute);
    const WorkBound copy = bound_work(profile, work(0, 1e9), 4);
    EXPECT_EQ(copy.bound, Bound::bandwidth);
}

TEST_F(WorkBoundTest, BadInput) {
    EXPECT_THROW(bound_work(profile, work(-1, 1e9), 4), std::invalid_argument);
    EXPECT_THROW(bound_work(profile, work(1e9, -1), 4), std::invalid_argument);
    EXPECT_THROW(bound_work(profile, work(0, 0), 4), std::invalid_argument);
    EXPECT_THROW(bound_work(profile, work(std::nan(""), 1), 4), std::invalid_argument);
    EXPECT_THROW(bound_work(profile, work(1, 1), 0), std::invalid_argument);
    try {
        bound_work(profile, work(1e9, 1e9, 0, Precision::bf16, Engine::scalar), 4);
        FAIL();
    } catch (const std::invalid_argument& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("no bf16 scalar compute roof"), std::string::npos) << m;
        EXPECT_NE(m.find("vector, matrix"), std::string::npos) << m;
    }
}

TEST_F(WorkBoundTest, ThreadsBeyondTheMachineAreSaid) {
    const WorkBound b = bound_work(profile, work(2.1e9, 4.2e8), 64);
    EXPECT_EQ(b.compute.threads, 4);
    EXPECT_FALSE(b.findings.empty());
    EXPECT_EQ(default_threads(profile), 4);
}

TEST_F(WorkBoundTest, JsonHasUnitsInNames) {
    const nlohmann::json j = bound_work(profile, work(2.1e9, 4.2e8), 4);
    for (const char* k :
         {"ops", "compulsory_bytes", "intensity_ops_per_byte", "compute_floor_s", "memory_floor_s",
          "floor_s", "ridge_ops_per_byte", "attainable_ops_per_s"})
        EXPECT_TRUE(j.contains(k)) << k;
    EXPECT_EQ(j.at("bound"), "compute");
    EXPECT_TRUE(j.at("levels").at(0).contains("floor_s"));
    EXPECT_TRUE(j.at("compute").contains("ops_per_s"));
}

class LlmBoundTest : public WorkBoundTest {
  protected:
    LlmQuery query(double params, double bits, double batch = 1) {
        LlmQuery q;
        q.params = params;
        q.weight_bits = bits;
        q.batch = batch;
        q.threads = 4;
        return q;
    }
    static KvCacheShape llama_like(double context) {
        KvCacheShape kv;
        kv.context_tokens = context;
        kv.kv_bits = 16;
        kv.layers = 32;
        kv.kv_heads = 8;
        kv.head_dim = 128;
        return kv;
    }
};

TEST_F(LlmBoundTest, DecodeIsDramBandwidthOverWeightBytes) {
    const LlmBound b = bound_llm(profile, query(7e9, 16), t);
    EXPECT_DOUBLE_EQ(b.weight_bytes, 14e9);
    EXPECT_EQ(b.decode_level, "DRAM");
    EXPECT_DOUBLE_EQ(b.decode_bandwidth_bytes_per_s, 125.1e9);
    EXPECT_DOUBLE_EQ(b.decode_tokens_per_s, 125.1e9 / 14e9);  // 8.94 tokens/s
    EXPECT_EQ(b.decode_bound, Bound::bandwidth);
    // Compute: bf16 on AMX, 1 TFLOP/s over 14 GFLOP per token.
    EXPECT_EQ(b.compute.name, "bf16_amx");
    EXPECT_DOUBLE_EQ(b.decode_compute_tokens_per_s, 1e12 / 14e9);
    EXPECT_EQ(b.first_move, first_move_for(decision_row(Bound::bandwidth), Evidence{}));
}

TEST_F(LlmBoundTest, FourBitWeightsRaiseTheCeilingFourTimes) {
    const LlmBound b16 = bound_llm(profile, query(7e9, 16), t);
    const LlmBound b4 = bound_llm(profile, query(7e9, 4), t);
    EXPECT_DOUBLE_EQ(b4.weight_bytes, 3.5e9);
    EXPECT_EQ(b4.decode_bound, Bound::bandwidth);
    EXPECT_DOUBLE_EQ(b4.decode_tokens_per_s / b16.decode_tokens_per_s, 4);
}

TEST_F(LlmBoundTest, PrefillIsComputeBound) {
    const LlmBound b = bound_llm(profile, query(7e9, 16), t);
    EXPECT_DOUBLE_EQ(b.prefill_tokens_per_s, 1e12 / 14e9);
    EXPECT_EQ(b.prefill_bound, Bound::compute);
    LlmQuery q = query(7e9, 16);
    q.kv = llama_like(4096);
    const LlmBound with_prompt = bound_llm(profile, q, t);
    ASSERT_TRUE(with_prompt.prefill_memory_tokens_per_s);
    EXPECT_GT(*with_prompt.prefill_memory_tokens_per_s, with_prompt.prefill_compute_tokens_per_s);
}

TEST_F(LlmBoundTest, BatchWhereDecodeTurnsComputeBound) {
    // Step at batch n: 14 GB / 125.1 GB/s = 112 ms of traffic vs n x 14 ms of compute:
    // compute bound from n = ceil(112 / 14) = 8.
    const LlmBound b = bound_llm(profile, query(7e9, 16), t);
    ASSERT_TRUE(b.compute_bound_batch);
    EXPECT_EQ(*b.compute_bound_batch, 8);
    EXPECT_EQ(bound_llm(profile, query(7e9, 16, 8), t).decode_bound, Bound::compute);
    EXPECT_EQ(bound_llm(profile, query(7e9, 16, 7), t).decode_bound, Bound::bandwidth);
    const LlmBound b8 = bound_llm(profile, query(7e9, 16, 8), t);
    EXPECT_DOUBLE_EQ(b8.decode_tokens_per_s_per_sequence, b8.decode_tokens_per_s / 8);
}

TEST_F(LlmBoundTest, KvCacheAddsTrafficAndFootprint) {
    LlmQuery q = query(7e9, 16);
    q.kv = llama_like(4096);
    const LlmBound b = bound_llm(profile, q, t);
    // K and V x 32 layers x 8 heads x 128 dims x 2 bytes = 128 KiB per token.
    EXPECT_DOUBLE_EQ(*b.kv_bytes_per_token, 131072);
    EXPECT_DOUBLE_EQ(b.kv_cache_bytes, 4096.0 * 131072);
    EXPECT_DOUBLE_EQ(b.decode_bytes_per_step, 14e9 + 4096.0 * 131072);
    EXPECT_DOUBLE_EQ(b.footprint_bytes, b.decode_bytes_per_step);
    ASSERT_TRUE(b.max_batch_in_memory);
    EXPECT_EQ(*b.max_batch_in_memory, std::floor((32.0 * (1 << 30) - 14e9) / (4096.0 * 131072)));
}

TEST_F(LlmBoundTest, LongContextsNeverTurnComputeBound) {
    LlmQuery q = query(7e9, 16);
    q.kv = llama_like(131072);  // 16 GiB of KV per sequence: its traffic outweighs the compute
    EXPECT_FALSE(bound_llm(profile, q, t).compute_bound_batch);
}

TEST_F(LlmBoundTest, AttentionFlopsWhenHeadsAreGiven) {
    LlmQuery q = query(7e9, 16);
    q.kv = llama_like(4096);
    q.heads = 32;
    const LlmBound b = bound_llm(profile, q, t);
    EXPECT_DOUBLE_EQ(b.decode_flops_per_token, 14e9 + 4.0 * 32 * 32 * 128 * 4096);
    EXPECT_DOUBLE_EQ(b.prefill_flops_per_token, 14e9 + 4.0 * 32 * 32 * 128 * 2048);
}

TEST_F(LlmBoundTest, TooBigForMemoryIsCapacityBound) {
    const LlmBound b = bound_llm(profile, query(70e9, 16), t);  // 140 GB in 32 GiB
    EXPECT_EQ(b.fits, false);
    EXPECT_TRUE(b.capacity_bound);
    EXPECT_EQ(b.first_move, first_move_for(decision_row(Bound::capacity), Evidence{}));
    EXPECT_FALSE(bound_llm(profile, query(7e9, 16), t).capacity_bound);
}

TEST_F(LlmBoundTest, PrecisionAndEngineChoice) {
    LlmQuery q = query(7e9, 16);
    q.engine = Engine::vector;
    EXPECT_EQ(bound_llm(profile, q, t).compute.name, "bf16_dot512");
    q.engine.reset();
    q.precision = Precision::fp16;
    EXPECT_THROW(bound_llm(profile, q, t), std::invalid_argument);  // no fp16 roof measured
    // Without bf16 roofs the default falls back to fp32 and says so.
    MachineProfile old = profile;
    std::erase_if(old.compute_roofs,
                  [](const ComputeRoof& r) { return r.precision == Precision::bf16; });
    const LlmBound b = bound_llm(old, query(7e9, 16), t);
    EXPECT_EQ(b.precision, Precision::fp32);
    EXPECT_FALSE(b.findings.empty());
}

TEST_F(LlmBoundTest, BadInput) {
    EXPECT_THROW(bound_llm(profile, query(0, 16), t), std::invalid_argument);
    EXPECT_THROW(bound_llm(profile, query(7e9, -4), t), std::invalid_argument);
    EXPECT_THROW(bound_llm(profile, query(7e9, 16, 0), t), std::invalid_argument);
    LlmQuery q = query(7e9, 16);
    q.heads = 32;  // heads without the KV shape
    EXPECT_THROW(bound_llm(profile, q, t), std::invalid_argument);
    q.heads.reset();
    q.kv = llama_like(4096);
    q.kv->layers = 0;
    EXPECT_THROW(bound_llm(profile, q, t), std::invalid_argument);
}

TEST_F(LlmBoundTest, JsonNamesCarryUnits) {
    const nlohmann::json j = bound_llm(profile, query(7e9, 4), t);
    EXPECT_DOUBLE_EQ(j.at("decode").at("tokens_per_s").get<double>(), 125.1e9 / 3.5e9);
    EXPECT_DOUBLE_EQ(j.at("decode").at("bandwidth_bytes_per_s").get<double>(), 125.1e9);
    EXPECT_EQ(j.at("decode").at("bound"), "bandwidth");
    EXPECT_TRUE(j.at("footprint").contains("footprint_bytes"));
    EXPECT_DOUBLE_EQ(j.at("weight_bytes").get<double>(), 3.5e9);
}

}  // namespace
}  // namespace ceiling
