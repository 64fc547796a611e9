#pragma once
// `ceiling diff BEFORE AFTER`: per region or kernel, the time ratio with both sides' spreads
// (a change smaller than the noise is flagged as such, never called a speed-up), achieved
// rate changes where work is known, bound changes, and budgets that flipped.

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "diagnosis/run_record.hpp"

namespace ceiling::output {

enum class Change { faster, slower, within_noise, noise_unknown, only_before, only_after };

struct DiffRow {
    std::string name;  // "whole run", a region path or a kernel name
    std::optional<double> before_s;  // median time per run (regions: total per execution)
    std::optional<double> after_s;
    std::optional<double> ratio;     // after / before
    std::optional<double> noise;     // the larger relative spread of the two sides
    std::size_t before_count = 0;    // samples behind each side
    std::size_t after_count = 0;
    Change change = Change::noise_unknown;
    std::optional<double> rate_ratio;  // achieved rate after / before, when work is known
    std::string bound_before;          // from the records' diagnoses; empty when not judged
    std::string bound_after;
};

struct RecordDiff {
    std::vector<DiffRow> rows;
    std::vector<std::string> budget_flips;  // "latency: passed -> missed"
    std::vector<std::string> notes;         // different programs, hosts, profiles
};

// A change counts when |ratio - 1| exceeds both sides' relative spread ((p90 - p10) /
// median) and 1% (below which timer and scheduling jitter dominate even without spread).
inline constexpr double min_significant_change = 0.01;

RecordDiff diff_records(const RunRecord& before, const RunRecord& after);

// The rows that got slower beyond both sides' noise and by more than `threshold` (a
// fraction: 0.05 is 5 %; 0: any change the noise does not explain): what a CI gate fails on.
std::vector<const DiffRow*> regressions(const RecordDiff& diff, double threshold);
void render_diff(const RecordDiff& diff, const std::string& before_name,
                 const std::string& after_name, std::ostream& out);

}  // namespace ceiling::output
