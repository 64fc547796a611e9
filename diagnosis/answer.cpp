#include "diagnosis/answer.hpp"

#include <nlohmann/json.hpp>

#include "diagnosis/diagnosis.hpp"
#include "diagnosis/json_support.hpp"

namespace ceiling {
namespace {

nlohmann::json region_json(const std::optional<AnswerRegion>& r) {
    if (!r) return nullptr;
    return {{"path", r->path}, {"wall_share", r->wall_share}};
}

std::optional<AnswerRegion> region_from(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    return AnswerRegion{it->at("path").get<std::string>(), it->at("wall_share").get<double>()};
}

nlohmann::json text_or_null(const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); }

std::string text_from(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    return it == j.end() || it->is_null() ? std::string() : it->get<std::string>();
}

}  // namespace

void to_json(nlohmann::json& j, const RunAnswer& a) {
    j = {{"stand_in", region_json(a.stand_in)},
         {"stand_in_kind", std::string(enum_name(a.stand_in_kind, stand_in_names))},
         {"longer_unjudged", region_json(a.longer_unjudged)},
         {"longer_unjudged_why", text_or_null(a.longer_unjudged_why)},
         {"first_move", text_or_null(a.first_move)},
         {"expected_gain", text_or_null(a.expected_gain)},
         {"headroom_region", region_json(a.headroom_region)},
         {"headroom_roof", text_or_null(a.headroom_roof)},
         {"headroom_fraction", a.headroom_fraction ? nlohmann::json(*a.headroom_fraction) : nullptr},
         {"next_lever", a.next_lever ? nlohmann::json(*a.next_lever) : nlohmann::json(nullptr)},
         {"stop", a.stop ? nlohmann::json(std::string(enum_name(*a.stop, stop_call_names)))
                         : nlohmann::json(nullptr)},
         {"margin", a.margin ? nlohmann::json(*a.margin) : nullptr}};
}

void from_json(const nlohmann::json& j, RunAnswer& a) {
    a = RunAnswer{};
    a.stand_in = region_from(j, "stand_in");
    if (const auto k = j.find("stand_in_kind"); k != j.end())
        a.stand_in_kind = enum_from_json<StandIn>(*k, stand_in_names, "stand-in kind");
    a.longer_unjudged = region_from(j, "longer_unjudged");
    a.longer_unjudged_why = text_from(j, "longer_unjudged_why");
    a.first_move = text_from(j, "first_move");
    a.expected_gain = text_from(j, "expected_gain");
    a.headroom_region = region_from(j, "headroom_region");
    a.headroom_roof = text_from(j, "headroom_roof");
    get_optional(j, "headroom_fraction", a.headroom_fraction);
    get_optional(j, "next_lever", a.next_lever);
    if (const auto s = j.find("stop"); s != j.end() && !s->is_null())
        a.stop = enum_from_json<StopCall>(*s, stop_call_names, "stop call");
    get_optional(j, "margin", a.margin);
}

}  // namespace ceiling
