#pragma once
// The Chrome/Perfetto trace of a `ceiling run` (--trace FILE), built from what each
// execution left: one process per execution (its pid), one track per thread, NVTX ranges as
// complete events, sampled series as counter tracks; per execution a process per GPU with a
// track per stream (kernels, copies, memsets) and the host's waits on the GPU; times relative
// to the first launch.

#include <string>

#include "agent/run/run_program.hpp"
#include "agent/store/chrome_trace.hpp"

namespace ceiling::measure {

store::ChromeTrace run_trace(const ProgramRun& run, const std::string& program);

}  // namespace ceiling::measure
