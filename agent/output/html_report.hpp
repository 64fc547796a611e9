#pragma once
// `report --html`: one self-contained page (inline CSS and SVG; no scripts, no fonts, no
// network fetches) with the summary, the roofline chart and the region table of one or
// several run records.

#include <string>
#include <vector>

#include "diagnosis/run_record.hpp"

namespace ceiling::output {

// `names` label each record (usually the file names). The roofline uses the first record's
// machine profile; regions without declared or analytic work are listed, not plotted.
std::string render_html_report(const std::vector<RunRecord>& records, const std::vector<std::string>& names);

}  // namespace ceiling::output
