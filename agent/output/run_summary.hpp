#pragma once
// The terminal summary of a run record: how the program ended, wall time over repeats, the
// system facts (CPU, memory, switches, faults), where the time went by region, the
// diagnosis and the budgets. `run` prints it on stderr (the program owns stdout),
// `report` on stdout. Several records (the ranks of one job) get a cross-rank summary.

#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "diagnosis/run_record.hpp"

namespace ceiling::output {

void render_run_summary(const RunRecord& record, std::ostream& out);

// One row per record (rank), then the slowest rank and the spread across ranks, overall
// and for each region.
void render_rank_summary(const std::vector<RunRecord>& records,
                         const std::vector<std::string>& names, std::ostream& out);

// "./train --epochs 1" (quoted where a shell would need it), for headings.
std::string command_line(const std::vector<std::string>& argv);

// A counter's value summed over the record's timed executions (peaks: the largest);
// nullopt when no execution measured it.
std::optional<double> counter_total(const RunRecord& record, const std::string& name);

// The depth of a region in its record's nesting (0 at top level).
int region_depth(const RunRecord& record, const RecordedRegion& region);

// A region's busy cores for its table's cell: the mean, and beside it the cores it held at
// once where it was judged at them ("1.34 (1.98 held)", agent/judge/judge_region.cpp); "-" unknown.
std::string busy_cores_text(const RunRecord& record, const RecordedRegion& region);

// The record's regions depth first: each region right after its parent, siblings in the
// record's order (a region whose parent is not in the record is a root), with its depth.
struct RegionRow {
    const RecordedRegion* region = nullptr;
    int depth = 0;
};
std::vector<RegionRow> region_tree(const RunRecord& record);

}  // namespace ceiling::output
