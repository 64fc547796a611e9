// `ceiling run --torch` after the program ran: torch range names read back, the record's torch
// regions labelled, model regions given their ops' work, the instrumentation's cost from
// instrumented and uninstrumented calls, and the per-op-type summary (agent/run/torch_run,
// agent/output/op_summary). Captures are built by hand, as the Python side names its ranges.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "agent/run/region.hpp"
#include "agent/run/torch_run.hpp"
#include "agent/judge/judge_record.hpp"
#include "agent/judge/op_types.hpp"
#include "agent/output/op_summary.hpp"
#include "agent/output/roofline_svg.hpp"
#include "agent/output/summary_json.hpp"
#include "agent/store/profile_store.hpp"

namespace ceiling {
namespace {

using measure::parse_torch_name;

TEST(TorchName, ReadsEachKindOfRange) {
    struct Case {
        const char* name;
        const char* role;
        const char* label;
        const char* kind;
        bool instrumented;
    };
    const Case cases[] = {
        {"MobileNetV2 (model)", "model", "MobileNetV2", "", true},
        {"ResNet#2 (model, uninstrumented)", "model", "ResNet#2", "", false},
        {"backward (model step)", "model", "backward", "", true},
        {"SGD.step (model step)", "model", "SGD.step", "", true},
        {"Resize (transform)", "transform", "Resize", "", true},
        {"PIL.Image.Image.resize()", "call", "PIL.Image.Image.resize()", "", true},
        {"aten.convolution [conv depthwise]", "op", "aten.convolution", "conv depthwise", true},
        {"torchvision.nms [no formula]", "op", "torchvision.nms", "no formula", true},
        {"features.3.conv.1 (Conv2d)", "module", "features.3.conv.1", "Conv2d", true},
        {"(Conv2d)", "module", "", "Conv2d", true},
        {"gemm 4096", "", "", "", true},
    };
    for (const auto& c : cases) {
        const auto n = parse_torch_name(c.name);
        EXPECT_EQ(n.role, c.role) << c.name;
        EXPECT_EQ(n.label, c.label) << c.name;
        EXPECT_EQ(n.kind, c.kind) << c.name;
        EXPECT_EQ(n.instrumented, c.instrumented) << c.name;
    }
    // Only module calls alternate instrumented and bare; training steps never run bare.
    EXPECT_TRUE(parse_torch_name("Net (model)").alternates);
    EXPECT_TRUE(parse_torch_name("Net (model, uninstrumented)").alternates);
    EXPECT_FALSE(parse_torch_name("backward (model step)").alternates);
}

// A capture written the way ceiling_torch/modules.py opens its ranges, on one thread.
class Capture {
public:
    // Opens a range at `t_ms` (the name's declared work, if any, parsed as region.cpp does).
    void push(const std::string& message, double t_ms, const std::string& domain = "torch") {
        const auto d = measure::parse_declared_work(message);
        measure::RegionInstance r;
        r.name = d.name;
        r.work = d.work;
        r.domain = domain;
        r.parent = open_.empty() ? measure::Interned() : open_.back().path;
        r.path = r.parent.empty() ? domain + "::" + r.name.str() : r.parent.str() + "/" + r.name.str();
        r.pid = 10;
        r.tid = 10;
        r.start_ns = ns(t_ms);
        r.depth = static_cast<int>(open_.size());
        open_.push_back(r);
    }
    void pop(double t_ms) {
        auto r = open_.back();
        open_.pop_back();
        r.end_ns = ns(t_ms);
        if (!open_.empty()) open_.back().child_ns += r.end_ns - r.start_ns;
        capture_.instances.push_back(r);
    }
    // An op range of `ms` starting at `t_ms`.
    void op(const std::string& message, double t_ms, double ms) {
        push(message, t_ms);
        pop(t_ms + ms);
    }
    measure::NvtxCapture done() {
        auto c = capture_;
        std::sort(c.instances.begin(), c.instances.end(), [](const auto& a, const auto& b) {
            return a.start_ns != b.start_ns ? a.start_ns < b.start_ns
                                            : a.end_ns - a.start_ns > b.end_ns - b.start_ns;
        });
        return c;
    }

private:
    static std::int64_t ns(double ms) { return static_cast<std::int64_t>(ms * 1e6); }
    std::vector<measure::RegionInstance> open_;
    measure::NvtxCapture capture_;
};

const char* conv_dw = "aten.convolution [conv depthwise] {ops=1M bytes=1M working_set=1M}";
const char* conv_pw = "aten.convolution [conv pointwise] {ops=20M bytes=1M working_set=1M}";

// One instrumented call of "Net" at t: a module holding a depthwise and a pointwise conv
// (2 ms and 3 ms), and an op without a formula (1 ms); 10 ms in all.
void instrumented_call(Capture& c, double t) {
    c.push("Net (model)", t);
    c.push("block (Block)", t + 1);
    c.op(conv_dw, t + 1, 2);
    c.op(conv_pw, t + 3.5, 3);
    c.pop(t + 7);
    c.op("aten.nonzero [no formula]", t + 8, 1);
    c.pop(t + 10);
}

struct TorchRecord {
    measure::ProgramRun run;
    RunRecord record;
};

// The torch record of one execution of `wall_s` that captured `c`.
TorchRecord recorded(Capture& c, double wall_s) {
    TorchRecord t;
    measure::ExecutionData x;
    x.capture = c.done();
    x.execution.wall_s = wall_s;
    t.run.executions.push_back(x);
    const std::optional<std::regex> model(std::regex(measure::torch_model_regex));
    t.record.regions = measure::aggregate_regions({&t.run.executions[0].capture}, model);
    t.record.executions.push_back(x.execution);
    measure::add_torch_to_record(t.run, t.record);
    return t;
}

// Calls of Net: instrumented (first), uninstrumented (6 ms), instrumented, then an NMS outside
// the model and a program range in the default domain.
TorchRecord three_calls() {
    Capture c;
    instrumented_call(c, 0);
    c.push("Net (model, uninstrumented)", 20);
    c.pop(26);
    instrumented_call(c, 30);
    c.op("torchvision.nms [no formula]", 50, 40);
    c.push("decode", 100, "");
    c.pop(120);
    return recorded(c, 0.2);
}

const RecordedRegion& named(const RunRecord& r, const std::string& name) {
    for (const auto& g : r.regions)
        if (g.name == name) return g;
    throw std::runtime_error("no region " + name);
}

std::optional<double> counter(const RecordedRegion& r, const std::string& name) {
    for (const auto& c : r.measurement.counters)
        if (c.name == name) return c.value;
    return std::nullopt;
}

TEST(TorchRecord, LabelsTorchRegionsOnly) {
    const auto t = three_calls();
    EXPECT_EQ(named(t.record, "aten.convolution [conv depthwise]").labels.at("op_class"), "conv depthwise");
    EXPECT_EQ(named(t.record, "aten.convolution [conv depthwise]").labels.at("op"), "aten.convolution");
    EXPECT_NE(named(t.record, "aten.convolution [conv depthwise]").labels.at("time").find("instrumentation"),
              std::string::npos);
    EXPECT_EQ(named(t.record, "block (Block)").labels.at("torch"), "module");
    EXPECT_EQ(named(t.record, "Net (model)").labels.at("torch"), "model");
    EXPECT_TRUE(named(t.record, "Net (model, uninstrumented)").labels.count("instrumented"));
    EXPECT_TRUE(named(t.record, "decode").labels.empty());  // the program's own range
    EXPECT_TRUE(named(t.record, "Net (model)").model);
    EXPECT_TRUE(named(t.record, "aten.convolution [conv pointwise]").model);
    EXPECT_FALSE(named(t.record, "torchvision.nms [no formula]").model);
}

TEST(TorchRecord, ModelWorkIsItsOpsWorkPerCall) {
    const auto t = three_calls();
    const auto& net = named(t.record, "Net (model)");
    ASSERT_TRUE(net.measurement.work);
    EXPECT_DOUBLE_EQ(net.measurement.work->ops, 21e6);  // per call, the op without a formula left out
    EXPECT_DOUBLE_EQ(net.measurement.work->compulsory_bytes, 2e6);
    EXPECT_NE(net.labels.at("work").find("without a formula"), std::string::npos);
    // The uninstrumented calls ran the same model: same work, said where it came from.
    const auto& bare = named(t.record, "Net (model, uninstrumented)");
    ASSERT_TRUE(bare.measurement.work);
    EXPECT_DOUBLE_EQ(bare.measurement.work->ops, 21e6);
    EXPECT_NE(bare.labels.at("work").find("instrumented calls"), std::string::npos);
}

// Ops without a formula doing a quarter of its op time or more (an eval-mode
// TransformerEncoder's fused layers, before they had one) leave the model's work unknown: the
// sum of the rest read "0 FLOPs, latency bound at 0 % of every roof".
TEST(TorchRecord, OpsWithoutAFormulaDoingMuchOfItsTimeLeaveItsWorkUnknown) {
    Capture c;
    c.push("Net (model)", 0);
    c.op(conv_dw, 0, 1);
    c.op("aten.fused_thing [no formula]", 1, 5);
    c.pop(6);
    const TorchRecord t = recorded(c, 0.01);
    const auto& net = named(t.record, "Net (model)");
    EXPECT_FALSE(net.measurement.work);
    const auto why = net.labels.find(work_unknown_label);
    ASSERT_NE(why, net.labels.end());
    EXPECT_NE(why->second.find("(aten.fused_thing) took its 83% of op time"), std::string::npos)
        << why->second;
}

TEST(TorchRecord, CostFromAlternatingCalls) {
    const auto t = three_calls();
    const auto& net = named(t.record, "Net (model)");
    EXPECT_EQ(counter(net, "calls_instrumented"), 1.0);  // the first call is kept apart
    EXPECT_EQ(counter(net, "calls_uninstrumented"), 1.0);
    EXPECT_NEAR(*counter(net, "instrumented_call_s"), 0.010, 1e-9);
    EXPECT_NEAR(*counter(net, "uninstrumented_call_s"), 0.006, 1e-9);
    EXPECT_NEAR(*counter(net, "op_time_per_call_s"), 0.006, 1e-9);  // 2 + 3 + 1 ms of ops
    EXPECT_EQ(counter(net, "op_ranges_per_call"), 3.0);
    for (const auto& n : t.record.notes) EXPECT_EQ(n.find("was called"), std::string::npos) << n;
    bool listed = false;
    for (const auto& n : t.record.notes) listed = listed || n.find("torchvision.nms") != std::string::npos;
    EXPECT_TRUE(listed);
}

TEST(TorchRecord, FewCallsSayWhyCostIsUnmeasured) {
    Capture c;
    instrumented_call(c, 0);
    measure::ProgramRun run;
    measure::ExecutionData x;
    x.capture = c.done();
    run.executions.push_back(x);
    RunRecord record;
    record.regions = measure::aggregate_regions({&run.executions[0].capture},
                                                std::regex(measure::torch_model_regex));
    measure::add_torch_to_record(run, record);
    bool said = false;
    for (const auto& n : record.notes) said = said || n.find("Net was called 1 time") != std::string::npos;
    EXPECT_TRUE(said);
    EXPECT_FALSE(counter(named(record, "Net (model)"), "uninstrumented_call_s"));
}

TEST(TorchRecord, NoTorchRegionsIsSaid) {
    measure::ProgramRun run;
    run.executions.emplace_back();
    RunRecord record;
    measure::add_torch_to_record(run, record);
    ASSERT_EQ(record.notes.size(), 1u);
    EXPECT_NE(record.notes[0].find("never imported torch"), std::string::npos);
}

TEST(OpSummary, GroupsModelOpsByTypeAndJudgesThem) {
    auto t = three_calls();
    t.record.machine_profile = store::load_profile(std::string(CEILING_TEST_DATA) + "/profile_vm_quick.json");
    const auto s = judge::summarise_ops(t.record);
    ASSERT_EQ(s.types.size(), 3u);  // pointwise, depthwise, no formula: longest first
    EXPECT_EQ(s.types[0].name, "conv pointwise");
    EXPECT_EQ(s.types[0].calls, 2.0);
    EXPECT_NEAR(s.types[0].time_s, 0.006, 1e-9);
    EXPECT_DOUBLE_EQ(*s.types[0].ops, 40e6);
    EXPECT_EQ(s.types[2].name, "no formula");
    EXPECT_FALSE(s.types[2].ops);  // unknown, never 0
    const auto& dw = s.types[1];
    ASSERT_TRUE(dw.judged);
    ASSERT_TRUE(s.types[0].judged);
    auto compute = [](const OpTypeRow& r) {
        for (const auto& c : r.judged->roofs)
            if (c.kind == RoofKind::compute && c.fraction) return *c.fraction;
        return -1.0;
    };
    EXPECT_LT(compute(dw), compute(s.types[0]));
    // The ops without a formula, by name, inside the model or not.
    ASSERT_EQ(s.unformulated.size(), 2u);
    EXPECT_EQ(s.unformulated[0].name, "torchvision.nms");
    ASSERT_EQ(s.models.size(), 2u);  // instrumented and uninstrumented calls of Net
    ASSERT_EQ(s.costs.size(), 1u);
    EXPECT_EQ(s.costs[0].model, "Net (model)");
}

// An op type is timed by its calls' medians, unless the calls of an op differ in size: then
// by their total time (Measurement::work_spread), as a region is judged.
TEST(OpSummary, OpsWhoseCallsDifferInSizeCountTheirTotalTime) {
    auto t = three_calls();
    t.record.machine_profile =
        store::load_profile(std::string(CEILING_TEST_DATA) + "/profile_vm_quick.json");
    for (auto& r : t.record.regions)
        if (r.name == "aten.convolution [conv pointwise]") {
            // 6 ms in all over its two calls per run; a median call of 1 ms.
            r.measurement.duration_s = summarize({0.001, 0.001, 0.010});
        }
    const auto rate = [&] {
        const auto s = judge::summarise_ops(t.record);
        for (const auto& c : s.types.at(0).judged.value().roofs)
            if (c.kind == RoofKind::compute && c.achieved_per_s) return *c.achieved_per_s;
        return -1.0;
    };
    const double by_median = rate();
    for (auto& r : t.record.regions)
        if (r.name == "aten.convolution [conv pointwise]") r.measurement.work_spread = 5.0;
    const double by_total = rate();
    ASSERT_GT(by_total, 0);
    EXPECT_NEAR(by_median / by_total, 3.0, 1e-9);  // 2 x 1 ms against 6 ms
}

TEST(OpSummary, HidesOnlyOpsAndModulesInsideModels) {
    const auto t = three_calls();
    EXPECT_TRUE(summarised_by_ops(named(t.record, "aten.convolution [conv depthwise]")));
    EXPECT_TRUE(summarised_by_ops(named(t.record, "block (Block)")));
    EXPECT_FALSE(summarised_by_ops(named(t.record, "Net (model)")));
    EXPECT_FALSE(summarised_by_ops(named(t.record, "torchvision.nms [no formula]")));
    EXPECT_FALSE(summarised_by_ops(named(t.record, "decode")));
}

// A module's work is the sum of its ops', as a model's: under --torch nothing is the user's to
// declare, and no torch region's verdict asks for it.
TEST(TorchRecord, AModulesWorkIsItsOpsAndNoTorchRegionIsAskedToDeclareWork) {
    auto t = three_calls();
    const auto& block = named(t.record, "block (Block)");
    ASSERT_TRUE(block.measurement.work);
    EXPECT_DOUBLE_EQ(block.measurement.work->ops, 21e6);  // 1 M depthwise + 20 M pointwise per call
    EXPECT_DOUBLE_EQ(block.measurement.work->compulsory_bytes, 2e6);
    t.record.machine_profile = store::load_profile(std::string(CEILING_TEST_DATA) + "/profile_vm_quick.json");
    judge::judge_record(t.record);
    int torch_judged = 0;
    for (const auto& v : t.record.region_diagnoses) {
        const RecordedRegion* reg = t.record.region(v.path);
        if (!reg || !reg->labels.count(torch_role_label)) continue;
        ++torch_judged;
        EXPECT_EQ(v.diagnosis.first_move.find("declare"), std::string::npos) << v.path << ": " << v.diagnosis.first_move;
        EXPECT_EQ(v.diagnosis.observation.find("declare"), std::string::npos) << v.path << ": " << v.diagnosis.observation;
    }
    EXPECT_GT(torch_judged, 3);
    const auto* nonzero = t.record.region(named(t.record, "aten.nonzero [no formula]").path);
    ASSERT_TRUE(nonzero);
    for (const auto& v : t.record.region_diagnoses)
        if (v.path == nonzero->path)
            EXPECT_NE(v.diagnosis.observation.find("no work formula for aten.nonzero"), std::string::npos)
                << v.diagnosis.observation;
}

// The op types' verdicts are the record's, not only the text table's: judged with the rest,
// kept through a save and load, and in the JSON summary.
TEST(OpSummary, TheVerdictsPerOpTypeAreInTheRecordAndTheJsonSummary) {
    auto t = three_calls();
    t.record.machine_profile = store::load_profile(std::string(CEILING_TEST_DATA) + "/profile_vm_quick.json");
    judge::judge_record(t.record);
    ASSERT_EQ(t.record.op_summary.types.size(), 3u);
    ASSERT_TRUE(t.record.op_summary.types[0].judged);
    const RunRecord loaded = parse_run_record(nlohmann::json(t.record).dump());
    ASSERT_EQ(loaded.op_summary.types.size(), 3u);
    EXPECT_EQ(loaded.op_summary.types[0].name, "conv pointwise");
    EXPECT_EQ(loaded.op_summary.types[0].judged->bound, t.record.op_summary.types[0].judged->bound);
    EXPECT_FALSE(loaded.op_summary.types[2].ops);  // no formula: unknown, never 0
    const auto j = output::summary_json(t.record, "r.json");
    ASSERT_TRUE(j.contains("op_types"));
    EXPECT_EQ(j["op_types"][0]["name"], "conv pointwise");
    EXPECT_FALSE(j["op_types"][0]["diagnosis"].is_null());
    EXPECT_TRUE(j["op_types"][2]["ops_per_run"].is_null());
}

// A torch run's roofline: one point per judged op type, each its own colour, not one per op
// range (62 same-coloured points of one model).
TEST(OpSummary, ARunsRooflineHasAPointPerOpType) {
    auto t = three_calls();
    t.record.kind = RecordKind::run;
    t.record.machine_profile = store::load_profile(std::string(CEILING_TEST_DATA) + "/profile_vm_quick.json");
    judge::judge_record(t.record);
    const auto pts = output::roofline_points(t.record);
    ASSERT_EQ(pts.size(), 2u);  // conv pointwise and depthwise; "no formula" has no work
    EXPECT_EQ(pts[0].label, "conv pointwise");
    EXPECT_EQ(pts[1].label, "conv depthwise");
    EXPECT_NE(pts[0].family, pts[1].family);
    EXPECT_TRUE(pts[0].judged_per_s);
}

std::string rendered_cost(double op_time_s) {
    auto t = three_calls();
    for (auto& r : t.record.regions)
        for (auto& c : r.measurement.counters)
            if (c.name == "op_time_per_call_s") c.value = op_time_s;
    t.record.op_summary = judge::summarise_ops(t.record);  // judge_record's part
    std::ostringstream out;
    output::render_op_summary(t.record, out);
    return out.str();
}

TEST(OpSummary, SaysWhetherOpTimesAddUpToTheBareCall) {
    // Bare call 6 ms, instrumented 10 ms: +67%, 4 ms over 3 op ranges.
    const std::string within = rendered_cost(0.0063);
    EXPECT_NE(within.find("instrumentation (Net (model)): call 10.0 ms instrumented vs 6.0 ms uninstrumented"),
              std::string::npos)
        << within;
    EXPECT_NE(within.find("+67%"), std::string::npos) << within;
    EXPECT_NE(within.find("includes its share"), std::string::npos) << within;
    EXPECT_NE(rendered_cost(0.009).find("more, because"), std::string::npos);
    EXPECT_NE(rendered_cost(0.003).find("less, because"), std::string::npos);
}

}  // namespace
}  // namespace ceiling
