#pragma once
// Where run records meet the diagnosis engine: `run` judges a fresh record, `report`
// re-judges a saved one against another machine profile or other thresholds, and `diff`
// compares the verdicts. Nothing here decides anything: this file only turns a record's
// measurements into the engine's inputs (RunInputs, BudgetActuals, Measurements with
// work) and stores what the engine concluded.

#include <optional>
#include <string>

#include "diagnosis/run_record.hpp"

namespace ceiling::judge {

// Fills record.diagnosis, record.region_diagnoses and record.budget_checks from the record's
// measurements, its machine profile (when it has one), record.thresholds and
// record.budgets. Regions and kernels with known work are placed on the roofline; the run
// as a whole gets the engine's run diagnosis ("not the model", capacity, system evidence,
// or what the model's heaviest region is bound by).
void judge_record(RunRecord& record);

// The engine's budgets_met over the record's checks: true all passed, false one failed,
// nullopt none judged or some unknown.
std::optional<bool> budgets_met(const RunRecord& record);

// What the record's answer stands on (diagnosis/answer.hpp), from its verdicts: judge_record
// keeps it in record.answer.
RunAnswer decide_answer(const RunRecord& record);


}  // namespace ceiling::judge
