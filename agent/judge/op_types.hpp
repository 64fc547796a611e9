#pragma once
// Judging a PyTorch run's ops by type: the record's torch op regions inside models grouped by
// class, each class judged as one piece of work like a region (diagnosis/op_summary.hpp).

#include "diagnosis/run_record.hpp"

namespace ceiling::judge {

// Empty when the record has no torch regions. judge_record stores it in record.op_summary.
OpSummary summarise_ops(const RunRecord& record);

}  // namespace ceiling::judge
