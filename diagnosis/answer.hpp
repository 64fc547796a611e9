#pragma once
// What a run's answer stands on, decided when the run is judged (agent/judge/answer.cpp) and
// kept in the record, so the default summary, `--detail`, the JSON and the HTML say the same:
// which region's verdict stands beside the run's, the first move and what it can bring, how
// close the longest judged region ran to its roof, and the budgets' stop-or-go.

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "diagnosis/decision.hpp"

namespace ceiling {

// A region the answer names, with its time per run over the run's wall time (above 1 where
// its instances ran in several processes at once).
struct AnswerRegion {
    std::string path;
    double wall_share = 0;
};

// Why a region stands beside the run's verdict: it held the model's heaviest work, or the
// run's own bound is unknown and it is the longest region whose bound was decided.
enum class StandIn { model, longest_judged };
inline constexpr std::array<std::string_view, 2> stand_in_names = {"model", "longest_judged"};

// The method's deliberate stop, where budgets were given: inside every one with margin to
// spare (stop), inside with too little margin, one missed, or not all measured.
enum class StopCall { stop, thin_margin, missed, unmeasured };
inline constexpr std::array<std::string_view, 4> stop_call_names = {"stop", "thin_margin", "missed",
                                                                    "unmeasured"};

struct RunAnswer {
    std::optional<AnswerRegion> stand_in;
    StandIn stand_in_kind = StandIn::model;
    // With longest_judged: a longer region not judged (its work unknown), and why not.
    std::optional<AnswerRegion> longer_unjudged;
    std::string longer_unjudged_why;
    // The run's first move, or the stand-in's where the run's bound is unknown; empty: none.
    std::string first_move;
    // What the first move can bring where the numbers give it; empty: not computable.
    std::string expected_gain;
    // The longest region compared with a roof, the roof it came closest to and how close.
    std::optional<AnswerRegion> headroom_region;
    std::string headroom_roof;
    std::optional<double> headroom_fraction;
    // The next lever in the method's order: the run's diagnosis first, else the headroom
    // region's.
    std::optional<LeverAdvice> next_lever;
    std::optional<StopCall> stop;  // absent: no budgets
    std::optional<double> margin;  // the smallest budget margin, where any was measured
};

void to_json(nlohmann::json& j, const RunAnswer& a);
void from_json(const nlohmann::json& j, RunAnswer& a);

}  // namespace ceiling
