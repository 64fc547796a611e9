#pragma once
// Every quantity in a saved record or profile has a domain its unit implies: a duration,
// a byte count, a rate or a frequency is never negative; a share of time lies in [0, 1].
// Files are read back by `report` and `diff` and may have been edited or damaged, so each
// numeric field is checked against the domain its name says (units live in field names:
// `_s`, `_bytes`, `_hz`, `_per_s`; statistics such as `median` take their parent's unit)
// before anything is rendered from it.

#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace ceiling {

// The first numeric field outside its domain, as "path = value: why" (e.g.
// "executions[0].wall_s = -1: a duration cannot be negative"); nullopt when all are inside.
std::optional<std::string> find_out_of_domain(const nlohmann::json& j);

}  // namespace ceiling
