#pragma once
// The bound of a decoder-only LLM on this machine, before running it.
//
// Decode: each step reads every weight once plus every sequence's KV cache, and does
// 2 x params FLOP per token (a multiply-add is 2), plus attention when the shape is given.
// Its tokens/s ceiling is the lower of batch x bandwidth / bytes per step and compute roof /
// FLOP per token. Prefill processes the prompt's tokens together, so the weights are read
// once for many tokens and the compute roof usually binds. Footprint = weights + KV cache,
// compared with memory. Decode turns compute bound at the batch where the compute time of
// a step reaches its memory time.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "diagnosis/decision.hpp"
#include "diagnosis/diagnosis.hpp"
#include "diagnosis/machine_profile.hpp"
#include "diagnosis/roofline.hpp"
#include "diagnosis/thresholds.hpp"

namespace ceiling {

struct KvCacheShape {
    double context_tokens = 0;  // tokens each sequence attends to (and keeps in its cache)
    double kv_bits = 16;
    int layers = 0;
    int kv_heads = 0;  // key/value heads (fewer than query heads under grouped-query attention)
    int head_dim = 0;
    // K and V, per layer, per KV head, per dimension.
    double bytes_per_token() const { return 2.0 * layers * kv_heads * head_dim * kv_bits / 8; }
};

struct LlmQuery {
    double params = 0;
    double weight_bits = 16;
    double batch = 1;  // sequences decoded together
    std::optional<KvCacheShape> kv;
    std::optional<int> heads;  // query heads: attention FLOP are counted when known (needs kv)
    std::optional<Precision> precision;  // compute precision; default bf16, else fp32
    std::optional<Engine> engine;        // default: the fastest engine of that precision
    int threads = 1;
};

struct LlmBound {
    LlmQuery query;
    Precision precision = Precision::bf16;
    double weight_bytes = 0;
    std::optional<double> kv_bytes_per_token;  // per sequence, per token of context
    double kv_cache_bytes = 0;                 // all sequences at full context
    double decode_flops_per_token = 0;
    double prefill_flops_per_token = 0;
    ComputeCeiling compute;

    double decode_bytes_per_step = 0;
    std::string decode_level;  // where weights + KV cache live (DRAM for any real model)
    double decode_bandwidth_bytes_per_s = 0;
    double decode_memory_tokens_per_s = 0;  // all sequences together
    double decode_compute_tokens_per_s = 0;
    double decode_tokens_per_s = 0;  // the lower of the two
    double decode_tokens_per_s_per_sequence = 0;
    Bound decode_bound = Bound::bandwidth;

    double prefill_compute_tokens_per_s = 0;
    std::optional<double> prefill_memory_tokens_per_s;  // needs the prompt length (context)
    double prefill_tokens_per_s = 0;
    Bound prefill_bound = Bound::compute;

    double footprint_bytes = 0;  // weights + KV cache
    std::optional<double> memory_capacity_bytes;
    std::optional<double> capacity_fraction;
    bool capacity_bound = false;  // footprint at or above the capacity threshold
    std::optional<bool> fits;

    // Smallest batch at which decode is compute bound; absent when it never is (the KV
    // traffic per token alone outweighs its compute).
    std::optional<double> compute_bound_batch;
    // Largest batch whose KV cache fits beside the weights (needs the KV shape and memory).
    std::optional<double> max_batch_in_memory;

    std::string first_move;  // for the decode bound (capacity first when it binds)
    std::vector<Finding> findings;
};

// Throws std::invalid_argument (one line) for non-positive params, weight bits, batch or
// KV shape, heads without a KV shape, or a profile without the needed roofs.
LlmBound bound_llm(const MachineProfile& profile, const LlmQuery& query, const Thresholds& t);

void to_json(nlohmann::json& j, const KvCacheShape& k);
void to_json(nlohmann::json& j, const LlmBound& b);

}  // namespace ceiling
