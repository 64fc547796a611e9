#pragma once
// `ceiling run --torch -- python3 SCRIPT.py`: an unmodified PyTorch program measured op by
// op. The program's interpreter loads sitecustomize.py from the folder this puts first on
// PYTHONPATH (agent/inject/python/); once the program imports torch, every ATen operator
// becomes an NVTX range declaring its work, nested under the nn.Module call that ran it,
// in NVTX domain "torch" (range names: agent/inject/python/ceiling_torch/modules.py). Here:
// the environment before the run, then the record's torch regions labelled, each model
// region given its ops' work, and the instrumentation's cost measured in the same run.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "agent/run/run_program.hpp"
#include "diagnosis/run_record.hpp"

namespace ceiling::measure {

// The model regions of a torch run: outermost module calls and backward passes, and what
// they enclose (a search over name or path, like --model-regions).
inline constexpr const char* torch_model_regex = R"(^torch::[^/]* \(model(, uninstrumented| step)?\)(/|$))";

// Region labels set by add_torch_to_record: torch_role_label and the others, with the
// record (diagnosis/run_record.hpp), where the judges read them.

// What a torch range's name says about it (the naming of ceiling_torch/modules.py).
struct TorchName {
    std::string role;           // model, transform, module, op, call; empty: not ours
    std::string label;          // model: "MobileNetV2"; module: "features.3.conv.1"; op: "aten.add.Tensor"
    std::string kind;           // op: its class ("conv depthwise", "no formula"); module: its class
    bool instrumented = true;   // model: false for the calls run without per-op ranges
    bool alternates = false;    // model: a module call (backward passes and optimizer steps never run bare)
};
TorchName parse_torch_name(const std::string& name);

// The instrumentation's folder (sitecustomize.py, ceiling_torch/, libceiling_torch_nvtx.so):
// $CEILING_TORCH_DIR, else torch/ beside the ceiling binary (build tree), else
// ../lib/ceiling/torch/ next to it (installed).
std::optional<std::filesystem::path> find_torch_instrumentation();

// Before the run: PYTHONPATH in ceiling's own environment (the program inherits it) gets the
// instrumentation's folder first and CEILING_TORCH_NVTX_LIB names its NVTX library; without
// --model-regions the model is torch_model_regex. Throws std::runtime_error (one line) when
// the instrumentation is missing.
void prepare_torch_run(RunPlan& plan, RunRecord& record);

// After add_to_record: labels the torch regions, gives each model region the declared work
// of the ops inside it (their sum per call, said so in the label "work"), adds the
// instrumentation's cost (instrumented and uninstrumented calls of the same model, and the
// sum of op times inside instrumented ones) as counters of the model's region, and notes.
void add_torch_to_record(const ProgramRun& run, RunRecord& record);

// The op observer (ceiling_torch/observer.py): C++ against the program's own torch, built
// once per torch version. A run whose torch had none took its ops through the dispatch mode
// and said so with a mark "observer to build: PYTHON"; ceiling builds it after the run,
// outside the measured program, for the next runs.
inline constexpr const char* observer_build_mark = "observer to build: ";
// The Pythons to build for, each once (absolute paths of executables named python*).
std::vector<std::string> observers_to_build(const ProgramRun& run);
struct ObserverBuild {
    bool built = false;
    std::string message;  // built: where it is kept; else why not (one line)
};
ObserverBuild build_torch_observer(const std::string& python);

}  // namespace ceiling::measure
