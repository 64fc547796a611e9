#include "diagnosis/llm_bound.hpp"

#include <cmath>
#include <stdexcept>

#include "diagnosis/json_support.hpp"
#include "diagnosis/work_bound.hpp"

namespace ceiling {
namespace {

void require_positive(double v, const char* what) {
    if (!std::isfinite(v) || !(v > 0))
        throw std::invalid_argument(std::string(what) + " must be a positive number");
}

// Attention FLOP per token attending to `context` tokens: Q.K^T and the weighted sum of V,
// each 2 x head_dim per head, layer and attended token.
double attention_flops(const KvCacheShape& kv, int heads, double context) {
    return 4.0 * kv.layers * heads * kv.head_dim * context;
}

void check_query(const LlmQuery& q) {
    require_positive(q.params, "params");
    require_positive(q.weight_bits, "weight bits");
    require_positive(q.batch, "batch");
    if (q.threads < 1) throw std::invalid_argument("threads must be at least 1");
    if (q.kv) {
        require_positive(q.kv->context_tokens, "context");
        require_positive(q.kv->kv_bits, "KV bits");
        require_positive(q.kv->layers, "layers");
        require_positive(q.kv->kv_heads, "KV heads");
        require_positive(q.kv->head_dim, "head dim");
    }
    if (q.heads) {
        if (!q.kv) {
            throw std::invalid_argument(
                "heads needs the KV shape (context, layers, KV heads, head dim)");
        }
        require_positive(*q.heads, "heads");
    }
}

// Tokens each sequence attends to; 0 without the KV shape.
double context_of(const LlmQuery& q) { return q.kv ? q.kv->context_tokens : 0; }

// Sets b.precision and b.compute.
void choose_compute_roof(const MachineProfile& profile, LlmBound& b) {
    const LlmQuery& q = b.query;
    // bf16 is what CPU matrix units and GPUs run LLMs in; fp32 is the fallback every CPU has.
    b.precision = q.precision.value_or(Precision::bf16);
    auto ceiling_for = [&](Precision p) -> std::optional<ComputeCeiling> {
        if (q.engine) return make_roofline(profile, p, *q.engine, q.threads).compute;
        return best_compute_ceiling(profile, p, q.threads);
    };
    std::optional<ComputeCeiling> compute = ceiling_for(b.precision);
    if (!compute && !q.precision) {
        compute = ceiling_for(Precision::fp32);
        if (compute) {
            b.findings.push_back(
                {FindingKind::assumption, "no bf16 compute roof in the profile: fp32 roof used"});
            b.precision = Precision::fp32;
        }
    }
    if (!compute) {
        throw std::invalid_argument(
            "the machine profile has no " + std::string(to_string(b.precision)) +
            (q.engine ? " " + std::string(to_string(*q.engine)) : std::string()) +
            " compute roof (" + std::string(to_string(b.precision)) +
            " engines measured: " + available_engines(profile, b.precision) + ")");
    }
    b.compute = *compute;
}

// Bytes of weights and KV cache, FLOP per token of decode and prefill.
void count_work(LlmBound& b) {
    const LlmQuery& q = b.query;
    b.weight_bytes = q.params * q.weight_bits / 8;
    const double context = context_of(q);
    if (q.kv) {
        b.kv_bytes_per_token = q.kv->bytes_per_token();
        b.kv_cache_bytes = q.batch * context * *b.kv_bytes_per_token;
    } else {
        b.findings.push_back(
            {FindingKind::assumption,
             "no KV-cache shape (--context, --layers, --kv-heads, --head-dim): KV traffic and "
             "footprint not counted"});
    }
    b.decode_flops_per_token = 2 * q.params;
    b.prefill_flops_per_token = 2 * q.params;
    if (q.heads) {
        b.decode_flops_per_token += attention_flops(*q.kv, *q.heads, context);
        // A causal prompt attends on average to half its length.
        b.prefill_flops_per_token += attention_flops(*q.kv, *q.heads, context / 2);
    } else {
        b.findings.push_back(
            {FindingKind::assumption,
             "attention FLOP not counted (give --heads with the KV shape): the compute "
             "ceilings are upper bounds"});
    }
}

void bound_decode(const MachineProfile& profile, LlmBound& b) {
    const LlmQuery& q = b.query;
    // Decode: weights once per step, plus every sequence's whole KV cache.
    b.decode_bytes_per_step = b.weight_bytes + b.kv_cache_bytes;
    const Roofline roofline = make_roofline(profile, b.precision, b.compute.engine, q.threads);
    const LevelRoof* level = roofline.level_for(b.decode_bytes_per_step);
    if (!level) throw std::invalid_argument("the machine profile has no bandwidth roof");
    b.decode_level = level->bandwidth.level;
    b.decode_bandwidth_bytes_per_s = level->bandwidth.bytes_per_s;
    b.decode_memory_tokens_per_s =
        q.batch * b.decode_bandwidth_bytes_per_s / b.decode_bytes_per_step;
    b.decode_compute_tokens_per_s = b.compute.ops_per_s / b.decode_flops_per_token;
    b.decode_bound = b.decode_compute_tokens_per_s <= b.decode_memory_tokens_per_s
                         ? Bound::compute
                         : Bound::bandwidth;
    b.decode_tokens_per_s = std::min(b.decode_memory_tokens_per_s, b.decode_compute_tokens_per_s);
    b.decode_tokens_per_s_per_sequence = b.decode_tokens_per_s / q.batch;
}

// At decode's bandwidth (its level).
void bound_prefill(LlmBound& b) {
    const LlmQuery& q = b.query;
    // Prefill: the whole prompt (context tokens per sequence) shares one read of the weights.
    b.prefill_compute_tokens_per_s = b.compute.ops_per_s / b.prefill_flops_per_token;
    if (q.kv) {
        const double bytes_per_token =
            b.weight_bytes / (q.batch * context_of(q)) + *b.kv_bytes_per_token;
        b.prefill_memory_tokens_per_s = b.decode_bandwidth_bytes_per_s / bytes_per_token;
    }
    b.prefill_tokens_per_s =
        std::min(b.prefill_compute_tokens_per_s,
                 b.prefill_memory_tokens_per_s.value_or(b.prefill_compute_tokens_per_s));
    b.prefill_bound =
        b.prefill_tokens_per_s < b.prefill_compute_tokens_per_s ? Bound::bandwidth : Bound::compute;
}

// Weights and KV cache against the host's memory, and the largest batch that fits.
void judge_footprint(const MachineProfile& profile, const Thresholds& t, LlmBound& b) {
    const LlmQuery& q = b.query;
    b.footprint_bytes = b.weight_bytes + b.kv_cache_bytes;
    if (profile.host.memory_bytes > 0) {
        const double capacity = static_cast<double>(profile.host.memory_bytes);
        b.memory_capacity_bytes = capacity;
        b.capacity_fraction = b.footprint_bytes / capacity;
        b.fits = b.footprint_bytes <= capacity;
        b.capacity_bound = *b.capacity_fraction >= t.capacity;
        if (q.kv && capacity > b.weight_bytes) {
            b.max_batch_in_memory =
                std::floor((capacity - b.weight_bytes) / (context_of(q) * *b.kv_bytes_per_token));
        } else if (q.kv) {
            b.max_batch_in_memory = 0;
        }
    } else {
        b.findings.push_back(
            {FindingKind::unknown_counter, "memory capacity unknown: footprint not judged"});
    }
}

void find_compute_bound_batch(LlmBound& b) {
    // Step time at batch n: memory (W + n C kv) / BW, compute n F / roof. Compute bound from
    // n (F / roof - C kv / BW) >= W / BW on, if the bracket is positive.
    const double per_token_margin_s =
        b.decode_flops_per_token / b.compute.ops_per_s -
        context_of(b.query) * b.kv_bytes_per_token.value_or(0) / b.decode_bandwidth_bytes_per_s;
    if (per_token_margin_s > 0) {
        b.compute_bound_batch = std::max(
            1.0, std::ceil(b.weight_bytes / b.decode_bandwidth_bytes_per_s / per_token_margin_s));
    }
}
}  // namespace

LlmBound bound_llm(const MachineProfile& profile, const LlmQuery& q, const Thresholds& t) {
    check_query(q);
    LlmBound b;
    b.query = q;
    choose_compute_roof(profile, b);
    count_work(b);
    bound_decode(profile, b);
    bound_prefill(b);
    judge_footprint(profile, t, b);
    find_compute_bound_batch(b);
    // Nothing was measured of a program: only moves the bound itself licenses.
    b.first_move = first_move_for(decision_row(b.capacity_bound ? Bound::capacity : b.decode_bound),
                                  Evidence{});
    return b;
}

void to_json(nlohmann::json& j, const KvCacheShape& k) {
    j = {{"context_tokens", k.context_tokens},
         {"kv_bits", k.kv_bits},
         {"layers", k.layers},
         {"kv_heads", k.kv_heads},
         {"head_dim", k.head_dim}};
}

void to_json(nlohmann::json& j, const LlmBound& b) {
    j = {{"params", b.query.params},
         {"weight_bits", b.query.weight_bits},
         {"batch", b.query.batch},
         {"kv_cache_shape", b.query.kv},
         {"heads", b.query.heads},
         {"threads", b.query.threads},
         {"precision", b.precision},
         {"compute", b.compute},
         {"weight_bytes", b.weight_bytes},
         {"kv_bytes_per_token", b.kv_bytes_per_token},
         {"kv_cache_bytes", b.kv_cache_bytes},
         {"decode",
          {{"flops_per_token", b.decode_flops_per_token},
           {"bytes_per_step", b.decode_bytes_per_step},
           {"level", b.decode_level},
           {"bandwidth_bytes_per_s", b.decode_bandwidth_bytes_per_s},
           {"memory_tokens_per_s", b.decode_memory_tokens_per_s},
           {"compute_tokens_per_s", b.decode_compute_tokens_per_s},
           {"tokens_per_s", b.decode_tokens_per_s},
           {"tokens_per_s_per_sequence", b.decode_tokens_per_s_per_sequence},
           {"bound", b.decode_bound},
           {"compute_bound_batch", b.compute_bound_batch}}},
         {"prefill",
          {{"flops_per_token", b.prefill_flops_per_token},
           {"compute_tokens_per_s", b.prefill_compute_tokens_per_s},
           {"memory_tokens_per_s", b.prefill_memory_tokens_per_s},
           {"tokens_per_s", b.prefill_tokens_per_s},
           {"bound", b.prefill_bound}}},
         {"footprint",
          {{"footprint_bytes", b.footprint_bytes},
           {"memory_capacity_bytes", b.memory_capacity_bytes},
           {"fraction", b.capacity_fraction},
           {"fits", b.fits},
           {"capacity_bound", b.capacity_bound},
           {"max_batch_in_memory", b.max_batch_in_memory}}},
         {"first_move", b.first_move},
         {"findings", b.findings}};
}

}  // namespace ceiling
