// `ceiling bound`: the bound before the code. The time floor of given work on this machine
// (compute floor, memory floor per level, the larger, intensity vs ridge), and `bound llm`:
// the decode and prefill ceilings of an LLM of given size and precision, its footprint, and
// the batch at which decode turns compute bound. Reads the saved machine profile and
// measures a quick one when there is none.
#include <iostream>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "agent/cli/command.hpp"
#include "agent/cli/shared_options.hpp"
#include "agent/output/bound_table.hpp"
#include "diagnosis/json_support.hpp"
#include "diagnosis/llm_bound.hpp"
#include "diagnosis/thresholds.hpp"
#include "diagnosis/units.hpp"
#include "diagnosis/work_bound.hpp"

namespace ceiling::cli {

namespace {

// Numbers are taken as text and parsed here, so that every bad value ends in one line that
// names the option (exit 2), with units allowed where they make sense ("420MB", "7B").
struct BoundArgs {
    std::string ops, bytes, working_set;
    std::string precision = "fp32";
    std::string engine = "vector";
    int threads = 0;  // 0: the profile's all-core count
    std::string profile;
    bool json = false;
    ThresholdArgs thresholds;
};

struct LlmArgs {
    std::string params, weight_bits = "16", batch = "1";
    std::string context, kv_bits = "16", layers, kv_heads, head_dim, heads;
    std::string precision, engine;
};

double quantity(const std::string& option, const std::string& text, QuantityKind kind) {
    try {
        return parse_quantity(text, kind);
    } catch (const std::invalid_argument& e) {
        throw UsageError(option + ": " + e.what());
    }
}

int whole(const std::string& option, const std::string& text) {
    const double v = quantity(option, text, QuantityKind::count);
    if (v < 1 || v != static_cast<double>(static_cast<int>(v)))
        throw UsageError(option + ": '" + text + "' is not a positive whole number");
    return static_cast<int>(v);
}

Precision precision_of(const std::string& text) {
    if (auto p = parse_precision(text)) return *p;
    std::string known;
    for (auto n : precision_names) known += (known.empty() ? "" : ", ") + std::string(n);
    throw UsageError("--precision: unknown precision '" + text + "' (known: " + known + ")");
}

Engine engine_of(const std::string& text) {
    if (auto e = parse_engine(text)) return *e;
    throw UsageError("--engine: unknown engine '" + text + "' (known: scalar, vector, matrix)");
}

nlohmann::json profile_json(const LoadedProfile& p) {
    return {{"path", p.path.string()},
            {"hostname", p.profile.host.hostname},
            {"created_at", p.profile.created_at},
            {"quick", p.profile.quick}};
}

// Checked before the profile is loaded (or measured): bad input fails at once.
std::optional<int> threads_option(const BoundArgs& a) {
    if (a.threads == 0) return std::nullopt;
    return a.threads;
}

// The result as JSON (with the profile it came from) or as the table.
template <typename Bound>
void print_result(const Bound& b, const LoadedProfile& loaded, bool json,
                  void (*render)(const Bound&, std::ostream&)) {
    if (json) {
        nlohmann::json j = b;
        j["profile"] = profile_json(loaded);
        std::cout << j.dump(2) << "\n";
    } else {
        render(b, std::cout);
    }
}

int run_work(const BoundArgs& a, const GlobalOptions& global) {
    if (a.ops.empty() || a.bytes.empty())
        throw UsageError("bound needs --flops and --bytes (0 for none), or the `llm` subcommand");
    Work w;
    w.ops = quantity("--flops", a.ops, QuantityKind::count);
    w.compulsory_bytes = quantity("--bytes", a.bytes, QuantityKind::bytes);
    if (!a.working_set.empty())
        w.working_set_bytes = quantity("--working-set", a.working_set, QuantityKind::bytes);
    w.precision = precision_of(a.precision);
    w.engine = engine_of(a.engine);
    thresholds_of(
        a.thresholds);  // validated even though the floor needs none: bad input is an error
    const auto threads = threads_option(a);
    const LoadedProfile loaded = obtain_profile(a.profile, global, "ceiling bound", false);
    WorkBound b;
    try {
        b = bound_work(loaded.profile, w, threads.value_or(default_threads(loaded.profile)));
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    print_result(b, loaded, a.json, output::render_work_bound);
    return exit_ok;
}

int run_llm(const BoundArgs& a, const LlmArgs& l, const GlobalOptions& global) {
    if (l.params.empty()) throw UsageError("bound llm needs --params (e.g. 7e9 or 7B)");
    // `bound`'s own work options would be parsed and silently unused here.
    for (const auto& [option, value] : {std::pair<const char*, const std::string&>{"--flops", a.ops},
                                        {"--bytes", a.bytes},
                                        {"--working-set", a.working_set}})
        if (!value.empty())
            throw UsageError(std::string(option) +
                             " is an option of `bound`, not `bound llm` (which derives the work "
                             "from --params and the shape)");
    LlmQuery q;
    q.params = quantity("--params", l.params, QuantityKind::count);
    q.weight_bits = quantity("--weight-bits", l.weight_bits, QuantityKind::count);
    q.batch = whole("--batch", l.batch);
    const bool any_shape =
        !l.context.empty() || !l.layers.empty() || !l.kv_heads.empty() || !l.head_dim.empty();
    if (any_shape) {
        if (l.context.empty() || l.layers.empty() || l.kv_heads.empty() || l.head_dim.empty()) {
            throw UsageError(
                "the KV-cache shape needs all of --context, --layers, --kv-heads and --head-dim");
        }
        KvCacheShape kv;
        kv.context_tokens = whole("--context", l.context);
        kv.kv_bits = quantity("--kv-bits", l.kv_bits, QuantityKind::count);
        kv.layers = whole("--layers", l.layers);
        kv.kv_heads = whole("--kv-heads", l.kv_heads);
        kv.head_dim = whole("--head-dim", l.head_dim);
        q.kv = kv;
    }
    if (!l.heads.empty()) q.heads = whole("--heads", l.heads);
    if (!l.precision.empty()) q.precision = precision_of(l.precision);
    if (!l.engine.empty()) q.engine = engine_of(l.engine);
    const Thresholds t = thresholds_of(a.thresholds);
    const auto threads = threads_option(a);
    const LoadedProfile loaded = obtain_profile(a.profile, global, "ceiling bound", false);
    q.threads = threads.value_or(default_threads(loaded.profile));
    LlmBound b;
    try {
        b = bound_llm(loaded.profile, q, t);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    print_result(b, loaded, a.json, output::render_llm_bound);
    return exit_ok;
}

// Options both `bound` and `bound llm` take; registered on each so they may come before
// or after `llm`.
void shared_options(CLI::App* app, BoundArgs& a) {
    // One type for --threads in every command: a whole number of threads, checked by CLI11.
    app->add_option("--threads", a.threads,
                    "Threads the work runs on (default: the profile's all-core count)")
        ->check(CLI::Range(1, 4096));
    add_profile_option(app, a.profile);
    app->add_flag("--json", a.json,
                  "Print the result as JSON (exact values, units in field names)");
    add_threshold_options(app, a.thresholds);
}

}  // namespace

Command add_bound(CLI::App& root, const GlobalOptions& global) {
    auto args = std::make_shared<BoundArgs>();
    auto llm_args = std::make_shared<LlmArgs>();
    auto* app = root.add_subcommand(
        "bound",
        "The bound before the code: the time floor of given work on this machine (compute floor,\n"
        "memory floor per level, the larger one, intensity vs ridge point, the bound), or with\n"
        "`llm` the decode and prefill tokens/s ceilings of a language model.");
    app->add_option("--flops,--ops", args->ops,
                    "Operations of the work (a multiply-add is 2), e.g. 2.1e9");
    app->add_option(
        "--bytes", args->bytes,
        "Compulsory bytes: each input read once, each output written once, e.g. 4.2e8 or 420MB");
    app->add_option("--working-set", args->working_set,
                    "Bytes the work touches (default: --bytes); decides the memory level");
    app->add_option("--precision", args->precision,
                    "fp64, fp32, fp16, bf16, tf32 or int8 (default fp32)");
    app->add_option("--engine", args->engine,
                    "scalar, vector (SIMD FMA) or matrix (AMX, tensor cores); default vector");
    shared_options(app, *args);

    auto* llm = app->add_subcommand("llm",
                                    "Ceilings of a decoder-only LLM: decode tokens/s (bytes per "
                                    "token over bandwidth vs FLOP per\n"
                                    "token over the compute roof; the lower wins), prefill "
                                    "tokens/s, weights + KV cache vs memory,\n"
                                    "and the batch at which decode turns compute bound.");
    llm->add_option("--params", llm_args->params, "Parameters, e.g. 7e9 or 7B");
    llm->add_option("--weight-bits", llm_args->weight_bits,
                    "Bits per weight (default 16; 4 for int4 quantisation)");
    llm->add_option("--batch", llm_args->batch, "Sequences decoded together (default 1)");
    llm->add_option("--context", llm_args->context,
                    "Tokens of context per sequence (with the KV shape)");
    llm->add_option("--kv-bits", llm_args->kv_bits, "Bits per KV-cache element (default 16)");
    llm->add_option("--layers", llm_args->layers, "Transformer layers");
    llm->add_option("--kv-heads", llm_args->kv_heads,
                    "Key/value heads (fewer than query heads with GQA)");
    llm->add_option("--head-dim", llm_args->head_dim, "Dimension of one head");
    llm->add_option("--heads", llm_args->heads,
                    "Query heads: counts attention FLOP (needs the KV shape)");
    llm->add_option("--precision", llm_args->precision,
                    "Compute precision (default bf16, else fp32)");
    llm->add_option("--engine", llm_args->engine,
                    "scalar, vector or matrix (default: the fastest measured)");
    shared_options(llm, *args);

    return {app, [args, llm_args, llm, &global]() -> int {
                return llm->parsed() ? run_llm(*args, *llm_args, global) : run_work(*args, global);
            }};
}

}  // namespace ceiling::cli
