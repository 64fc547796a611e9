#pragma once
// Machine-readable output: what the text summaries say, as data, the way perf stat offers
// -j and -x. `run --json`, `report --json` and `suite --json` print summary_json; `diff
// --json` prints diff_json; `--csv FILE` writes the region (run) or kernel (suite) table.
// Field names carry their unit (_s, _bytes, _per_s); what was not measured is null (JSON)
// or an empty cell (CSV), never 0.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/output/diff.hpp"
#include "diagnosis/run_record.hpp"

namespace ceiling::output {

inline constexpr int summary_schema_version = 1;

// One record's summary: command, how it ended, wall time, the run's diagnosis, every region
// or kernel with its own, the budget checks, roof checks and notes. `record_path` may be
// empty (not written).
nlohmann::json summary_json(const RunRecord& record, const std::string& record_path);

// The diff's rows (ratio, noise, change, rate, bound on each side), flipped budgets, notes.
nlohmann::json diff_json(const RecordDiff& diff, const std::string& before, const std::string& after);

// The region or kernel table, one row per region, RFC 4180 quoting; a header line first.
std::string regions_csv(const RunRecord& record);

}  // namespace ceiling::output
