// What the answer stands on (diagnosis/answer.hpp), decided here beside the verdicts so that
// no renderer chooses: the stand-in region, the first move and its expected gain, the
// longest judged region's headroom, the next lever and the budgets' stop-or-go.
#include <algorithm>
#include <span>

#include "agent/judge/judge_record.hpp"
#include "diagnosis/budget.hpp"
#include "diagnosis/format.hpp"
#include "diagnosis/statistics.hpp"

namespace ceiling::judge {
namespace {

// Its time per run over the wall time: open time (instances side by side in one process
// counted once).
AnswerRegion answer_region(const RunRecord& r, const RecordedRegion& g) {
    const double wall = r.whole.duration_s.count > 0 ? r.whole.duration_s.mean : 0.0;
    return {g.path, wall > 0 ? g.open_s_per_execution() / wall : 0.0};
}

// The longest region (open time) with a diagnosis, or with a decided bound.
const RegionVerdict* longest_diagnosed(const RunRecord& r, bool bounded) {
    const RegionVerdict* best = nullptr;
    const RecordedRegion* best_region = nullptr;
    if (!(r.whole.duration_s.count > 0 && r.whole.duration_s.mean > 0)) return best;
    for (const auto& v : r.region_diagnoses) {
        const RecordedRegion* g = r.region(v.path);
        if (!g || (bounded && !v.diagnosis.bound)) continue;
        if (!best || g->open_s_per_execution() > best_region->open_s_per_execution())
            best = &v, best_region = g;
    }
    return best;
}

// The comparison with the larger fraction: the roof the work came closest to.
const RoofComparison* closest_roof(const Diagnosis& d) {
    const RoofComparison* best = nullptr;
    for (const auto& c : d.roofs)
        if (c.fraction && (!best || *c.fraction > *best->fraction)) best = &c;
    return best;
}

// Whose verdict stands beside the run's: the model's region, else (the run's bound unknown)
// its longest judged region, with a longer one that could not be judged named beside it.
void choose_stand_in(const RunRecord& r, RunAnswer& a) {
    if (const RecordedRegion* m = r.model_region.empty() ? nullptr : r.region(r.model_region)) {
        a.stand_in = answer_region(r, *m);
        a.stand_in_kind = StandIn::model;
        return;
    }
    if (!r.diagnosis || r.diagnosis->bound) return;
    const RegionVerdict* judged = longest_diagnosed(r, true);
    if (!judged) return;
    a.stand_in = answer_region(r, *r.region(judged->path));
    a.stand_in_kind = StandIn::longest_judged;
    // A longer region not judged (a torch model whose fused ops have no formula) comes
    // first: the judged one may be a sliver of the run.
    if (const RegionVerdict* longest = longest_diagnosed(r, false); longest && longest != judged) {
        a.longer_unjudged = answer_region(r, *r.region(longest->path));
        a.longer_unjudged_why = longest->diagnosis.observation;
    }
}

// What the first move can bring where the numbers give it: the model's share of the time
// (what is left to win outside it), or how far the model's work is from its roof.
std::string expected_gain(const Diagnosis& run) {
    if (run.bound == Bound::not_the_model && run.model_share)
        return "the model is " + percent(run.model_share->share) +
               " of the wall time: the rest is where the time goes";
    if (run.bound == Bound::compute || run.bound == Bound::bandwidth)
        if (const RoofComparison* c = closest_roof(run); c && *c->fraction > 0 && *c->fraction < 1)
            return "the model's work up to " + fixed(1 / *c->fraction, 1) + "x faster at its roof";
    return "";
}

// The longest region compared with a roof (time per run), and how close it came.
void choose_headroom(const RunRecord& r, RunAnswer& a) {
    double longest = -1;
    const RegionVerdict* judged = nullptr;
    for (const auto& v : r.region_diagnoses) {
        const RecordedRegion* g = r.region(v.path);
        if (!g || v.diagnosis.roofs.empty() || g->total_s_per_execution.empty()) continue;
        const double t = mean(g->total_s_per_execution);
        if (t > longest) longest = t, judged = &v;
    }
    if (!judged) return;
    a.headroom_region = answer_region(r, *r.region(judged->path));
    if (const RoofComparison* c = closest_roof(judged->diagnosis)) {
        a.headroom_roof = c->kind == RoofKind::compute ? c->roof : c->level;
        a.headroom_fraction = c->fraction;
    }
}

// The next lever, in the method's order: the run's own diagnosis first (it holds the
// system), else the headroom region's.
void choose_next_lever(const RunRecord& r, RunAnswer& a) {
    const Diagnosis* d = r.diagnosis && !r.diagnosis->levers.empty() ? &*r.diagnosis : nullptr;
    if (!d && a.headroom_region)
        if (const Diagnosis* h = r.diagnosis_of(a.headroom_region->path); h && !h->levers.empty()) d = h;
    if (d) a.next_lever = d->levers.front();
}

// The method's deliberate stop: inside every budget with margin to spare, stop; otherwise
// the next lever.
void call_stop(const RunRecord& r, RunAnswer& a) {
    if (r.budget_checks.empty()) return;
    const auto met = budgets_met(std::span<const BudgetCheck>(r.budget_checks));
    for (const auto& c : r.budget_checks)
        if (c.margin) a.margin = a.margin ? std::min(*a.margin, *c.margin) : *c.margin;
    if (met == false) a.stop = StopCall::missed;
    else if (!met || !a.margin) a.stop = StopCall::unmeasured;
    else a.stop = *a.margin >= r.thresholds.stop_margin ? StopCall::stop : StopCall::thin_margin;
}

}  // namespace

RunAnswer decide_answer(const RunRecord& record) {
    RunAnswer a;
    choose_stand_in(record, a);
    if (record.diagnosis) {
        const Diagnosis& run = *record.diagnosis;
        a.first_move = run.first_move;
        // An unknown run whose stand-in was judged moves by the stand-in's move.
        if (!run.bound && a.stand_in)
            if (const Diagnosis* s = record.diagnosis_of(a.stand_in->path)) a.first_move = s->first_move;
        a.expected_gain = expected_gain(run);
    }
    choose_headroom(record, a);
    choose_next_lever(record, a);
    call_stop(record, a);
    return a;
}

}  // namespace ceiling::judge
