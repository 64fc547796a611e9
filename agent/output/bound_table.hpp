#pragma once
// Terminal rendering of `ceiling bound`: the time floor of given work, and the ceilings of
// an LLM. Numbers to three significant digits; --json prints the exact values.

#include <ostream>

#include "diagnosis/llm_bound.hpp"
#include "diagnosis/work_bound.hpp"

namespace ceiling::output {

void render_work_bound(const WorkBound& b, std::ostream& out);
void render_llm_bound(const LlmBound& b, std::ostream& out);

}  // namespace ceiling::output
