#pragma once
// The one place that knows CUPTI's activity record layouts: turns a CUpti_Activity* into the
// plain records of gpu_activity.hpp. Built only with CUPTI (CEILING_HAVE_CUPTI). Tests build
// real CUpti_ActivityKernel10 / Memcpy6 / ... structures and feed them through here.

#include <cupti_activity.h>

#include "collectors/cupti/gpu_activity.hpp"

namespace ceiling::collectors::gpu {

// Appends the record to the log; kinds not decoded are counted in log.ignored_kinds.
void decode_activity(const CUpti_Activity* record, ActivityLog& log);

}  // namespace ceiling::collectors::gpu
